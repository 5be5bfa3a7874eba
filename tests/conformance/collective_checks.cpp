// The collective part of the conformance suite: every collective with every algorithm it
// offers (resolve_algorithm's answer, so a new one is checked without editing this file),
// every ReduceOp, sizes {0, 1, R-1, R+1} and roots 0 and R-1, then one large case per
// algorithm (each at one world size; the ring's large enough to travel in segments), and
// bad arguments.
// R = world size, c = elements each rank contributes or receives; expectations are exact.
#include <algorithm>
#include <string>
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/collectives.h"
#include "core/errors.h"
#include "tests/conformance/communicator_suite.h"
#include "tests/conformance/exact_values.h"

namespace dsgd::conformance {

namespace {

constexpr ReduceOp kOps[] = {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::MAX, ReduceOp::MIN,
                             ReduceOp::PROD};
constexpr size_t kLargeCount = (size_t{1} << 20) + 3;  // 4 MiB of floats, not a multiple of P

std::vector<Algorithm> offered(CollectiveOp op, int world) {
  std::vector<Algorithm> out;
  for (Algorithm a : kAllAlgorithms) {
    try {
      resolve_algorithm(op, a, world, 0);
      out.push_back(a);
    } catch (const UsageError&) {
    }
  }
  return out;
}

std::vector<size_t> small_sizes(int world) {
  std::vector<size_t> s{0, 1, static_cast<size_t>(world - 1), static_cast<size_t>(world + 1)};
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

std::vector<int> roots(int world) {
  return world > 1 ? std::vector{0, world - 1} : std::vector{0};
}

// Row-major (R, c) of labels: row i is label(i, ...), what gather and all_gather produce.
float row_label(size_t j, size_t c) {
  return label(static_cast<int>(j / c), j % c);
}

std::vector<float> label_rows(int world, size_t c) {
  std::vector<float> rows(world * c);
  for (size_t j = 0; j < rows.size(); ++j)
    rows[j] = row_label(j, c);
  return rows;
}

struct Case {
  const char* op;
  Algorithm algorithm;
  size_t c;
  std::string describe(const std::string& more = "") const {
    return fmt::format("{} {} c={}{}", op, to_string(algorithm), c, more);
  }
};

void all_reduce_case(Communicator& comm, Report& report, Case k, ReduceOp op) {
  std::vector<float> data = small_values(comm.rank(), k.c);
  all_reduce(comm, data, op, {.algorithm = k.algorithm});
  report.expect_values(data, ExpectedReduction(op, comm.size()),
                       [&] { return k.describe(fmt::format(" {}", to_string(op))); });
}

// Root: the reduction; every other rank keeps its input.
void reduce_case(Communicator& comm, Report& report, Case k, ReduceOp op, int root) {
  const int r = comm.rank();
  std::vector<float> data = small_values(r, k.c);
  reduce(comm, data, op, root, {.algorithm = k.algorithm});
  const ExpectedReduction reduced(op, comm.size());
  report.expect_values(
      data, [&](size_t i) { return r == root ? reduced(i) : small_value(r, i); },
      [&] { return k.describe(fmt::format(" {} root {}", to_string(op), root)); });
}

void broadcast_case(Communicator& comm, Report& report, Case k, int root) {
  std::vector<float> data = comm.rank() == root ? labels(root, k.c) : std::vector(k.c, kUntouched);
  broadcast(comm, data, root, {.algorithm = k.algorithm});
  report.expect_values(
      data, [&](size_t i) { return label(root, i); },
      [&] { return k.describe(fmt::format(" root {}", root)); });
}

// Off the root, the (R, c) buffer is empty or (with `full_off_root`) full size and left
// untouched.
void gather_case(Communicator& comm, Report& report, Case k, int root, bool full_off_root) {
  const bool is_root = comm.rank() == root;
  std::vector<float> rows(is_root || full_off_root ? comm.size() * k.c : 0, kUntouched);
  gather(comm, labels(comm.rank(), k.c), rows, root, {.algorithm = k.algorithm});
  report.expect_values(
      rows, [&](size_t j) { return is_root ? row_label(j, k.c) : kUntouched; },
      [&] { return k.describe(fmt::format(" root {}", root)); });
}

void scatter_case(Communicator& comm, Report& report, Case k, int root, bool full_off_root) {
  const int r = comm.rank();
  std::vector<float> rows = r == root       ? label_rows(comm.size(), k.c)
                            : full_off_root ? std::vector(comm.size() * k.c, kUntouched)
                                            : std::vector<float>{};
  std::vector<float> mine(k.c, kUntouched);
  scatter(comm, rows, mine, root, {.algorithm = k.algorithm});
  report.expect_values(
      mine, [&](size_t i) { return label(r, i); },
      [&] { return k.describe(fmt::format(" root {}", root)); });
}

void all_gather_case(Communicator& comm, Report& report, Case k) {
  std::vector<float> rows(comm.size() * k.c, kUntouched);
  all_gather(comm, labels(comm.rank(), k.c), rows, {.algorithm = k.algorithm});
  report.expect_values(
      rows, [&](size_t j) { return row_label(j, k.c); }, [&] { return k.describe(); });
}

// Rank r gets row r of the reduction of every rank's (R, c) buffer.
void reduce_scatter_case(Communicator& comm, Report& report, Case k, ReduceOp op) {
  const size_t first = comm.rank() * k.c;
  std::vector<float> mine(k.c, kUntouched);
  reduce_scatter(comm, small_values(comm.rank(), comm.size() * k.c), mine, op,
                 {.algorithm = k.algorithm});
  const ExpectedReduction reduced(op, comm.size());
  report.expect_values(
      mine, [&](size_t i) { return reduced(first + i); },
      [&] { return k.describe(fmt::format(" {}", to_string(op))); });
}

void rooted_cases(Communicator& comm, Report& report, size_t c, int root) {
  const int n = comm.size();
  const bool full_off_root = root != 0;  // one root each way
  for (Algorithm a : offered(CollectiveOp::reduce, n))
    for (ReduceOp op : kOps)
      reduce_case(comm, report, {"reduce", a, c}, op, root);
  for (Algorithm a : offered(CollectiveOp::broadcast, n))
    broadcast_case(comm, report, {"broadcast", a, c}, root);
  for (Algorithm a : offered(CollectiveOp::gather, n))
    gather_case(comm, report, {"gather", a, c}, root, full_off_root);
  for (Algorithm a : offered(CollectiveOp::scatter, n))
    scatter_case(comm, report, {"scatter", a, c}, root, full_off_root);
}

// barrier with every algorithm it offers. A user message sent before them (tag 0) is
// received intact after them: collective traffic has tags of its own.
void check_barrier(Communicator& comm, Report& report) {
  const int n = comm.size(), r = comm.rank(), left = (r + n - 1) % n;
  const std::vector<float> out{static_cast<float>(r)};
  Request sent = comm.isend(out, (r + 1) % n, 0);
  for (Algorithm a : offered(CollectiveOp::barrier, n))
    barrier(comm, {.algorithm = a});
  std::vector<float> in(1, kUntouched);
  const Status s = comm.recv(in, kAnySource, 0);
  comm.wait(sent);
  report.expect(in[0] == left && s.source == left, [&] {
    return fmt::format("a user message across barriers: {} from rank {}", in[0], s.source);
  });
}

}  // namespace

void check_collectives(Communicator& comm, Report& report) {
  const int n = comm.size();
  for (size_t c : small_sizes(n)) {
    for (Algorithm a : offered(CollectiveOp::all_reduce, n))
      for (ReduceOp op : kOps)
        all_reduce_case(comm, report, {"all_reduce", a, c}, op);
    for (int root : roots(n))
      rooted_cases(comm, report, c, root);
    for (Algorithm a : offered(CollectiveOp::all_gather, n))
      all_gather_case(comm, report, {"all_gather", a, c});
    for (Algorithm a : offered(CollectiveOp::reduce_scatter, n))
      for (ReduceOp op : kOps)
        reduce_scatter_case(comm, report, {"reduce_scatter", a, c}, op);
  }
  check_barrier(comm, report);
}

namespace {

// The large cases: one per algorithm, each at one world size, so that a sweep over
// R = 1..9 runs each once (CI time) and every op appears. all_reduce's ring runs where its
// chunks are uneven and each travels as two segments (more than kRingSegmentFloats);
// halving-doubling where it folds (R not a power of two); broadcast's chain where it
// travels in segments. The other collectives have one algorithm each (auto, also under its
// own name) and the backend's own (native).
struct LargeAllReduce {
  int world;
  Algorithm algorithm;
  ReduceOp op;
};
constexpr LargeAllReduce kLargeAllReduce[] = {
    {3, Algorithm::ring, ReduceOp::AVG},   {4, Algorithm::naive, ReduceOp::PROD},
    {5, Algorithm::tree, ReduceOp::MAX},   {6, Algorithm::halving_doubling, ReduceOp::SUM},
    {7, Algorithm::native, ReduceOp::MIN}, {8, Algorithm::automatic, ReduceOp::SUM}};
struct LargeRowOps {
  int world;
  Algorithm algorithm;
};
constexpr LargeRowOps kLargeRowOps[] = {{2, Algorithm::native}, {9, Algorithm::automatic}};
// The chain broadcast where its buffer travels as three segments, from a root whose chain
// wraps round the ring.
constexpr int kLargeChainWorld = 4;
constexpr size_t kLargeChainCount = 2 * kRingSegmentFloats + 1;

// Broadcast and reduce of kLargeCount floats; the row ops with (R, c) buffers of about
// kLargeCount floats.
void large_row_ops(Communicator& comm, Report& report, Algorithm a) {
  const int n = comm.size();
  const size_t c = kLargeCount / n;
  broadcast_case(comm, report, {"broadcast", a, kLargeCount}, n - 1);
  reduce_case(comm, report, {"reduce", a, kLargeCount}, ReduceOp::SUM, 0);
  gather_case(comm, report, {"gather", a, c}, n - 1, false);
  scatter_case(comm, report, {"scatter", a, c}, 0, false);
  all_gather_case(comm, report, {"all_gather", a, c});
  reduce_scatter_case(comm, report, {"reduce_scatter", a, c}, ReduceOp::MIN);
}

}  // namespace

void check_large_collectives(Communicator& comm, Report& report) {
  const int n = comm.size();
  for (const LargeAllReduce& k : kLargeAllReduce) {
    if (k.world != n) continue;
    const size_t count =
        k.algorithm == Algorithm::ring ? n * (kRingSegmentFloats + 1) + 1 : kLargeCount;
    if (k.algorithm == Algorithm::ring)
      report.expect(ring_segments(Chunks{count, n}.max_size()) >= 2,
                    "the large ring case has one segment a chunk");
    all_reduce_case(comm, report, {"all_reduce", k.algorithm, count}, k.op);
  }
  for (const LargeRowOps& k : kLargeRowOps)
    if (k.world == n) large_row_ops(comm, report, k.algorithm);
  if (n == kLargeChainWorld) {
    report.expect(ring_segments(kLargeChainCount) == 3, "the large chain case is not 3 segments");
    broadcast_case(comm, report, {"broadcast", Algorithm::ring, kLargeChainCount}, 2);
  }
}

namespace {

// Runs `call`, which every rank gets wrong alike (so each throws before sending), and
// checks that it is a UsageError saying each of `parts`.
template <typename Call>
void expect_usage_error(Report& report, const char* what, Call&& call,
                        std::initializer_list<std::string> parts) {
  std::string message = "no error";
  try {
    call();
  } catch (const UsageError& e) {
    message = e.what();
  }
  report.expect(
      std::all_of(parts.begin(), parts.end(),
                  [&](const std::string& p) { return message.find(p) != std::string::npos; }),
      [&] { return fmt::format("{}: {}", what, message); });
}

}  // namespace

// Wrong buffer sizes name both sizes; bad roots and algorithms an op lacks are refused.
void check_collective_arguments(Communicator& comm, Report& report) {
  const int n = comm.size(), r = comm.rank();
  const std::string world = fmt::format("{} ranks x ", n);
  std::vector<float> four(4), rows_plus_one(4 * n + 1), rows(4 * n);
  expect_usage_error(report, "all_gather into R*c + 1",
                     [&] { all_gather(comm, four, rows_plus_one); },
                     {fmt::format("recv holds {} floats", 4 * n + 1), world + "4 floats",
                      fmt::format("= {}", 4 * n)});
  expect_usage_error(report, "reduce_scatter from R*c + 1",
                     [&] { reduce_scatter(comm, rows_plus_one, four); },
                     {fmt::format("send holds {} floats", 4 * n + 1), fmt::format("= {}", 4 * n)});
  // Off the root the (R, c) buffer may be empty or full, so 1 float is wrong there too.
  std::vector<float> short_rows(r == 0 ? 4 * n - 1 : 1);
  expect_usage_error(report, "gather into a short (R, c)",
                     [&] { gather(comm, four, short_rows, 0); },
                     {fmt::format("gather: rank {}'s recv holds {} floats", r, short_rows.size()),
                      fmt::format("= {}", 4 * n)});
  std::vector<float> long_rows(r == n - 1 ? 4 * n + 1 : 1);
  expect_usage_error(report, "scatter from a long (R, c)",
                     [&] { scatter(comm, long_rows, four, n - 1); },
                     {fmt::format("scatter: rank {}'s send holds {} floats", r, long_rows.size())});
  expect_usage_error(report, "broadcast from root R", [&] { broadcast(comm, four, n); },
                     {fmt::format("root {} is not a rank of a world of {}", n, n)});
  expect_usage_error(report, "all_gather with the tree algorithm",
                     [&] { all_gather(comm, four, rows, {.algorithm = Algorithm::tree}); },
                     {"all_gather: algorithm tree is for all_reduce"});
}

}  // namespace dsgd::conformance
