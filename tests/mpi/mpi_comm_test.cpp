// The MPI backend's test program, run under mpirun (CTest: mpi_comm_*): the Communicator
// conformance suite (tests/conformance/) on MPI ranks, then what only the MPI backend has:
// events, MPI's own collectives behind the native hooks, and preflight.
// Usage: mpi_comm_test [ROUND ...]. A round "a,b,..." splits MPI_COMM_WORLD into consecutive
// groups of a, b, ... ranks (adding up to the world size), each a world of its own running
// the suite at the same time, so one launch covers several world sizes; no round given:
// the whole world. Each failed check prints "R=3 rank 1: ..."; the exit code is 1 if any
// rank failed, 2 for bad arguments.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"
#include "core/mpi/preflight.h"
#include "tests/conformance/communicator_suite.h"

namespace {

using dsgd::Communicator;
using dsgd::ReduceOp;
using dsgd::conformance::Report;
using dsgd::mpi::MpiCommunicator;

void test_events(MpiCommunicator& comm, Report& c) {
  if (comm.size() < 2 || comm.rank() > 1) return;
  dsgd::EventBuffer events;
  comm.set_events(&events);
  if (comm.rank() == 0) {
    comm.send(std::vector<float>{1, 2}, 1, 12);
  } else {
    std::vector<float> v(2);
    comm.recv(v, 0, 12);
  }
  comm.set_events(nullptr);
  const auto got = events.snapshot();
  if (comm.rank() == 0) {
    c.expect(got.size() == 1 && got[0].kind == dsgd::EventKind::send_begin && got[0].peer == 1 &&
                 got[0].bytes == 8 && got[0].preview_count == 2 && got[0].preview[1] == 2,
             "events: send_begin");
  } else {
    c.expect(got.size() == 2 && got[0].kind == dsgd::EventKind::recv_begin &&
                 got[1].kind == dsgd::EventKind::recv_end && got[1].peer == 0 &&
                 got[1].bytes == 8 && got[1].tag == 12,
             "events: recv_begin, recv_end");
  }
}

// The hooks themselves: native must really be MPI's (return true), not a silent fallback.
void test_native_hooks_used(MpiCommunicator& comm, Report& c) {
  const int n = comm.size();
  std::vector<float> data(10, 1.f), rows(10 * n);
  c.expect(comm.native_all_reduce(data, ReduceOp::SUM) && data[0] == n,
           "native_all_reduce is MPI_Allreduce");
  c.expect(comm.native_broadcast(data, 0), "native_broadcast is MPI_Bcast");
  c.expect(comm.native_reduce(data, ReduceOp::MAX, 0), "native_reduce is MPI_Reduce");
  c.expect(comm.native_all_gather(std::vector<float>(10, 2.f), rows) && rows.back() == 2,
           "native_all_gather is MPI_Allgather");
  c.expect(comm.native_reduce_scatter(std::vector<float>(10 * n, 1.f), data, ReduceOp::SUM) &&
               data[0] == n,
           "native_reduce_scatter is MPI_Reduce_scatter_block");
  c.expect(comm.native_gather(data, rows, 0) && comm.native_scatter(rows, data, 0),
           "native_gather / native_scatter are MPI_Gather / MPI_Scatter");
  c.expect(comm.native_barrier(), "native_barrier is MPI_Barrier");
}

void test_preflight(MpiCommunicator& comm, Report& c) {
  // Everyone agrees: no error, and hosts are known afterwards.
  const auto ranks = dsgd::mpi::preflight(comm, {.config_hash = 7, .data_hash = 9});
  c.expect(static_cast<int>(ranks.size()) == comm.size() && ranks[0].version == DSGD_VERSION,
           "preflight: identities of every rank");
  c.expect(comm.describe(comm.size() - 1).find("(host ") != std::string::npos,
           "preflight: peers' hosts known");
  if (comm.size() < 2) return;
  // The last rank disagrees: every rank gets the same UsageError naming it.
  const bool odd = comm.rank() == comm.size() - 1;
  try {
    dsgd::mpi::preflight(comm, {.config_hash = 7, .data_hash = odd ? 10u : 9u});
    c.expect(false, "preflight: a data mismatch passed");
  } catch (const dsgd::UsageError& e) {
    const std::string what = e.what();
    c.expect(what.find(fmt::format("rank {} (host ", comm.size() - 1)) != std::string::npos &&
                 what.find("dataset hash") != std::string::npos,
             "preflight: mismatch names the rank, host and field: " + what);
  }
}

// ---------------------------------------------------------------------------------------
// Rounds of the conformance suite
// ---------------------------------------------------------------------------------------

// "4,5" -> {4, 5}; empty when malformed or not adding up to `world`.
std::vector<int> parse_round(const std::string& text, int world) {
  std::vector<int> sizes;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    char* end = nullptr;
    const long n = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || n < 1) return {};
    sizes.push_back(static_cast<int>(n));
    at = comma + 1;
  }
  return std::accumulate(sizes.begin(), sizes.end(), 0) == world ? sizes : std::vector<int>{};
}

void print_failures(const Report& report) {
  for (const std::string& line : report.failures())
    fmt::print(stderr, "FAIL {}\n", line);
}

// Runs the suite in this rank's group of `sizes`; returns {checks, failures}. A check
// that throws leaves the group's other ranks waiting: the job is aborted.
std::pair<int, int> run_round(const std::vector<int>& sizes, int world_rank) {
  int group = 0;
  for (int first = sizes[0]; world_rank >= first; first += sizes[++group]) {
  }
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, group, world_rank, &sub);
  MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
  std::pair<int, int> counts;
  {
    MpiCommunicator comm(sub);
    comm.set_timeout(std::chrono::seconds(30));
    Report report(fmt::format("R={} rank {}", comm.size(), comm.rank()));
    try {
      dsgd::conformance::run_communicator_suite(comm, report);
    } catch (const std::exception& e) {
      print_failures(report);
      fmt::print(stderr, "{}: aborting the job\n", report.who());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    print_failures(report);
    counts = {report.checks(), static_cast<int>(report.failures().size())};
  }
  MPI_Comm_free(&sub);
  return counts;
}

// What only the MPI backend has, on the whole world.
std::pair<int, int> run_mpi_checks() {
  MpiCommunicator comm;
  comm.set_timeout(std::chrono::seconds(30));
  Report report(fmt::format("R={} rank {} (MPI)", comm.size(), comm.rank()));
  using Test = void (*)(MpiCommunicator&, Report&);
  const std::pair<const char*, Test> tests[] = {
      {"events", test_events},
      {"native_hooks_used", test_native_hooks_used},
      {"preflight", test_preflight},
  };
  for (const auto& [name, test] : tests) {
    try {
      test(comm, report);
    } catch (const std::exception& e) {
      report.fail(fmt::format("{}: threw {}", name, e.what()));
    }
    MPI_Barrier(MPI_COMM_WORLD);  // a failure in one cannot leave messages for the next
  }
  print_failures(report);
  return {report.checks(), static_cast<int>(report.failures().size())};
}

}  // namespace

int main(int argc, char** argv) {
  dsgd::mpi::MpiSession session({.report_sigterm = false});
  const int world = session.world_size();
  std::vector<std::vector<int>> rounds;
  for (int i = 1; i < argc; ++i) {
    rounds.push_back(parse_round(argv[i], world));
    if (!rounds.back().empty()) continue;
    if (session.world_rank() == 0)
      fmt::print(stderr, "mpi_comm_test: round '{}' is not sizes adding up to {} (e.g. 4,5)\n",
                 argv[i], world);
    return 2;
  }
  if (rounds.empty()) rounds.push_back({world});
  int mine[2] = {0, 0};  // checks, failures
  for (const auto& sizes : rounds) {
    const auto [checks, failures] = run_round(sizes, session.world_rank());
    mine[0] += checks;
    mine[1] += failures;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  const auto [checks, failures] = run_mpi_checks();
  mine[0] += checks;
  mine[1] += failures;
  int total[2] = {0, 0};
  MPI_Allreduce(mine, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (session.world_rank() == 0) {
    std::string shapes;
    for (const auto& sizes : rounds)
      shapes += fmt::format(" [{}]", fmt::join(sizes, ","));
    fmt::print("mpi_comm_test on {} rank{}, groups{}: {} checks, {} failed\n", world,
               world == 1 ? "" : "s", shapes, total[0], total[1]);
  }
  return total[1] == 0 ? 0 : 1;
}
