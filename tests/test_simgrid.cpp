// The SimGrid backend (sim/simgrid): the conformance suite's point-to-point and collective
// checks on S4U actors, MPI's eager limit, message times against dsgd's alpha-beta model
// (exact where no link carries two messages at once; SimGrid's fair sharing where one
// does), and `dsgd train --backend simgrid` against simulated nodes, bit for bit. SimGrid's
// engine starts once per process: each simulation runs in a child process of its own.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "child_process.h"
#include "cli_runner.h"
#include "core/comm/collectives.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"
#include "skip.h"
#include "tests/conformance/communicator_suite.h"

#ifdef DSGD_HAVE_SIMGRID
#include "sim/simgrid/sg_cluster.h"
#endif

using namespace dsgd;
using dsgd::test::in_child;

namespace {

#ifdef DSGD_HAVE_SIMGRID

sim::ClusterOptions cluster(int nodes, sim::Topology topology = sim::Topology::mesh,
                            double latency_s = 0, double bandwidth_Bps = 0) {
  sim::ClusterOptions o{.nodes = nodes};
  o.network.topology = topology;
  o.network.link = {.latency_s = latency_s, .bandwidth_Bps = bandwidth_Bps};
  return o;
}

// The conformance suite but its deadline check (no wall-clock deadlines in virtual time):
// every failure, one per line; "" when all passed.
std::string conformance_failures(int world) {
  std::vector<conformance::Report> reports;
  for (int r = 0; r < world; ++r)
    reports.emplace_back(fmt::format("R={} rank {}", world, r));
  sim::sg::run_simgrid(cluster(world), [&](Communicator& comm) {
    conformance::Report& report = reports[comm.rank()];
    conformance::check_send_recv(comm, report);
    conformance::check_isend_irecv(comm, report);
    conformance::check_any_source(comm, report);
    conformance::check_tags_and_order(comm, report);
    conformance::check_size_mismatch(comm, report);
    conformance::check_collective_arguments(comm, report);
    conformance::check_collectives(comm, report);
    conformance::check_large_collectives(comm, report);
  });
  std::string out;
  for (const conformance::Report& report : reports) {
    if (report.checks() == 0) out += report.who() + ": no checks ran\n";
    for (const std::string& failure : report.failures())
      out += failure + "\n";
  }
  return out;
}

#endif

}  // namespace

#ifdef DSGD_HAVE_SIMGRID

TEST_CASE("SimGrid backend passes the Communicator conformance suite", "[simgrid]") {
  for (int world : {1, 2, 3, 4, 5, 8}) {
    INFO("R = " << world);
    CHECK(in_child([&] { return conformance_failures(world); }) == "");
  }
}

TEST_CASE(
    "SimGrid: a message takes its latency and transfer time, and two at once share a "
    "switch uplink",
    "[simgrid]") {
  const double latency = 1e-3, bandwidth = 1e8;  // 1 ms, 100 MB/s
  const size_t floats = 250'000;                 // 1 MB: 10 ms on the wire
  auto arrivals = [&](sim::Topology topology) {
    return in_child([&] {
      std::vector<double> at(3, 0);
      sim::sg::run_simgrid(cluster(3, topology, latency, bandwidth), [&](Communicator& comm) {
        std::vector<float> data(floats, 1.0f);
        if (comm.rank() == 0) {
          Request a = comm.isend(data, 1), b = comm.isend(data, 2);
          comm.wait(a), comm.wait(b);
        } else {
          comm.recv(data, 0);
          at[comm.rank()] = comm.model_s();
        }
      });
      return fmt::format("{:.9f} {:.9f}", at[1], at[2]);
    });
  };
  // A mesh gives each pair its own link: both arrive after 1 + 10 ms. On a switch both
  // messages leave through rank 0's one uplink, which SimGrid shares between them: both
  // arrive after 1 + 20 ms (dsgd's own model sends them one after the other: 11 and 21 ms).
  CHECK(arrivals(sim::Topology::mesh) == "0.011000000 0.011000000");
  CHECK(arrivals(sim::Topology::switch_) == "0.021000000 0.021000000");
}

TEST_CASE("SimGrid: ring all_reduce takes what dsgd's cost model predicts, within 1 %",
          "[simgrid]") {
  const double latency = 50e-6, bandwidth = 1.25e9;  // 50 us, 10 Gbit/s
  for (auto topology : {sim::Topology::mesh, sim::Topology::switch_})
    for (int world : {2, 4, 7, 16})
      for (size_t bytes : {size_t{4096}, size_t{1} << 20, size_t{16} << 20}) {
        const double predicted =
            collective_cost(CollectiveOp::all_reduce, Algorithm::ring, world, bytes)
                .predict_s(latency, bandwidth);
        const std::string took = in_child([&] {
          double end = 0;
          sim::sg::run_simgrid(
              cluster(world, topology, latency, bandwidth), [&](Communicator& comm) {
                std::vector<float> data(bytes / 4, 1.0f);
                all_reduce(comm, data, ReduceOp::SUM, {.algorithm = Algorithm::ring});
                if (data[0] != world) throw std::runtime_error("wrong sum");
                end = std::max(end, comm.model_s());
              });
          return fmt::format("{:.12f}", end);
        });
        INFO(sim::to_string(topology) << ", R = " << world << ", " << bytes << " bytes: took "
                                      << took << " s, predicted " << predicted << " s");
        REQUIRE(took.find("error") == std::string::npos);
        CHECK(std::stod(took) == Approx(predicted).epsilon(0.01));
      }
}

TEST_CASE("SimGrid: two blocking sends above the eager limit deadlock, below it they pass",
          "[simgrid]") {
  auto exchange = [](size_t floats) {
    return in_child([floats] {
      sim::sg::run_simgrid(cluster(2), [&](Communicator& comm) {
        std::vector<float> out(floats, 1.0f), in(floats);
        comm.send(out, 1 - comm.rank());
        comm.recv(in, 1 - comm.rank());
      });
      return std::string("completed");
    });
  };
  CHECK(exchange(1000) == "completed");  // 4 KB, copied
  const std::string big = exchange(100'000);
  CHECK_THAT(big, Catch::Contains("error: deadlock: every running rank is blocked"));
  CHECK_THAT(big, Catch::Contains("rank 0 waits in send to rank 1, tag 0 (400000 bytes, over the "
                                  "eager limit of 65536 bytes"));
  CHECK_THAT(big, Catch::Contains("rank 1 waits in send to rank 0"));
}

TEST_CASE("SimGrid: a rendezvous send whose request is dropped delivers what its buffer held",
          "[simgrid]") {
  const std::string got = in_child([] {
    float first = 0;
    sim::sg::run_simgrid(cluster(2), [&](Communicator& comm) {
      std::vector<float> data(100'000, comm.rank() == 0 ? 5.0f : 0.0f);
      if (comm.rank() == 0) {
        comm.isend(data, 1);  // above the eager limit; its request is dropped at once
        std::fill(data.begin(), data.end(), -1.0f);
      } else {
        comm.recv(data, 0);
        first = data[0];
      }
    });
    return fmt::format("{}", first);
  });
  CHECK(got == "5");
}

TEST_CASE("SimGrid: MPI's timing and matching rules, as on simulated nodes", "[simgrid]") {
  const double latency = 1e-3, bandwidth = 1e8;  // 1 ms, 100 MB/s
  const std::string got = in_child([&] {
    std::vector<double> t(6, -1);
    float first_source = -1, after_drop = -1;
    sim::sg::run_simgrid(
        cluster(3, sim::Topology::mesh, latency, bandwidth), [&](Communicator& comm) {
          std::vector<float> big(250'000, 1.0f), small(1, float(comm.rank()));  // 1 MB: 10 ms
          if (comm.rank() == 1) {
            // Above the eager limit, received at once: it ends when it has arrived (11 ms).
            comm.send(big, 0);
            t[0] = comm.model_s();
            // Received only at 50 ms: it ends then, though its bytes arrived at 22 ms.
            comm.send(big, 0, 1);
            t[1] = comm.model_s();
            comm.send(big, 0, 2);  // a big one, then ...
          } else if (comm.rank() == 2) {
            comm.send(small, 0, 3);  // ... a small one from another rank: it arrives first
            comm.send(small, 0, 4);
            comm.send(std::vector<float>{42}, 0, 4);
          } else {
            comm.recv(big, 1);
            t[2] = comm.model_s();
            comm.advance_model_to(0.05);
            comm.recv(big, 1, 1);
            Status s;
            std::vector<float> one(1);
            // Any source, tags 2 or 3 asked for in turn: the small message arrived first.
            Request a = comm.irecv(big, 1, 2);
            s = comm.recv(one, kAnySource, 3);
            first_source = static_cast<float>(s.source);
            comm.wait(a);
            { Request dropped = comm.irecv(one, 2, 4); }  // dropped: it still takes a message
            comm.recv(one, 2, 4);
            after_drop = one[0];
            // A poll that never ends: a TimeoutError after the timeout, in virtual time.
            comm.set_timeout(std::chrono::milliseconds(5));
            Request never = comm.irecv(one, 2, 9);
            t[4] = comm.model_s();
            try {
              while (!comm.test(never)) {
              }
            } catch (const TimeoutError& e) {
              t[3] = comm.model_s();
            }
          }
        });
    return fmt::format("{:.6f} {:.6f} {:.6f} {} {} {:.4f}", t[0], t[1], t[2], first_source,
                       after_drop, t[3] - t[4]);
  });
  // 11 ms; 50 ms; 11 ms; rank 2 first; the message after the dropped receive's; the poll
  // ended 5 ms (and one poll) after it began.
  CHECK(got == "0.011000 0.050000 0.011000 2 42 0.0050");
}

TEST_CASE("SimGrid: phantom payloads carry only their size, measured compute its seconds",
          "[simgrid]") {
  const std::string got = in_child([] {
    float received = -1;
    double at = -1, computed = -1;
    sim::sg::run_simgrid(cluster(2, sim::Topology::mesh, 1e-3, 1e8),
                         [&](Communicator& comm) {
                           std::vector<float> data(250'000, comm.rank() == 0 ? 5.0f : 0.0f);
                           if (comm.rank() == 0) {
                             comm.send(data, 1);
                             comm.on_compute(0.25, 1e12);  // measured: 0.25 s, flops ignored
                             computed = comm.model_s();
                           } else {
                             comm.recv(data, 0);
                             received = data[0];
                             at = comm.model_s();
                           }
                         },
                         {.phantom = true, .compute = sim::sg::ComputeModel::measured});
    return fmt::format("{} {:.6f} {:.6f}", received, at, computed);
  });
  // The receive buffer keeps its zeros; the 1 MB still takes 1 + 10 ms; rank 0's rendezvous
  // send ends when the message has arrived, then 0.25 s of compute.
  CHECK(got == "0 0.011000 0.261000");
}

TEST_CASE(
    "SimGrid: phantom collectives take the time of real ones and leave buffers as they were, "
    "and RealPayloads carries floats",
    "[simgrid]") {
  for (Algorithm algorithm :
       {Algorithm::naive, Algorithm::ring, Algorithm::tree, Algorithm::halving_doubling}) {
    auto run = [&](bool phantom) {
      return in_child([&] {
        double end = 0;
        std::string seen;
        const float* shared = nullptr;
        sim::sg::run_simgrid(cluster(5, sim::Topology::switch_, 1e-4, 1e9),
                             [&](Communicator& comm) {
                               std::vector<float> data(300'000,
                                                       static_cast<float>(comm.rank() + 1));
                               all_reduce(comm, data, ReduceOp::AVG, {.algorithm = algorithm});
                               end = std::max(end, comm.model_s());
                               std::vector<float> root{comm.rank() == 0 ? 7.0f : 0.0f};
                               {
                                 const Communicator::RealPayloads real(comm);
                                 broadcast(comm, root, 0);
                               }
                               if (comm.rank() == 4) seen = fmt::format("{} {}", data[0], root[0]);
                               if (!phantom) return;
                               const float* mine = comm.shared_buffer(10).data();
                               if (shared && mine != shared)
                                 throw std::runtime_error("ranks do not share their buffer");
                               shared = mine;
                             },
                             {.phantom = phantom});
        return fmt::format("{:.9f} {}", end, seen);
      });
    };
    const std::string real = run(false), phantom = run(true);
    INFO(to_string(algorithm) << ": real " << real << ", phantom " << phantom);
    const std::string time = real.substr(0, real.find(' '));
    CHECK(real == time + " 3 7");     // the average of 1..5; the broadcast's 7
    CHECK(phantom == time + " 5 7");  // rank 4's own values, left as they were; the 7 again
  }
}

TEST_CASE("SimGrid: a pair's messages arrive in the order they were sent, empty ones too",
          "[simgrid]") {
  // An empty message leaves the links the instant the one before it has, so both arrive at
  // the same virtual time, which must not reorder them (a ring all_reduce of fewer floats
  // than ranks sends such messages with one tag). Eight ranks send to their right
  // neighbour at once, so that many arrivals share each instant.
  const std::vector<size_t> sizes{1, 0, 0, 2, 0, 1, 0, 3, 0};
  for (double latency : {0.0, 1e-3}) {
    const std::string got = in_child([&] {
      std::string seen;
      sim::sg::run_simgrid(cluster(8, sim::Topology::mesh, latency, 1e9), [&](Communicator& comm) {
        const int right = (comm.rank() + 1) % 8, left = (comm.rank() + 7) % 8;
        std::vector<std::vector<float>> out;
        std::vector<Request> sent;
        for (size_t k = 0; k < sizes.size(); ++k) {
          out.emplace_back(sizes[k], static_cast<float>(k));
          sent.push_back(comm.isend(out.back(), right, 7));
        }
        for (size_t k = 0; k < sizes.size(); ++k) {
          std::vector<float> in(sizes[k], -1.0f);
          comm.recv(in, left, 7);
          if (!in.empty() && in[0] != static_cast<float>(k))
            throw std::runtime_error(
                fmt::format("rank {}: message {} came out of order", comm.rank(), k));
        }
        for (Request& q : sent)
          q.wait();
        if (comm.rank() == 3) seen = "in order";
      });
      return seen;
    });
    INFO("latency " << latency);
    CHECK(got == "in order");
  }
}

TEST_CASE("SimGrid: a rank's error ends the run and names it, and a process runs one simulation",
          "[simgrid]") {
  const std::string failed = in_child([] {
    sim::sg::run_simgrid(cluster(3), [](Communicator& comm) {
      std::vector<float> one(1), two(2);
      if (comm.rank() == 0) comm.send(one, 1);
      if (comm.rank() == 1) comm.recv(two, 0);
      if (comm.rank() == 2) comm.recv(one, 0);  // never sent: killed when rank 1 fails
    });
    return std::string("completed");
  });
  CHECK(failed ==
        "error: rank 1: recv buffer holds 2 floats but the message from rank 0 (tag 0) has 1 "
        "floats; size the buffer to match the send");
  const std::string second = in_child([] {
    sim::sg::run_simgrid(cluster(1), [](Communicator&) {});
    sim::sg::run_simgrid(cluster(1), [](Communicator&) {});
    return std::string("ran twice");
  });
  CHECK_THAT(second, Catch::Contains("SimGrid runs one simulation per process"));
}

TEST_CASE(
    "dsgd train --backend simgrid ends with the parameters of simulated nodes, bit for "
    "bit, and refuses what it does not model",
    "[simgrid][cli]") {
  dsgd::test::TempDir dir;
  const std::string flags =
      "train --steps 30 --nodes 5 --latency 1ms --bandwidth 1Gbit --allreduce ring --save ";
  const dsgd::test::CliResult on_sim = dsgd::test::run_dsgd(flags + (dir / "sim.npz"));
  const dsgd::test::CliResult on_sg =
      dsgd::test::run_dsgd(flags + (dir / "sg.npz") + " --backend simgrid");
  INFO(on_sim.err << on_sg.err);
  REQUIRE(on_sim.exit_code == 0);
  REQUIRE(on_sg.exit_code == 0);
  CHECK(dsgd::test::read_text(dir / "sim.npz") == dsgd::test::read_text(dir / "sg.npz"));
  CHECK_THAT(on_sg.out, Catch::Contains("dsgd train on 5 SimGrid ranks (virtual time)"));
  CHECK_THAT(on_sg.out, Catch::Contains("SimGrid's CM02 links"));
  const dsgd::test::CliResult gpu =
      dsgd::test::run_dsgd("train --steps 3 --backend simgrid --device cuda");
  INFO(gpu.err);
  CHECK(gpu.exit_code == 2);
  CHECK_THAT(gpu.err, Catch::Contains("--backend simgrid") && Catch::Contains("--backend sim"));
  const dsgd::test::CliResult servers = dsgd::test::run_dsgd(
      "train --steps 3 --backend simgrid --payload phantom --parameter-servers 1");
  CHECK(servers.exit_code == 2);
  CHECK_THAT(servers.err, Catch::Contains("--parameter-servers 1 does not run with --payload "
                                          "phantom"));
  const dsgd::test::CliResult phantom =
      dsgd::test::run_dsgd("train --steps 3 --nodes 3 --backend simgrid --payload phantom");
  INFO(phantom.err);
  CHECK(phantom.exit_code == 0);
  CHECK_THAT(phantom.out, Catch::Contains("phantom payloads: sizes only, nothing averaged"));
  const dsgd::test::CliResult measured =
      dsgd::test::run_dsgd("train --steps 3 --nodes 3 --backend simgrid --compute measured");
  INFO(measured.err);
  CHECK(measured.exit_code == 0);
  CHECK_THAT(measured.out, Catch::Contains("compute as measured"));
  const dsgd::test::CliResult on_nodes = dsgd::test::run_dsgd("train --steps 3 --compute measured");
  CHECK(on_nodes.exit_code == 2);
  CHECK_THAT(on_nodes.err, Catch::Contains("--compute measured runs on --backend simgrid only"));
}

// Elastic rounds run in one simulation, from the virtual time the round before ended. A fault
// by step fires at the same step on both backends, so the survivors end with the simulated
// nodes' parameters, under either policy.
TEST_CASE("dsgd train --backend simgrid --elastic goes on as simulated nodes do, bit for bit",
          "[simgrid][cli]") {
  dsgd::test::TempDir dir;
  const std::string base = "train --steps 30 --nodes 5 --latency 1ms --bandwidth 1Gbit ";
  const std::pair<std::string, std::string> runs[] = {
      {"--allreduce ring --elastic in-process --crash 1@10 --crash 3@20",
       "rank 3 lost after step 19: 3 ranks went on from step 19 (in-process)"},
      {"--elastic restart --checkpoint-every 5 --crash 2@12",
       "rank 2 lost after step 11: 4 ranks went on from step 10, 1 step lost (restart)"},
  };
  int k = 0;
  for (const auto& [flags, change] : runs) {
    const std::string tag = std::to_string(k++);
    // Each run its own checkpoints, where it writes them.
    const auto run = [&](const std::string& name, const std::string& backend) {
      std::string args = base + flags + " --save " + (dir / (name + tag + ".npz"));
      if (flags.find("--checkpoint-every") != std::string::npos)
        args += " --checkpoint-dir " + (dir / ("ck-" + name + tag));
      return dsgd::test::run_dsgd(args + backend);
    };
    const dsgd::test::CliResult sim = run("sim", "");
    const dsgd::test::CliResult sg = run("sg", " --backend simgrid");
    INFO(flags << "\n" << sim.out << sim.err << sg.out << sg.err);
    REQUIRE(sim.exit_code == 0);
    REQUIRE(sg.exit_code == 0);
    CHECK(dsgd::test::read_text(dir / ("sim" + tag + ".npz")) ==
          dsgd::test::read_text(dir / ("sg" + tag + ".npz")));
    CHECK_THAT(sg.out, Catch::Contains(change));
    CHECK_THAT(sim.out, Catch::Contains(change));
  }
  CHECK_THAT(dsgd::test::run_dsgd(base + "--elastic in-process --crash 1@10 --backend simgrid").out,
             Catch::Contains("dsgd train on 5 SimGrid ranks, 4 at the end (virtual time)"));
}

// Each step's model time, from `dsgd train --metrics`'s lines.
std::vector<double> step_model_times(const std::string& metrics) {
  std::vector<double> times;
  std::istringstream lines(dsgd::test::read_text(metrics));
  for (std::string line; std::getline(lines, line);)
    times.push_back(nlohmann::json::parse(line).at("model_s").get<double>());
  return times;
}

TEST_CASE(
    "SimGrid: DDP buckets overlap backward as on simulated nodes, with equal parameters "
    "and step times",
    "[simgrid][cli]") {
  dsgd::test::TempDir dir;
  // A bucket per layer (4, 10-257 KB), at 1 GFLOP/s: backward's 36 ms hide the buckets of
  // the upper layers (127 ms a step, against 147 with one all-reduce after backward).
  const std::string flags =
      "train --steps 6 --nodes 4 --model mlp:256,256,256 --latency 50us --bandwidth 100Mbit "
      "--gflops 1 --allreduce ring ";
  const auto run = [&](const std::string& name, const std::string& backend,
                       const std::string& buckets = "--bucket-mb 0.001 --first-bucket-mb 0.001") {
    const dsgd::test::CliResult r =
        dsgd::test::run_dsgd(fmt::format("{}--backend {} {} --save {} --metrics {}", flags, backend,
                                         buckets, dir / (name + ".npz"), dir / (name + ".jsonl")));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  };
  run("sim", "sim");
  const dsgd::test::CliResult sg = run("sg", "simgrid");
  CHECK_THAT(sg.out, Catch::Contains("buckets"));
  CHECK(dsgd::test::read_text(dir / "sim.npz") == dsgd::test::read_text(dir / "sg.npz"));
  const std::vector<double> sim = step_model_times(dir / "sim.jsonl");
  const std::vector<double> sgt = step_model_times(dir / "sg.jsonl");
  REQUIRE(sim.size() == 6);
  REQUIRE(sgt.size() == sim.size());
  for (size_t i = 0; i < sim.size(); ++i) {
    INFO("step " << i + 1 << ": sim " << sim[i] << " s, simgrid " << sgt[i] << " s");
    CHECK(sgt[i] == Approx(sim[i]).epsilon(1e-7));  // SimGrid's clock: to the nanosecond
  }
  // The overlap is real: without buckets the same run takes longer in model time.
  run("after", "simgrid", "--bucket-mb 0");
  CHECK(step_model_times(dir / "after.jsonl").back() > sgt.back() * 1.1);
  const dsgd::test::CliResult measured =
      dsgd::test::run_dsgd("train --steps 2 --backend simgrid --compute measured --bucket-mb 1");
  CHECK(measured.exit_code == 2);
  CHECK_THAT(measured.err, Catch::Contains("--bucket-mb 1 needs --compute flops"));
}

TEST_CASE("SimGrid: a crashed rank is lost to the others, as on simulated nodes",
          "[simgrid][cli]") {
  // At a step, at a time, and the shipped scenario (rank 1 at step 20): exit 3, the error
  // naming the crashed rank.
  const std::pair<const char*, const char*> runs[] = {
      {"--steps 10 --crash 1@5 --allreduce naive", "lost rank 1"},
      {"--steps 10 --crash 2@0.01s --latency 1ms", "lost rank 2"},
      {"--steps 30 --scenario crash --allreduce ring", "lost rank 1"},
  };
  for (const auto& [flags, lost] : runs)
    for (const char* backend : {"sim", "simgrid"}) {
      const dsgd::test::CliResult r =
          dsgd::test::run_dsgd(fmt::format("train -q --nodes 4 --backend {} {}", backend, flags));
      INFO(backend << " " << flags << ": " << r.err);
      CHECK(r.exit_code == 3);
      CHECK_THAT(r.err, Catch::Contains(lost));
    }
}

// A scenario of 6 nodes on `topology` with a per-link and a per-node override (latency and
// bandwidth both ways) and, for racks, a slower trunk.
std::string overridden_scenario(const std::string& topology) {
  return fmt::format(R"(nodes = 6
[network]
topology = "{}"
latency = "1ms"
bandwidth = "1Gbit"
[network.trunk]
latency = "300us"
bandwidth = "400Mbit"
[[network.link]]
from = 0
to = 1
bandwidth = "10Gbit"
latency = "3ms"
[[network.node]]
rank = 3
bandwidth = "100Mbit"
)",
                     topology);
}

TEST_CASE(
    "SimGrid: a scenario's network (overrides, racks, jitter, loss, outages) times each step "
    "as simulated nodes do",
    "[simgrid][cli]") {
  dsgd::test::TempDir dir;
  for (const char* topology : {"mesh", "switch", "racks"})
    std::ofstream(dir / (std::string(topology) + ".toml")) << overridden_scenario(topology);
  // The ring sends each link one message at a time, so no link is shared and SimGrid's fair
  // sharing and the simulated nodes' one-after-another agree; flaky-wan has jitter, 1 %
  // loss and a slower link, partition cuts the cluster in two for 250 ms.
  for (const std::string& scenario : {dir / "mesh.toml", dir / "switch.toml", dir / "racks.toml",
                                      std::string("flaky-wan"), std::string("partition")}) {
    std::vector<std::vector<double>> times;
    std::vector<std::string> params;
    for (const char* backend : {"sim", "simgrid"}) {
      const std::string name = std::to_string(times.size());
      const dsgd::test::CliResult r = dsgd::test::run_dsgd(fmt::format(
          "train -q --scenario {} --steps 8 --allreduce ring --backend {} --save {} --metrics {}",
          scenario, backend, dir / (name + ".npz"), dir / (name + ".jsonl")));
      INFO(scenario << " on " << backend << ": " << r.err);
      REQUIRE(r.exit_code == 0);
      times.push_back(step_model_times(dir / (name + ".jsonl")));
      params.push_back(dsgd::test::read_text(dir / (name + ".npz")));
    }
    INFO(scenario);
    CHECK(params[0] == params[1]);
    REQUIRE(times[0].size() == 8);
    REQUIRE(times[1].size() == 8);
    for (size_t i = 0; i < 8; ++i) {  // to SimGrid's solver precision (0.3 us in 127 ms)
      INFO("step " << i + 1);
      CHECK(times[1][i] == Approx(times[0][i]).epsilon(1e-5));
    }
  }
  // An outage that never heals: every rank ends up waiting, and the report says why.
  std::ofstream(dir / "down.toml") << "nodes = 3\n[network]\nlatency = \"1ms\"\n[[fault]]\n"
                                      "kind = \"link_down\"\nfrom = 0\nto = 1\nat = \"5ms\"\n";
  const dsgd::test::CliResult down = dsgd::test::run_dsgd(
      "train -q --scenario " + dir / "down.toml" + " --steps 10 --backend simgrid");
  CHECK(down.exit_code == 3);
  CHECK_THAT(down.err, Catch::Contains("rank 1 waits in recv from rank 0") &&
                           Catch::Contains("the link 0 -> 1 is down for good"));
  // What SimGrid's own links or LV08's corrections would not honour is refused.
  for (const std::string& refused : {"--scenario " + dir / "mesh.toml" + " --topology fat-tree",
                                     "--scenario " + dir / "mesh.toml" + " --network-model lv08"}) {
    const dsgd::test::CliResult r =
        dsgd::test::run_dsgd("train -q --steps 2 --backend simgrid " + refused);
    INFO(refused << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("per-link or per-node overrides"));
  }
}

TEST_CASE(
    "dsgd bench collective --backend simgrid times in virtual time, as the cost model "
    "predicts, and phantom payloads take the same time",
    "[simgrid][cli]") {
  dsgd::test::TempDir dir;
  const std::string flags =
      "bench collective --backend simgrid --algorithm ring --nodes 6 --latency 1ms "
      "--bandwidth 1Gbit --min-bytes 64K --max-bytes 4M --step-factor 8 --json ";
  const dsgd::test::CliResult real = dsgd::test::run_dsgd(flags + (dir / "real.json"));
  const dsgd::test::CliResult phantom =
      dsgd::test::run_dsgd(flags + (dir / "phantom.json") + " --payload phantom");
  INFO(real.out << real.err << phantom.out << phantom.err);
  REQUIRE(real.exit_code == 0);
  REQUIRE(phantom.exit_code == 0);
  const auto a = nlohmann::json::parse(dsgd::test::read_text(dir / "real.json"));
  const auto b = nlohmann::json::parse(dsgd::test::read_text(dir / "phantom.json"));
  CHECK(a["virtual_time"] == true);
  CHECK(a["payload"] == "real");
  CHECK(b["payload"] == "phantom");
  CHECK(a["wrong"] == 0);
  CHECK(b["wrong"].is_null());
  CHECK(a["iters"] == 1);
  REQUIRE(a["rows"].size() == 3);
  REQUIRE(b["rows"].size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const auto& row = a["rows"][i];
    INFO(row.dump());
    CHECK(std::abs(row["error_pct"].get<double>()) < 1.0);
    CHECK(row["wall_s"].get<double>() >= 0);
    CHECK(b["rows"][i]["time_us"] == row["time_us"]);
  }
  CHECK_THAT(phantom.out, Catch::Contains("results not checked (phantom payloads"));
  const dsgd::test::CliResult refused =
      dsgd::test::run_dsgd("bench collective --payload phantom --nodes 2");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("--payload phantom runs on --backend simgrid only"));
}

#else

TEST_CASE("SimGrid backend", "[simgrid]") {
  DSGD_SKIP_UNLESS("simgrid", false,
                   "this build has no SimGrid backend (apt-get install libsimgrid-dev)");
}

#endif
