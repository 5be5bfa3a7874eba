// dsgd compare: runs several configurations on the same data, prints their table, writes
// their curves as JSON and their plots as PNG and SVG; a run that fails is a row, not the end.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/compare_command.h"
#include "cli/compare_plot.h"
#include "cli_runner.h"
#include "core/errors.h"
#include "skip.h"

using namespace dsgd;
using namespace dsgd::test;

TEST_CASE("a --runs value is dsgd train's flags, comma separated", "[compare][cli]") {
  using V = std::vector<std::string>;
  CHECK(cli::run_arguments("sync") == V{});
  CHECK(cli::run_arguments("compress=powersgd:2,powersgd-start=20") ==
        V{"--compress", "powersgd:2", "--powersgd-start", "20"});
  CHECK(cli::run_arguments("nesterov,lr=0.05") == V{"--nesterov", "--lr", "0.05"});
  // A comma before something that is not a flag belongs to the value.
  CHECK(cli::run_arguments("model=mlp:128,64,compress=fp16") ==
        V{"--model", "mlp:128,64", "--compress", "fp16"});
  CHECK(cli::run_arguments("data=synthetic:train=512,test=128") ==
        V{"--data", "synthetic:train=512,test=128"});
  CHECK_THROWS_AS(cli::run_arguments("=5"), UsageError);
  CHECK_THROWS_AS(cli::run_arguments("--latency=5ms"), UsageError);
  CHECK_THROWS_AS(cli::run_arguments("fast=1"), UsageError);
  CHECK_THROWS_AS(cli::run_arguments("nesterov,64"), UsageError);
}

TEST_CASE("dsgd compare prints a row per run, and writes curves and plots", "[compare][cli]") {
  TempDir dir;
  const bool plots = cli::can_plot();
  const std::string plot_flags =
      plots ? " --plot " + (dir / "c.png") + " --plot " + (dir / "c.svg") : "";
  const auto r = run_dsgd(
      "compare -q --nodes 3 --steps 16 --latency 1ms --runs sync "
      "compress=fp16 local-sgd=4 --json " +
      (dir / "c.json") + plot_flags);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("mlp:64 on synthetic, 3 nodes, latency 1 ms"));
  for (const char* row : {"\nsync ", "\ncompress=fp16 ", "\nlocal-sgd=4 "})
    CHECK_THAT(r.out, Catch::Contains(row));
  const nlohmann::json j = nlohmann::json::parse(read_text(dir / "c.json"));
  REQUIRE(j["runs"].size() == 3);
  for (const nlohmann::json& run : j["runs"]) {
    CHECK(run["steps"].size() == 16);
    CHECK(run["steps"].back()["model_s"].get<double>() > 0);
  }
  CHECK(j["runs"][1]["spec"]["compress"] == "fp16");
  // The compressed run sent fewer bytes than the synchronous one.
  CHECK(j["runs"][1]["steps"][5]["bytes_sent"].get<double>() <
        j["runs"][0]["steps"][5]["bytes_sent"].get<double>());
  DSGD_SKIP_UNLESS("plplot", plots, "dsgd was built without PLplot: no plots to check");
  CHECK(read_text(dir / "c.png").starts_with("\x89PNG"));
  CHECK_THAT(read_text(dir / "c.svg"), Catch::Contains("<svg"));
}

TEST_CASE("a compared run that crashes is a failed row, and the others still compare",
          "[compare][cli]") {
  const auto r = run_dsgd("compare -q --nodes 3 --steps 12 --runs sync crash=1@5");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("\ncrash=1@5") && Catch::Contains("failed: ") &&
                        Catch::Contains("rank 1"));
}
