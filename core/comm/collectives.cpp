// Dispatch for all_reduce, plus broadcast, reduce and barrier over point-to-point.
// R = world size, r = this rank, v = r's rank relative to the root ((r - root) mod R).
#include "core/comm/collectives.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {
namespace {

void check_root(const Communicator& comm, int root, const char* op) {
  if (root < 0 || root >= comm.size())
    throw UsageError(
        fmt::format("{}: root {} is not a rank of a world of {}", op, root, comm.size()));
}

// Marks a collective in the event stream (trace slices, GUI, lessons).
class CollectiveScope {
 public:
  CollectiveScope(Communicator& comm, const char* op, size_t bytes) : comm_(comm), op_(op) {
    if (comm_.events())
      comm_.emit({.kind = EventKind::collective_begin, .bytes = bytes, .op = op_});
    bytes_ = bytes;
  }
  ~CollectiveScope() {
    if (comm_.events()) comm_.emit({.kind = EventKind::collective_end, .bytes = bytes_, .op = op_});
  }

 private:
  Communicator& comm_;
  const char* op_;
  size_t bytes_ = 0;
};

}  // namespace

const char* to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::automatic:
      return "auto";
    case Algorithm::naive:
      return "naive";
    case Algorithm::ring:
      return "ring";
    case Algorithm::tree:
      return "tree";
    case Algorithm::halving_doubling:
      return "halving_doubling";
    case Algorithm::native:
      return "native";
  }
  return "?";
}

Algorithm parse_algorithm(const std::string& text) {
  for (Algorithm a : {Algorithm::automatic, Algorithm::naive, Algorithm::ring, Algorithm::native})
    if (text == to_string(a)) return a;
  throw UsageError(
      fmt::format("unknown all-reduce algorithm '{}': use auto, naive, ring or native", text));
}

// Binomial tree from the root: in round k, every rank that already has the data sends it
// 2^k ranks further. R-1 messages, ceil(log2 R) rounds.
void broadcast(Communicator& comm, std::span<float> data, int root) {
  check_root(comm, root, "broadcast");
  CollectiveScope scope(comm, "broadcast", data.size_bytes());
  const int n = comm.size();
  const int v = (comm.rank() - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (v & mask) {
      comm.recv(data, (v - mask + root) % n, collective_tag::kBroadcast);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < n) comm.send(data, (v + mask + root) % n, collective_tag::kBroadcast);
}

// Binomial tree towards the root, the mirror image of broadcast.
void reduce(Communicator& comm, std::span<float> data, ReduceOp op, int root) {
  check_root(comm, root, "reduce");
  CollectiveScope scope(comm, "reduce", data.size_bytes());
  const int n = comm.size();
  const int v = (comm.rank() - root + n) % n;
  // Non-roots leave their input untouched, so they accumulate into a copy.
  std::vector<float> copy;
  std::span<float> acc = data;
  if (v != 0) {
    copy.assign(data.begin(), data.end());
    acc = copy;
  }
  std::vector<float> incoming(data.size());
  for (int mask = 1; mask < n; mask <<= 1) {
    if (v & mask) {
      comm.send(acc, (v - mask + root) % n, collective_tag::kReduce);
      return;
    }
    if (v + mask < n) {
      comm.recv(incoming, (v + mask + root) % n, collective_tag::kReduce);
      reduce_into(acc, incoming, op);
    }
  }
  finish_reduce(acc, op, n);  // only the root gets here
}

void all_reduce(Communicator& comm, std::span<float> data, ReduceOp op,
                const CollectiveOptions& options) {
  CollectiveScope scope(comm, "all_reduce", data.size_bytes());
  if (comm.size() == 1) {
    finish_reduce(data, op, 1);
    return;
  }
  switch (options.algorithm) {
    case Algorithm::naive:
      all_reduce_naive(comm, data, op);
      return;
    case Algorithm::native:
      if (comm.native_all_reduce(data, op)) return;
      [[fallthrough]];
    case Algorithm::tree:              // until implemented (collectives issue)
    case Algorithm::halving_doubling:  // until implemented
    case Algorithm::ring:
    case Algorithm::automatic:
      all_reduce_ring(comm, data, op);
      return;
  }
}

// Dissemination barrier: in round k rank r signals r + 2^k and waits for r - 2^k.
// After ceil(log2 R) rounds every rank has (transitively) heard from every other.
void barrier(Communicator& comm) {
  CollectiveScope scope(comm, "barrier", 0);
  const int n = comm.size();
  const int r = comm.rank();
  for (int dist = 1; dist < n; dist <<= 1) {
    Request sent = comm.isend({}, (r + dist) % n, collective_tag::kBarrier);
    comm.recv({}, (r - dist + n) % n, collective_tag::kBarrier);
    sent.wait();
  }
}

}  // namespace dsgd
