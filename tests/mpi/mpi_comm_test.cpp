// The MPI backend's own test program, run under mpirun with 1 to 4 ranks (CTest: mpi_comm_N).
// Point-to-point (tags, order, any source, size mismatch, non-blocking, self, deadlines,
// events) and every collective with every algorithm it offers, dsgd's and native, on
// exact small-integer inputs (sums, products and maxima are exact in float in any order).
// Each failed check prints "rank R: FAIL ..."; the process exits 1 if any rank failed.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"
#include "core/mpi/preflight.h"

namespace {

using dsgd::Algorithm;
using dsgd::CollectiveOp;
using dsgd::Communicator;
using dsgd::ReduceOp;
using dsgd::mpi::MpiCommunicator;

// Counts failures; never aborts, so one run reports every failing check.
struct Checker {
  int rank = 0;
  int failures = 0;
  int checks = 0;
  void expect(bool ok, const std::string& what) {
    ++checks;
    if (ok) return;
    ++failures;
    fmt::print(stderr, "rank {}: FAIL {}\n", rank, what);
  }
};

// v(r, i): rank r's i-th input; 1..28, so a product over 4 ranks stays below 2^24.
float input(int r, size_t i) {
  return static_cast<float>((r % 4 + 1) * (i % 7 + 1));
}

float expected(ReduceOp op, int world, size_t i) {
  float acc = input(0, i);
  for (int r = 1; r < world; ++r) {
    const float v = input(r, i);
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        acc += v;
        break;
      case ReduceOp::MAX:
        acc = std::max(acc, v);
        break;
      case ReduceOp::MIN:
        acc = std::min(acc, v);
        break;
      case ReduceOp::PROD:
        acc *= v;
        break;
    }
  }
  return op == ReduceOp::AVG && world > 1 ? acc / static_cast<float>(world) : acc;
}

// First index where got differs from want, or -1.
long first_mismatch(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return static_cast<long>(i);
  return -1;
}

std::string show(const std::vector<float>& got, const std::vector<float>& want, long at) {
  if (got.size() != want.size()) return fmt::format("size {} vs {}", got.size(), want.size());
  return fmt::format("[{}] = {} (want {})", at, got[at], want[at]);
}

// ---------------------------------------------------------------------------------------
// Point-to-point
// ---------------------------------------------------------------------------------------

void test_tags_and_order(MpiCommunicator& comm, Checker& c) {
  if (comm.size() < 2 || comm.rank() > 1) return;
  if (comm.rank() == 0) {
    const std::vector<float> a{1, 2, 3}, b{4, 5}, c1{6}, c2{7}, c3{8};
    comm.send(a, 1, 1);
    comm.send(b, 1, 2);
    for (const auto* m : {&c1, &c2, &c3})
      comm.send(*m, 1, 3);
  } else {
    // Tag 2 first although tag 1 was sent first: tags select, they do not queue.
    std::vector<float> b(2), a(3), m(1);
    const dsgd::Status sb = comm.recv(b, 0, 2);
    comm.recv(a, 0, 1);
    c.expect(b == std::vector<float>{4, 5} && a == std::vector<float>{1, 2, 3},
             "p2p: messages selected by tag");
    c.expect(sb.source == 0 && sb.tag == 2 && sb.count == 2,
             fmt::format("p2p: status source {} tag {} count {}", sb.source, sb.tag, sb.count));
    for (float want : {6.f, 7.f, 8.f}) {
      comm.recv(m, 0, 3);
      c.expect(m[0] == want, fmt::format("p2p: same-tag order, got {} want {}", m[0], want));
    }
  }
}

void test_any_source(MpiCommunicator& comm, Checker& c) {
  const int tag = 5;
  if (comm.rank() != 0) {
    const std::vector<float> v{static_cast<float>(comm.rank())};
    comm.send(v, 0, tag);
    return;
  }
  std::set<int> seen;
  for (int i = 1; i < comm.size(); ++i) {
    std::vector<float> v(1);
    const dsgd::Status s = comm.recv(v, dsgd::kAnySource, tag);
    c.expect(static_cast<int>(v[0]) == s.source,
             fmt::format("any source: value {} from source {}", v[0], s.source));
    seen.insert(s.source);
  }
  c.expect(static_cast<int>(seen.size()) == comm.size() - 1, "any source: every rank heard once");
}

void test_size_mismatch(MpiCommunicator& comm, Checker& c) {
  if (comm.size() < 2 || comm.rank() > 1) return;
  if (comm.rank() == 1) {
    comm.send(std::vector<float>(5, 1.f), 0, 6);  // larger than the receive
    comm.send(std::vector<float>(3, 1.f), 0, 6);  // smaller than the receive
    return;
  }
  for (size_t sent : {5, 3}) {
    std::vector<float> buf(4);
    try {
      comm.recv(buf, 1, 6);
      c.expect(false, fmt::format("size mismatch: recv of 4 took a message of {}", sent));
    } catch (const dsgd::UsageError& e) {
      const std::string what = e.what();
      c.expect(what.find("holds 4 floats") != std::string::npos &&
                   what.find(fmt::format("has {} floats", sent)) != std::string::npos,
               "size mismatch message names both sizes: " + what);
    }
  }
}

void test_nonblocking(MpiCommunicator& comm, Checker& c) {
  // Everyone sends a large message (rendezvous, not eager) to the right and receives from
  // the left, both posted before either is waited for; receives complete through test().
  const int n = comm.size(), r = comm.rank();
  const size_t count = 1 << 18;
  std::vector<float> out(count), in(count, -1.f);
  for (size_t i = 0; i < count; ++i)
    out[i] = input(r, i);
  dsgd::Request recv = comm.irecv(in, (r - 1 + n) % n, 8);
  dsgd::Request send = comm.isend(out, (r + 1) % n, 8);
  dsgd::Status st;
  const auto deadline = dsgd::Clock::now() + std::chrono::seconds(20);
  while (!recv.test(&st) && dsgd::Clock::now() < deadline) {
  }
  send.wait();
  bool ok = st.count == count;
  for (size_t i = 0; ok && i < count; ++i)
    ok = in[i] == input((r - 1 + n) % n, i);
  c.expect(ok && st.source == (r - 1 + n) % n, "non-blocking ring exchange via test()");
  // Self-send: no network, same semantics.
  const std::vector<float> self_out{9, 8, 7};
  std::vector<float> self_in(3);
  dsgd::Request self = comm.isend(self_out, r, 9);
  comm.recv(self_in, r, 9);
  self.wait();
  c.expect(self_in == std::vector<float>{9, 8, 7}, "send to self");
}

void test_deadline(MpiCommunicator& comm, Checker& c) {
  if (comm.size() < 2 || comm.rank() > 1) return;
  const int tag = 10;
  if (comm.rank() == 0) {
    std::vector<float> buf(1);
    const auto t0 = dsgd::Clock::now();
    try {
      comm.recv(buf, 1, tag, dsgd::Deadline::after(std::chrono::milliseconds(300)));
      c.expect(false, "deadline: recv from a silent rank returned");
    } catch (const dsgd::TimeoutError& e) {
      const double s = std::chrono::duration<double>(dsgd::Clock::now() - t0).count();
      c.expect(e.peer() == 1 && std::string(e.what()).find("from rank 1") != std::string::npos,
               fmt::format("deadline: TimeoutError names rank 1: {}", e.what()));
      c.expect(s >= 0.29 && s < 5, fmt::format("deadline: fired after {:.3f} s (0.3 s)", s));
    }
    comm.send({}, 1, tag + 1);  // now tell rank 1 to send
    // The cancelled receive must not have taken this message.
    comm.recv(buf, 1, tag);
    c.expect(buf[0] == 42, "deadline: a cancelled receive leaves later messages alone");
  } else {
    comm.recv({}, 0, tag + 1);
    comm.send(std::vector<float>{42}, 0, tag);
  }
}

void test_events(MpiCommunicator& comm, Checker& c) {
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

// ---------------------------------------------------------------------------------------
// Collectives
// ---------------------------------------------------------------------------------------

constexpr Algorithm kAlgorithms[] = {
    Algorithm::automatic,        Algorithm::naive, Algorithm::ring, Algorithm::tree,
    Algorithm::halving_doubling, Algorithm::native};
constexpr ReduceOp kOps[] = {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::MAX, ReduceOp::MIN,
                             ReduceOp::PROD};

bool offers(CollectiveOp op, Algorithm a, int world) {
  try {
    dsgd::resolve_algorithm(op, a, world, 0);
    return true;
  } catch (const dsgd::UsageError&) {
    return false;
  }
}

std::vector<float> inputs(int r, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = input(r, i);
  return v;
}

void test_collectives(MpiCommunicator& comm, Checker& c) {
  const int n = comm.size(), r = comm.rank();
  const size_t sizes[] = {0, 1, static_cast<size_t>(std::max(n - 1, 0)), static_cast<size_t>(n + 1),
                          100003};
  for (Algorithm alg : kAlgorithms) {
    const dsgd::CollectiveOptions opt{.algorithm = alg};
    const std::string a = dsgd::to_string(alg);
    for (size_t count : sizes) {
      for (ReduceOp op : kOps) {
        if (offers(CollectiveOp::all_reduce, alg, n)) {
          std::vector<float> data = inputs(r, count), want(count);
          for (size_t i = 0; i < count; ++i)
            want[i] = expected(op, n, i);
          dsgd::all_reduce(comm, data, op, opt);
          const long bad = first_mismatch(data, want);
          c.expect(bad < 0, fmt::format("all_reduce {} {} c={}: {}", a, dsgd::to_string(op), count,
                                        bad < 0 ? "" : show(data, want, bad)));
        }
        if (offers(CollectiveOp::reduce, alg, n)) {
          const int root = n - 1;
          std::vector<float> data = inputs(r, count), want = inputs(r, count);
          if (r == root)
            for (size_t i = 0; i < count; ++i)
              want[i] = expected(op, n, i);
          dsgd::reduce(comm, data, op, root, opt);
          const long bad = first_mismatch(data, want);
          c.expect(bad < 0, fmt::format("reduce {} {} c={} root {}: {}", a, dsgd::to_string(op),
                                        count, root, bad < 0 ? "" : show(data, want, bad)));
        }
        if (offers(CollectiveOp::reduce_scatter, alg, n)) {
          // send row j of rank r: inputs(r, ...) shifted by j*count so rows differ.
          std::vector<float> send(n * count), recv(count, -1.f), want(count);
          for (int j = 0; j < n; ++j)
            for (size_t i = 0; i < count; ++i)
              send[j * count + i] = input(r, j * count + i);
          for (size_t i = 0; i < count; ++i)
            want[i] = expected(op, n, r * count + i);
          dsgd::reduce_scatter(comm, send, recv, op, opt);
          const long bad = first_mismatch(recv, want);
          c.expect(bad < 0, fmt::format("reduce_scatter {} {} c={}: {}", a, dsgd::to_string(op),
                                        count, bad < 0 ? "" : show(recv, want, bad)));
        }
      }
      if (offers(CollectiveOp::broadcast, alg, n))
        for (int root : {0, n - 1}) {
          std::vector<float> data = r == root ? inputs(root, count) : std::vector<float>(count);
          dsgd::broadcast(comm, data, root, opt);
          const long bad = first_mismatch(data, inputs(root, count));
          c.expect(bad < 0, fmt::format("broadcast {} c={} root {}: {}", a, count, root,
                                        bad < 0 ? "" : show(data, inputs(root, count), bad)));
        }
      if (offers(CollectiveOp::gather, alg, n)) {
        const int root = n / 2;
        std::vector<float> recv(r == root ? n * count : 0, -1.f), want;
        for (int j = 0; j < n; ++j) {
          const auto row = inputs(j, count);
          want.insert(want.end(), row.begin(), row.end());
        }
        dsgd::gather(comm, inputs(r, count), recv, root, opt);
        if (r == root) {
          const long bad = first_mismatch(recv, want);
          c.expect(bad < 0, fmt::format("gather {} c={} root {}: {}", a, count, root,
                                        bad < 0 ? "" : show(recv, want, bad)));
        }
      }
      if (offers(CollectiveOp::scatter, alg, n)) {
        const int root = n - 1;
        std::vector<float> send;
        if (r == root)
          for (int j = 0; j < n; ++j) {
            const auto row = inputs(j, count);
            send.insert(send.end(), row.begin(), row.end());
          }
        std::vector<float> recv(count, -1.f);
        dsgd::scatter(comm, send, recv, root, opt);
        const long bad = first_mismatch(recv, inputs(r, count));
        c.expect(bad < 0, fmt::format("scatter {} c={} root {}: {}", a, count, root,
                                      bad < 0 ? "" : show(recv, inputs(r, count), bad)));
      }
      if (offers(CollectiveOp::all_gather, alg, n)) {
        std::vector<float> recv(n * count, -1.f), want;
        for (int j = 0; j < n; ++j) {
          const auto row = inputs(j, count);
          want.insert(want.end(), row.begin(), row.end());
        }
        dsgd::all_gather(comm, inputs(r, count), recv, opt);
        const long bad = first_mismatch(recv, want);
        c.expect(bad < 0, fmt::format("all_gather {} c={}: {}", a, count,
                                      bad < 0 ? "" : show(recv, want, bad)));
      }
    }
    if (offers(CollectiveOp::barrier, alg, n)) dsgd::barrier(comm, opt);
  }
}

// The hooks themselves: native must really be MPI's (return true), not a silent fallback.
void test_native_hooks_used(MpiCommunicator& comm, Checker& c) {
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

void test_preflight(MpiCommunicator& comm, Checker& c) {
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

}  // namespace

int main() {
  dsgd::mpi::MpiSession session({.report_sigterm = false});
  int failures = 0, checks = 0;
  {
    MpiCommunicator comm;
    comm.set_timeout(std::chrono::seconds(30));
    Checker c{.rank = comm.rank()};
    using Test = void (*)(MpiCommunicator&, Checker&);
    const std::pair<const char*, Test> tests[] = {
        {"tags_and_order", test_tags_and_order},
        {"any_source", test_any_source},
        {"size_mismatch", test_size_mismatch},
        {"nonblocking", test_nonblocking},
        {"deadline", test_deadline},
        {"events", test_events},
        {"native_hooks_used", test_native_hooks_used},
        {"collectives", test_collectives},
        {"preflight", test_preflight},
    };
    for (const auto& [name, test] : tests) {
      try {
        test(comm, c);
      } catch (const std::exception& e) {
        c.expect(false, fmt::format("{}: threw {}", name, e.what()));
      }
      // Keep tests apart, so a failure in one cannot leave messages for the next.
      MPI_Barrier(MPI_COMM_WORLD);
    }
    failures = c.failures;
    checks = c.checks;
  }
  int total_failures = 0, total_checks = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, &total_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (session.world_rank() == 0)
    fmt::print("mpi_comm_test on {} rank{}: {} checks, {} failed\n", session.world_size(),
               session.world_size() == 1 ? "" : "s", total_checks, total_failures);
  return total_failures == 0 ? 0 : 1;
}
