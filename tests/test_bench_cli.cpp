// `dsgd bench collective` run as a program: rows with every result checked, JSON rows,
// --explain, and bad flags refused with exit code 2 and one line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/bench_command.h"
#include "sim/link_model.h"
#include "cli_runner.h"
#include "core/errors.h"

using dsgd::test::count_lines;
using dsgd::test::run_dsgd;
using dsgd::test::TempDir;

namespace {

// The table's data rows: lines that are not comments, split into fields.
std::vector<std::vector<std::string>> rows_of(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string f; fields >> f;)
      row.push_back(f);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST_CASE("bench collective prints one checked row per size", "[bench][cli]") {
  const auto r = run_dsgd(
      "bench collective --nodes 3 --min-bytes 4K --max-bytes 64K --iters 3 --warmup 1 "
      "--no-baseline");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 5);  // 4K 8K 16K 32K 64K
  uint64_t expected_bytes = 4096;
  for (const auto& row : rows) {
    REQUIRE(row.size() == 11);
    CHECK(row[0] == std::to_string(expected_bytes));
    CHECK(row[1] == std::to_string(expected_bytes / 4));
    CHECK(std::stod(row[3]) > 0);  // time (us)
    CHECK(row[6] == "-");          // no link model, no prediction
    CHECK(row.back() == "0");      // wrong elements
    expected_bytes *= 2;
  }
  CHECK_THAT(r.out, Catch::Contains("0 wrong elements"));
}

TEST_CASE("bench collective runs every op and all_reduce algorithm with no wrong element",
          "[bench][cli]") {
  for (const char* op :
       {"broadcast", "reduce", "all_gather", "reduce_scatter", "gather", "scatter", "barrier"}) {
    const auto r = run_dsgd(std::string("bench collective --op ") + op +
                            " --nodes 3 --min-bytes 1K --max-bytes 2K --iters 2 --warmup 1 "
                            "--root 2 --reduce-op max --no-baseline");
    INFO(op << "\n" << r.out << r.err);
    CHECK(r.exit_code == 0);
    const auto rows = rows_of(r.out);
    CHECK(rows.size() == (std::string(op) == "barrier" ? 1u : 2u));
    for (const auto& row : rows)
      CHECK(row.back() == "0");
  }
  for (const char* algo : {"naive", "ring", "tree", "halving_doubling", "native"}) {
    const auto r = run_dsgd(std::string("bench collective --algorithm ") + algo +
                            " --nodes 5 --min-bytes 4 --max-bytes 4K --step-factor 32 "
                            "--iters 2 --warmup 0 --reduce-op avg --no-baseline");
    INFO(algo << "\n" << r.out << r.err);
    CHECK(r.exit_code == 0);
    const auto rows = rows_of(r.out);
    CHECK(rows.size() == 3);  // 4 B, 128 B, 4 KiB
    for (const auto& row : rows)
      CHECK(row.back() == "0");
  }
}

TEST_CASE("bench collective --json writes the rows, predictions and the baseline", "[bench][cli]") {
  TempDir dir;
  const std::string file = dir / "rows.json";
  const auto r = run_dsgd(
      "bench collective --algorithm ring --nodes 4 --min-bytes 4K --max-bytes 8K --iters 3 "
      "--warmup 1 --latency 1ms --json " +
      file);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(dsgd::test::read_text(file));
  CHECK(j["op"] == "all_reduce");
  CHECK(j["algorithm"] == "ring");
  CHECK(j["nodes"] == 4);
  CHECK(j["wrong"] == 0);
  CHECK(j["loopback_baseline"].is_null());  // only from 1 MiB on
  REQUIRE(j["rows"].size() == 2);
  for (const auto& row : j["rows"]) {
    CHECK(row["wrong"] == 0);
    CHECK(row["algorithm"] == "ring");
    // Ring on 4 ranks with 1 ms per message and unlimited bandwidth: 6 steps.
    CHECK(row["predicted_us"].get<double>() == Approx(6000));
    CHECK(row["time_us"].get<double>() >= 6000 - 250);
    CHECK(row["error_pct"].is_number());
    CHECK(row["loopback_GBps"].is_null());
    CHECK(row["busbw_vs_loopback_pct"].is_null());
  }
  CHECK(j["rows"][1]["bytes"] == 8192);
  CHECK(dir.listing() == "rows.json ");  // no temporary left behind
}

TEST_CASE("bench collective times a loopback round beside each iteration from 1 MiB",
          "[bench][cli]") {
  TempDir dir;
  const std::string file = dir / "rows.json";
  const auto r = run_dsgd(
      "bench collective --algorithm ring --nodes 3 --min-bytes 512K --max-bytes 1M --iters 3 "
      "--warmup 0 --json " +
      file);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# loop: from 1 MiB") != std::string::npos);
  const auto j = nlohmann::json::parse(dsgd::test::read_text(file));
  REQUIRE(j["loopback_baseline"].is_object());
  CHECK(j["loopback_baseline"]["flows"] == 3);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["loopback_GBps"].is_null());  // 512 KiB: below the baseline's sizes
  const auto& row = j["rows"][1];
  CHECK(row["bytes"] == 1048576);
  CHECK(row["wrong"] == 0);
  CHECK(row["loopback_GBps"].get<double>() > 0);
  CHECK(row["busbw_vs_loopback_pct"].get<double>() > 0);
}

TEST_CASE("bench collective --explain prints each algorithm's cost and auto's pick",
          "[bench][cli]") {
  const auto r = run_dsgd("bench collective --nodes 5 --max-bytes 64M --explain");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* a : {"naive", "ring", "tree", "halving_doubling"})
    CHECK_THAT(r.out, Catch::Contains(a));
  CHECK_THAT(r.out, Catch::Contains("auto picks ring"));
  CHECK_THAT(r.out, Catch::Contains("2(R-1) * (a + S/R/B)"));
  const auto g = run_dsgd("bench collective --op gather --nodes 4 --explain");
  CHECK(g.exit_code == 0);
  CHECK_THAT(g.out, Catch::Contains("direct"));
}

TEST_CASE("bench collective refuses bad flags with exit code 2 and one line", "[bench][cli]") {
  TempDir dir;
  for (const std::string& flags : std::vector<std::string>{
           "--op alltoall", "--algorithm fast", "--op broadcast --algorithm halving_doubling",
           "--min-bytes 4X", "--min-bytes 8K --max-bytes 4K", "--max-bytes 2G", "--nodes 0",
           "--iters 0", "--warmup -1", "--step-factor 1", "--root 4", "--reduce-op mean",
           "--latency 2parsecs", "--backend tcp", "--json " + dir / "missing/rows.json"}) {
    const auto r = run_dsgd("bench collective " + flags);
    INFO(flags << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("dsgd: error: "));
    CHECK(r.out.empty());
  }
}

TEST_CASE("sizes are bytes with K, M, G as powers of 1024 and KB, MB, GB of 1000", "[bench]") {
  using dsgd::sim::parse_size_bytes;
  CHECK(parse_size_bytes("512", "--x") == 512);
  CHECK(parse_size_bytes("4K", "--x") == 4096);
  CHECK(parse_size_bytes("4KiB", "--x") == 4096);
  CHECK(parse_size_bytes("1.5K", "--x") == 1536);
  CHECK(parse_size_bytes("64KB", "--x") == 64000);
  CHECK(parse_size_bytes("2MB", "--x") == 2000000);
  CHECK(parse_size_bytes("64M", "--x") == 64ull << 20);
  CHECK(parse_size_bytes("1G", "--x") == 1ull << 30);
  CHECK(parse_size_bytes("0", "--x") == 0);
  for (const char* bad : {"", "K", "4X", "-1", "4k", "nan", "1e30G"})
    CHECK_THROWS_AS(parse_size_bytes(bad, "--x"), dsgd::UsageError);
}
