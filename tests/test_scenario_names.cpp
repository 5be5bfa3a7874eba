// Scenarios by name (sim/scenario_names.h) and the data directory they are found in
// (core/io/data_dir.h): a name is a shipped scenario beside the binary, anything that
// reads as a path is used as given, an unknown name is one error that lists the names.
// This test binary sits in BUILD/tests, so its data directory is BUILD/share/dsgd.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/io/data_dir.h"
#include "sim/scenario.h"
#include "sim/scenario_names.h"

using namespace dsgd;
namespace fs = std::filesystem;

TEST_CASE("the data directory is found beside the binary", "[scenario][install]") {
  const std::vector<fs::path> places = data_dir_candidates();
  REQUIRE(places.size() == 2);
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe").parent_path();
  CHECK(places[0] == (exe_dir.parent_path() / "share/dsgd").lexically_normal());
  CHECK(places[1] == exe_dir / "share/dsgd");
  const fs::path dir = data_dir();
  CHECK(fs::is_regular_file(dir / "lessons/01-ranks/README.md"));
  CHECK(fs::is_regular_file(dir / "scenarios/straggler.toml"));
  CHECK(fs::is_regular_file(dir / "include/core/comm/communicator.h"));
}

TEST_CASE("a shipped scenario is found by name", "[scenario][install]") {
  const std::vector<std::string> names = sim::scenario_names();
  CHECK(names == std::vector<std::string>{"classroom-lan", "crash", "flaky-wan", "partition",
                                          "straggler", "two-racks"});
  const fs::path file = sim::resolve_scenario("straggler");
  CHECK(file == data_dir() / "scenarios/straggler.toml");
  const sim::Scenario s = sim::load_scenario("straggler");
  CHECK(s.nodes == 4);
  CHECK(s.faults.at(2).straggler == 3.0);
}

TEST_CASE("a path is used as given, and an unknown name lists the names", "[scenario][install]") {
  CHECK(sim::resolve_scenario("my.toml") == "my.toml");
  CHECK(sim::resolve_scenario("dir/straggler") == "dir/straggler");
  CHECK_THROWS_WITH(sim::load_scenario("none.toml"), Catch::Contains("cannot open the file"));
  CHECK_THROWS_AS(sim::resolve_scenario("flakywan"), DataError);
  CHECK_THROWS_WITH(
      sim::resolve_scenario("flakywan"),
      Catch::StartsWith("--scenario flakywan: no such file or scenario; the scenarios are "
                        "classroom-lan, crash, flaky-wan, partition, straggler, two-racks") &&
          !Catch::Contains("\n"));
}
