// `dsgd train` end to end, as a user runs it: the real binary, its exit codes, its
// one-line errors, and files that are either complete or absent.
#include <catch2/catch.hpp>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "core/io/npz.h"

using namespace dsgd;
using dsgd::test::run_dsgd;
using dsgd::test::TempDir;
using dsgd::test::write_file;

namespace {

// Asserts a clean usage failure: exit 2, one line on stderr containing `needle`, and the
// directory left as it was.
void expect_usage_error(const std::string& args, const std::string& needle, const TempDir& dir) {
  const std::string before = dir.listing();
  auto r = run_dsgd(args);
  INFO("dsgd " << args << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(needle));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') <= 2);
  CHECK(dir.listing() == before);
}

}  // namespace

TEST_CASE("dsgd train runs with defaults and writes metrics and parameters", "[cli]") {
  TempDir dir;
  auto r = run_dsgd("train --quiet --epochs 2 --save " + (dir / "p.npz") + " --metrics " +
                    (dir / "m.jsonl"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("4 simulated nodes") && Catch::Contains("test accuracy") &&
                        Catch::Contains("communication"));
  auto params = read_npz(dir / "p.npz");
  REQUIRE(params.size() == 4);
  CHECK(params[0].name == "layers.0.weight");
  CHECK(params[0].tensor.shape() == Shape{64, 32});
  CHECK(params[1].name == "layers.0.bias");
  CHECK(params[3].tensor.shape() == Shape{10});
  std::ifstream metrics(dir / "m.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(metrics, line)) {
    auto j = nlohmann::json::parse(line);
    CHECK(j.at("step").get<int>() == ++lines);
    CHECK(j.contains("loss"));
    CHECK(j.contains("comm_s"));
    CHECK(j.at("bytes_sent").get<double>() > 0);
  }
  CHECK(lines == 64);  // 8192 / 256 * 2 epochs
  CHECK(dir.listing() == "m.jsonl p.npz ");
}

TEST_CASE("same --init in, same names and shapes out, 3 nodes equal 1 node", "[cli][oracle]") {
  TempDir dir;
  const std::string common =
      "train -q --model mlp:16 --data synthetic:train=600,test=60 --batch 50 --no-shuffle "
      "--seed 3 ";
  REQUIRE(
      run_dsgd(common + "--nodes 1 --steps 1 --lr 1e-9 --save " + (dir / "init.npz")).exit_code ==
      0);
  for (int nodes : {1, 3}) {
    auto r =
        run_dsgd(common + "--steps 50 --nodes " + std::to_string(nodes) + " --init " +
                 (dir / "init.npz") + " --save " + (dir / ("n" + std::to_string(nodes) + ".npz")));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  auto init = read_npz(dir / "init.npz");
  auto one = read_npz(dir / "n1.npz"), three = read_npz(dir / "n3.npz");
  REQUIRE(one.size() == init.size());
  for (size_t t = 0; t < init.size(); ++t) {
    CHECK(one[t].name == init[t].name);
    CHECK(one[t].tensor.shape() == init[t].tensor.shape());
    float diff = 0, scale = 0;
    for (int64_t i = 0; i < one[t].tensor.numel(); ++i) {
      diff = std::max(diff, std::abs(one[t].tensor[i] - three[t].tensor[i]));
      scale = std::max(scale, std::abs(one[t].tensor[i]));
    }
    CHECK(diff <= 1e-5f * scale);
  }
}

TEST_CASE("bad input: exit code 2, a one-line error, nothing half-written", "[cli][bad-input]") {
  TempDir dir;
  const std::string out = " --save " + (dir / "out.npz") + " --metrics " + (dir / "m.jsonl");
  write_file(dir / "ragged.csv", "1,2,3,0\n4,5,6,1\n7,8,1\n");
  write_file(dir / "word.csv", "1,2,0\n3,abc,1\n");
  write_file(dir / "label.csv", "1,2,0\n3,4,-1\n");
  write_file(dir / "bad.idx", "this is not an idx file at all");
  write_file(dir / "bad.npz", "PK not really");
  const auto before = dir.listing();
  expect_usage_error("train -q --data csv:" + (dir / "missing.csv") + out, "missing.csv", dir);
  expect_usage_error("train -q --data csv:" + (dir / "ragged.csv") + out, "ragged.csv:3", dir);
  expect_usage_error("train -q --data csv:" + (dir / "word.csv") + out, "word.csv:2", dir);
  expect_usage_error("train -q --data csv:" + (dir / "label.csv") + out, "label.csv:2", dir);
  expect_usage_error("train -q --data idx:" + (dir / "bad.idx") + "," + (dir / "bad.idx") + out,
                     "magic", dir);
  expect_usage_error("train -q --init " + (dir / "bad.npz") + out, "bad.npz", dir);
  expect_usage_error("train -q --nodes 0" + out, "--nodes 0", dir);
  expect_usage_error("train -q --nodes 100000" + out, "--nodes 100000", dir);
  expect_usage_error("train -q --latency 2parsecs" + out, "--latency", dir);
  expect_usage_error("train -q --bandwidth fast" + out, "--bandwidth", dir);
  expect_usage_error("train -q --model mlp:abc" + out, "mlp:abc", dir);
  expect_usage_error("train -q --data nowhere" + out, "nowhere", dir);
  expect_usage_error("train -q --batch 0" + out, "--batch", dir);
  expect_usage_error("train -q --lr -1" + out, "--lr", dir);
  expect_usage_error("train -q --allreduce fastest" + out, "fastest", dir);
  expect_usage_error("train -q --save /nonexistent/dir/p.npz", "does not exist", dir);
  expect_usage_error("train -q --steps 5 --epochs 5" + out, "not both", dir);
  expect_usage_error("train --no-such-flag", "no-such-flag", dir);
  CHECK(dir.listing() == before);
}

TEST_CASE("an --init file whose names or shapes do not fit the model is refused",
          "[cli][bad-input]") {
  TempDir dir;
  REQUIRE(run_dsgd("train -q --model mlp:16 --steps 1 --save " + (dir / "p16.npz")).exit_code == 0);
  auto r = run_dsgd("train -q --model mlp:32 --steps 1 --init " + (dir / "p16.npz"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("layers.0.weight") && Catch::Contains("(16, 32)") &&
                        Catch::Contains("(32, 32)"));
  r = run_dsgd("train -q --model softmax --steps 1 --init " + (dir / "p16.npz"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--init"));
}

TEST_CASE("SIGTERM or SIGINT mid-run: one line, exit 128 + signal, no temporary left",
          "[cli][signals]") {
  for (const char* signal : {"TERM", "INT"}) {
    DYNAMIC_SECTION("SIG" << signal) {
      TempDir dir;
      const std::string d = dir.path().string();
      // In the background, SIGINT would start out ignored (bash does that to `&` jobs):
      // `set -m` gives the job its own process group, where it keeps the default.
      const std::string script = fmt::format(
          "set -m; {} train -q --steps 100000 --model mlp:64 --save {}/p.npz --metrics "
          "{}/m.jsonl 2>{}/err & pid=$!; "
          "for i in $(seq 600); do ls -A {} | grep -q dsgd-tmp && break; sleep 0.05; done; "
          "kill -{} $pid; wait $pid; echo $? >{}/rc",
          DSGD_BINARY, d, d, d, d, signal, d);
      REQUIRE(std::system(("bash -c '" + script + "'").c_str()) == 0);
      const int rc = std::stoi(dsgd::test::read_text(dir.path() / "rc"));
      const std::string err = dsgd::test::read_text(dir.path() / "err");
      INFO(err);
      CHECK(rc == 128 + (std::string(signal) == "TERM" ? 15 : 2));
      CHECK_THAT(err, Catch::Contains(fmt::format("dsgd: interrupted by SIG{}", signal)) &&
                          Catch::Contains("removed 1 unfinished output file"));
      CHECK(std::count(err.begin(), err.end(), '\n') == 2);  // a blank line, then the one line
      CHECK(dsgd::test::dir_listing(dir.path()) == "err rc ");
    }
  }
}

TEST_CASE("a run whose rank 0 crashes reports no success: exit 3, nothing saved", "[cli][faults]") {
  for (const char* faults : {"--nodes 1 --crash 0@2", "--nodes 2 --crash 0@2 --crash 1@2"}) {
    DYNAMIC_SECTION(faults) {
      TempDir dir;
      const std::string out = (dir.path() / "p.npz").string();
      const auto r = dsgd::test::run_dsgd(
          fmt::format("train -q --steps 10 {} --save {} --metrics {}.jsonl", faults, out, out));
      INFO(r.err);
      CHECK(r.exit_code == 3);
      CHECK_THAT(r.err, Catch::Contains("rank 0 crashed"));
      CHECK(r.out.find("final loss") == std::string::npos);
      CHECK(dsgd::test::dir_listing(dir.path()).empty());
    }
  }
}
