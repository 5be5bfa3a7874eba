// dsgd train --elastic as a user runs it: a crash is survived (exit 0, a summary of the
// membership change, outputs written), under both policies; without --elastic the crash still
// ends the run with exit 3 naming the rank.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

using namespace dsgd::test;

TEST_CASE("dsgd train --elastic in-process survives a crash and says how", "[elastic][cli]") {
  TempDir dir;
  const std::string save = (dir.path() / "p.npz").string();
  const auto r = run_dsgd("train -q --steps 30 --crash 1@20 --elastic in-process --save " + save);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("dsgd train on 4 simulated nodes, 3 at the end"));
  CHECK_THAT(r.out, Catch::Contains("membership       rank 1 lost after step 19: 3 ranks went "
                                    "on from step"));
  CHECK_THAT(r.out, Catch::Contains("(in-process)"));
  CHECK(std::filesystem::exists(save));
}

TEST_CASE("an elastic run's trace pairs each round's messages and cuts its failed steps",
          "[elastic][cli]") {
  TempDir dir;
  const std::string trace = (dir.path() / "t.json").string();
  const auto r = run_dsgd(
      "train -q --steps 30 --crash 1@20 --latency 1ms --elastic restart "
      "--checkpoint-every 8 --checkpoint-dir " +
      (dir.path() / "ck").string() + " --trace " + trace);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto check = run_dsgd("trace check " + trace);
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK_THAT(check.out, Catch::Contains("ok"));
  // Rank 0 ran steps 17 and 18 twice (from the step-16 checkpoint); the step it was in when
  // rank 1 died ends, unfinished, before the second step 17 begins.
  const nlohmann::json doc = nlohmann::json::parse(read_text(trace));
  std::vector<double> step17_starts;
  std::optional<double> failed_end;
  for (const nlohmann::json& e : doc.at("traceEvents")) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != 0) continue;
    const std::string name = e.value("name", "");
    if (!name.starts_with("step ")) continue;
    if (name == "step 17") step17_starts.push_back(e.at("ts").get<double>());
    if (e.contains("args") && e["args"].value("unfinished", false))
      failed_end = e.at("ts").get<double>() + e.at("dur").get<double>();
  }
  REQUIRE(step17_starts.size() == 2);
  REQUIRE(failed_end);
  CHECK(*failed_end <= std::max(step17_starts[0], step17_starts[1]));
}

TEST_CASE("dsgd train --elastic restart goes on from the newest checkpoint", "[elastic][cli]") {
  TempDir dir;
  const std::string ck = (dir.path() / "ck").string();
  const auto r = run_dsgd(
      "train -q --steps 30 --crash 2@20 --elastic restart --checkpoint-every 8 "
      "--checkpoint-dir " +
      ck);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("rank 2 lost after step 19: 3 ranks went on from step 16, "
                                    "3 steps lost (restart)"));
  CHECK(std::filesystem::exists(dir.path() / "ck" / "ckpt-0000000024.npz"));
}

TEST_CASE("without --elastic, or past --max-restarts, a crash ends the run naming the rank",
          "[elastic][cli]") {
  const auto plain = run_dsgd("train -q --steps 30 --crash 1@20");
  CHECK(plain.exit_code == 3);
  CHECK_THAT(plain.err, Catch::Contains("rank 1"));
  const auto limited = run_dsgd(
      "train -q --steps 30 --crash 1@10 --crash 3@20 --elastic in-process --max-restarts 1");
  INFO(limited.err);
  CHECK(limited.exit_code == 3);
  CHECK_THAT(limited.err, Catch::Contains("--max-restarts 1") &&
                              Catch::Contains("ranks 0, 1, 2 here were 0, 2, 3 at the start"));
}
