// Elastic runs of dsgd node processes: a node that crashes (a --crash fault, or its process
// killed) is survived under both policies, and the processes end with the parameters of
// dsgd train's elastic run of threads, bit for bit; rank 0, which hosts the rendezvous, may
// not be lost: a fault on it is refused, and its process killed ends the others naming it;
// past --max-restarts every process ends with exit 3.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "node_processes.h"

using namespace dsgd;
using namespace dsgd::test;

namespace {

// Starts `world` nodes with `flags` (rank 0 also with `rank0_flags`), the others first.
std::vector<std::unique_ptr<Process>> start_nodes(const TempDir& dir, int world,
                                                  const std::string& flags,
                                                  const std::string& rank0_flags = "") {
  const uint16_t port = free_port();
  std::vector<std::unique_ptr<Process>> nodes(static_cast<size_t>(world));
  for (int r = world - 1; r >= 0; --r)
    nodes[static_cast<size_t>(r)] = std::make_unique<Process>(
        node_args(r, world, port, flags + (r == 0 ? " " + rank0_flags : "")),
        dir / fmt::format("r{}", r));
  return nodes;
}

}  // namespace

TEST_CASE("elastic dsgd node processes survive a crash exactly as dsgd train's threads do",
          "[node][elastic][cli]") {
  TempDir dir;
  const bool in_process = GENERATE(true, false);
  auto flags_with = [&](const std::string& checkpoints) {
    return in_process
               ? std::string("--latency 200us --timeout 10s --elastic in-process --crash 2@12")
               : fmt::format(
                     "--latency 200us --timeout 10s --elastic restart --crash 2@12 "
                     "--checkpoint-every 4 --checkpoint-dir {}",
                     checkpoints);
  };
  const std::string flags = flags_with(dir / "ck");
  INFO(flags);
  const Reference want = reference(dir, flags_with(dir / "ref-ck"), 4);
  auto nodes = start_nodes(dir, 4, flags, "--save " + dir / "node.npz");
  CHECK(nodes[0]->wait(60s) == 0);
  CHECK(nodes[2]->wait(5s) == 3);  // its crash fault: the process ends, naming it
  CHECK(nodes[1]->wait(5s) == 0);
  CHECK(nodes[3]->wait(5s) == 0);
  INFO(nodes[0]->err() + nodes[1]->err() + nodes[2]->err() + nodes[3]->err());
  CHECK(nodes[2]->err().find("rank 2 crashed (a --crash fault)") != std::string::npos);
  require_same_params(read_npz(dir / "node.npz"), want.params);
  const std::string out = nodes[0]->out();
  CHECK(out.find("rank 0 of 4 processes, 3 at the end") != std::string::npos);
  const std::string change =
      in_process ? "rank 2 lost after step 11: 3 ranks went on from step 11 (in-process)"
                 : "rank 2 lost after step 11: 3 ranks went on from step 8, 3 steps lost (restart)";
  CHECK(out.find(change) != std::string::npos);
  // dsgd train's threads: the same loss, but where the crashed rank's last frames of step 11
  // are lost with its connections (a reset racing them), the survivors redo step 11 from
  // step 10, to the same parameters (checked above).
  CHECK(want.out.find("rank 2 lost after step 11: 3 ranks went on from step ") !=
        std::string::npos);
}

namespace {

// 300 steps over 5 ms links: a few seconds, long enough to kill a process while it trains.
std::string long_node_args(int rank, uint16_t port, const std::string& extra) {
  return fmt::format(
      "node --rank {} --world 3 --rendezvous 127.0.0.1:{} --token sesame --model mlp:16 "
      "--data synthetic:train=512,test=128,features=8,classes=4 --batch 48 --steps 300 "
      "--no-shuffle --seed 5 --latency 5ms --timeout 5s --elastic in-process {}",
      rank, port, extra);
}

// Three long-running nodes, rank 0 printing its progress; returns once rank 0 has trained
// its first steps (its first progress line).
std::vector<std::unique_ptr<Process>> start_long_run(const TempDir& dir) {
  const uint16_t port = free_port();
  std::vector<std::unique_ptr<Process>> nodes;
  nodes.push_back(std::make_unique<Process>(long_node_args(0, port, ""), dir / "r0"));
  for (int r = 1; r < 3; ++r)
    nodes.push_back(
        std::make_unique<Process>(long_node_args(r, port, "-q"), dir / fmt::format("r{}", r)));
  REQUIRE_FALSE(nodes[0]->await_err("step 1/300", 30s).empty());
  return nodes;
}

}  // namespace

TEST_CASE("an elastic run of processes goes on when a node's process is killed",
          "[node][elastic][cli]") {
  TempDir dir;
  auto nodes = start_long_run(dir);
  nodes[2]->kill();
  CHECK(nodes[0]->wait(60s) == 0);
  CHECK(nodes[1]->wait(5s) == 0);
  const std::string out = nodes[0]->out();
  INFO(out + nodes[0]->err() + nodes[1]->err());
  CHECK(out.find("rank 0 of 3 processes, 2 at the end") != std::string::npos);
  CHECK(out.find("membership       rank 2 lost after step") != std::string::npos);
  CHECK(out.find("2 ranks went on from step") != std::string::npos);
}

TEST_CASE("without rank 0's process, which hosts the rendezvous, the others end naming it",
          "[node][elastic][cli]") {
  TempDir dir;
  auto nodes = start_long_run(dir);
  nodes[0]->kill();
  for (int r = 1; r < 3; ++r) {
    CHECK(nodes[static_cast<size_t>(r)]->wait(30s) == 3);
    const std::string err = nodes[static_cast<size_t>(r)]->err();
    INFO(err);
    CHECK(err.find("rank 0 at 127.0.0.1:") != std::string::npos);
    CHECK(err.find("goes on only while rank 0's process lives") != std::string::npos);
  }
  // A crash fault on rank 0 is refused before the run starts.
  const auto refused = run_dsgd(
      "node --rank 1 --world 3 --rendezvous 127.0.0.1:29500 --token t --elastic in-process "
      "--crash 0@5 --steps 10");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("rank 0's process hosts the rendezvous") != std::string::npos);
}

TEST_CASE("past --max-restarts every node process ends with exit 3", "[node][elastic][cli]") {
  TempDir dir;
  auto nodes =
      start_nodes(dir, 4,
                  "--latency 200us --timeout 10s --elastic in-process --crash 1@6 --crash 2@12 "
                  "--max-restarts 1");
  CHECK(nodes[0]->wait(60s) == 3);
  CHECK(nodes[1]->wait(5s) == 3);
  CHECK(nodes[2]->wait(5s) == 3);
  CHECK(nodes[3]->wait(5s) == 3);
  const std::string e0 = nodes[0]->err(), e3 = nodes[3]->err();
  INFO(e0 + e3);
  CHECK(e0.find("the most --max-restarts 1 allows") != std::string::npos);
  CHECK(e0.find("ranks 0, 1, 2 here were 0, 2, 3 at the start") != std::string::npos);
  CHECK(e3.find("rank 0 ended the run for every rank:") != std::string::npos);
  CHECK(e3.find("the most --max-restarts 1 allows") != std::string::npos);
}

TEST_CASE("a node that joins an elastic run under way trains on with the others exactly",
          "[node][elastic][cli]") {
  TempDir dir;
  const uint16_t port = free_port();
  const std::string data =
      "--model mlp:16 --data synthetic:train=512,test=128,features=8,classes=4 --batch 48 "
      "--no-shuffle --seed 5";
  const std::string flags = data + " --steps 300 --latency 5ms --timeout 5s --elastic in-process";
  // Rank 0's progress (without -q) says when the run is under way: a node joins from then.
  auto node = [&](const std::string& who, const std::string& extra, const std::string& log) {
    return std::make_unique<Process>(
        fmt::format("node {} --world 2 --rendezvous 127.0.0.1:{} --token sesame {} {}", who, port,
                    flags, extra),
        dir / log);
  };
  auto r1 = node("--rank 1", "-q", "r1");
  auto r0 = node("--rank 0", "--save " + dir / "node.npz", "r0");
  REQUIRE_FALSE(r0->await_err("step 1/300", 30s).empty());
  auto joiner = node("--join", "-q", "joiner");
  REQUIRE_FALSE(joiner->await_err("joined as rank 2 of 3 (node 2)", 30s).empty());
  CHECK(r0->wait(60s) == 0);
  CHECK(r1->wait(5s) == 0);
  CHECK(joiner->wait(5s) == 0);
  const std::string out = r0->out();
  INFO(out + r0->err() + joiner->err());
  CHECK(out.find("rank 0 of 2 processes, 3 at the end") != std::string::npos);
  const std::string key = "membership       rank 2 joined after step ";
  const auto at = out.find(key);
  REQUIRE(at != std::string::npos);
  const int step = std::stoi(out.substr(at + key.size()));
  CHECK(out.find(fmt::format("3 ranks went on from step {} (in-process)", step)) !=
        std::string::npos);
  // The same as two ranks to that step, then three resumed from there.
  const auto first =
      run_dsgd(fmt::format("train -q --nodes 2 {} --steps {} --checkpoint-every {} "
                           "--checkpoint-dir {}",
                           data, step, step, dir / "ck"));
  REQUIRE(first.exit_code == 0);
  const auto then = run_dsgd(
      fmt::format("train -q --nodes 3 {} --steps 300 --elastic in-process --resume {} --save {}",
                  data, dir / fmt::format("ck/ckpt-{:010}.npz", step), dir / "ref.npz"));
  INFO(then.err);
  REQUIRE(then.exit_code == 0);
  require_same_params(read_npz(dir / "node.npz"), read_npz(dir / "ref.npz"));
}
