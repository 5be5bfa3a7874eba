// The collectives' entry points: names, algorithm choice, size checks, events, and the
// dispatch to a backend's native collective or to dsgd's own algorithm (one per file).
// R = world size, r = this rank, c = elements per rank (gather, scatter, all_gather,
// reduce_scatter).
#include "core/comm/collectives.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/comm/collective_scope.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"

namespace dsgd {
namespace {

constexpr CollectiveOp kAllOps[] = {CollectiveOp::broadcast,      CollectiveOp::reduce,
                                    CollectiveOp::all_reduce,     CollectiveOp::gather,
                                    CollectiveOp::scatter,        CollectiveOp::all_gather,
                                    CollectiveOp::reduce_scatter, CollectiveOp::barrier};

// Whether a reduction tries the backend's own: asked for, and over float32 values (a
// backend's reduction knows nothing of dsgd's packed 16-bit floats: those take dsgd's).
bool asks_native(const CollectiveOptions& options, const Reduction& r) {
  return options.algorithm == Algorithm::native && r.wire == WireFormat::f32;
}

void check_root(const Communicator& comm, int root, const char* op) {
  if (root < 0 || root >= comm.size())
    throw UsageError(
        fmt::format("{}: root {} is not a rank of a world of {}", op, root, comm.size()));
}

// The (R, c) buffer of a rank must hold R * c floats; where `may_be_empty`, it may also
// be empty (the non-root side of gather and scatter, which never touches it).
void check_rows(const Communicator& comm, const char* op, const char* name, size_t have,
                size_t per_rank, const char* per_rank_name, bool may_be_empty) {
  const size_t need = per_rank * comm.size();
  if (have == need || (may_be_empty && have == 0)) return;
  throw UsageError(fmt::format(
      "{}: rank {}'s {} holds {} floats, but {} ranks x {} floats ({}) = {} are needed{}", op,
      comm.rank(), name, have, comm.size(), per_rank, per_rank_name, need,
      may_be_empty ? " (or none, off the root)" : ""));
}

void copy_floats(std::span<const float> from, std::span<float> to) {
  if (!from.empty() && from.data() != to.data())
    std::memmove(to.data(), from.data(), from.size_bytes());
}

// The algorithms of every op but all_reduce; the first is automatic's choice.
constexpr Algorithm kTree[] = {Algorithm::tree};
constexpr Algorithm kTreeOrRing[] = {Algorithm::tree, Algorithm::ring};
constexpr Algorithm kDirect[] = {Algorithm::naive};
constexpr Algorithm kRing[] = {Algorithm::ring};
constexpr Algorithm kDissemination[] = {Algorithm::automatic};

std::span<const Algorithm> offered_algorithms(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::broadcast:
      return kTreeOrRing;
    case CollectiveOp::reduce:
      return kTree;
    case CollectiveOp::gather:
    case CollectiveOp::scatter:
      return kDirect;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return kRing;
    case CollectiveOp::barrier:
    case CollectiveOp::all_reduce:
      break;
  }
  return kDissemination;
}

// "has one algorithm (ring)" or "offers tree (binomial tree) and ring (chain along the ring)".
std::string describe_offered(CollectiveOp op) {
  const std::span<const Algorithm> offered = offered_algorithms(op);
  if (offered.size() == 1)
    return fmt::format("has one algorithm ({})", algorithm_label(op, offered[0]));
  std::string list;
  for (size_t i = 0; i < offered.size(); ++i)
    list += fmt::format("{}{} ({})",
                        i == 0                    ? ""
                        : i + 1 == offered.size() ? " and "
                                                  : ", ",
                        to_string(offered[i]), algorithm_label(op, offered[i]));
  return "offers " + list;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Names and choice
// ---------------------------------------------------------------------------------------

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
    case Algorithm::recursive_doubling:
      return "recursive_doubling";
    case Algorithm::native:
      return "native";
  }
  return "?";
}

Algorithm parse_algorithm(const std::string& text) {
  for (Algorithm a : kAllAlgorithms)
    if (text == to_string(a)) return a;
  throw UsageError(
      fmt::format("unknown algorithm '{}': use {}", text, algorithm_names(", ", " or ")));
}

std::string algorithm_names(const char* separator, const char* last) {
  std::string names;
  const size_t n = std::size(kAllAlgorithms);
  for (size_t i = 0; i < n; ++i)
    names += (i == 0       ? ""
              : i + 1 == n ? last
                           : separator) +
             std::string(to_string(kAllAlgorithms[i]));
  return names;
}

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::broadcast:
      return "broadcast";
    case CollectiveOp::reduce:
      return "reduce";
    case CollectiveOp::all_reduce:
      return "all_reduce";
    case CollectiveOp::gather:
      return "gather";
    case CollectiveOp::scatter:
      return "scatter";
    case CollectiveOp::all_gather:
      return "all_gather";
    case CollectiveOp::reduce_scatter:
      return "reduce_scatter";
    case CollectiveOp::barrier:
      return "barrier";
  }
  return "?";
}

CollectiveOp parse_collective_op(const std::string& text) {
  for (CollectiveOp op : kAllOps)
    if (text == to_string(op)) return op;
  throw UsageError(
      fmt::format("unknown collective '{}': use all_reduce, broadcast, reduce, all_gather, "
                  "reduce_scatter, gather, scatter or barrier",
                  text));
}

Algorithm resolve_algorithm(CollectiveOp op, Algorithm requested, int world, size_t bytes) {
  if (requested == Algorithm::native) requested = Algorithm::automatic;
  if (op != CollectiveOp::all_reduce) {
    const std::span<const Algorithm> offered = offered_algorithms(op);
    if (requested == Algorithm::automatic) return offered[0];
    for (Algorithm a : offered)
      if (a == requested) return a;
    throw UsageError(
        fmt::format("{}: algorithm {} is for all_reduce; {} {}, chosen by auto (or "
                    "the backend's own: native)",
                    to_string(op), to_string(requested), to_string(op), describe_offered(op)));
  }
  if (requested != Algorithm::automatic) return requested;
  // The fastest under the cost model on a nominal link; ties go to the earlier entry (so
  // the tree, not recursive doubling, where both take as many message times for a short
  // message: on 3 and 7 ranks). naive is left out: the per-link model lets its root send to R-1
  // ranks at once, which a real NIC does not, so the model flatters it.
  Algorithm best = Algorithm::ring;
  double best_s = collective_cost(op, best, world, bytes).predict_s(kAutoAlphaS, kAutoBandwidthBps);
  for (Algorithm a :
       {Algorithm::halving_doubling, Algorithm::tree, Algorithm::recursive_doubling}) {
    const double t = collective_cost(op, a, world, bytes).predict_s(kAutoAlphaS, kAutoBandwidthBps);
    if (t < best_s) best = a, best_s = t;
  }
  return best;
}

const char* algorithm_label(CollectiveOp op, Algorithm resolved) {
  switch (resolved) {
    case Algorithm::naive:
      return op == CollectiveOp::all_reduce ? "naive (reduce to rank 0, send back)"
                                            : "direct (root to/from every rank)";
    case Algorithm::ring:
      return op == CollectiveOp::broadcast ? "chain along the ring" : "ring";
    case Algorithm::tree:
      return op == CollectiveOp::all_reduce ? "binomial tree reduce + broadcast" : "binomial tree";
    case Algorithm::halving_doubling:
      return "recursive halving-doubling (Rabenseifner)";
    case Algorithm::recursive_doubling:
      return "recursive doubling (whole buffers)";
    case Algorithm::automatic:
      return op == CollectiveOp::barrier ? "dissemination" : "auto";
    case Algorithm::native:
      return "native";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// Entry points. Each: check, mark, try the backend's own when asked, else dsgd's own.
// ---------------------------------------------------------------------------------------

void broadcast(Communicator& comm, std::span<float> data, int root,
               const CollectiveOptions& options) {
  check_root(comm, root, "broadcast");
  const Algorithm algorithm =
      resolve_algorithm(CollectiveOp::broadcast, options.algorithm, comm.size(), data.size_bytes());
  CollectiveScope scope(comm, "broadcast", data.size_bytes());
  if (comm.size() == 1) return;
  if (options.algorithm == Algorithm::native && comm.native_broadcast(data, root)) return;
  if (algorithm == Algorithm::ring)
    broadcast_chain(comm, data, root);
  else
    broadcast_binomial(comm, data, root);
}

void reduce(Communicator& comm, std::span<float> data, Reduction op, int root,
            const CollectiveOptions& options) {
  check_root(comm, root, "reduce");
  op.phantom = comm.phantom();
  resolve_algorithm(CollectiveOp::reduce, options.algorithm, comm.size(), data.size_bytes());
  CollectiveScope scope(comm, "reduce", data.size_bytes());
  const int n = comm.size();
  if (n > 1 && asks_native(options, op) && comm.native_reduce(data, op.op, root)) return;
  if (comm.rank() == root) {
    reduce_binomial(comm, data, op, root);
    finish_reduce(data, op, n);  // AVG divides once, on the root
    return;
  }
  // Non-roots leave their input untouched, so they accumulate into a copy.
  const std::span<float> copy = comm.scratch(data.size(), 1);
  if (!op.phantom) std::copy(data.begin(), data.end(), copy.begin());
  reduce_binomial(comm, copy, op, root);
}

void all_reduce(Communicator& comm, std::span<float> data, Reduction op,
                const CollectiveOptions& options) {
  const int n = comm.size();
  op.phantom = comm.phantom();
  Algorithm algorithm =
      resolve_algorithm(CollectiveOp::all_reduce, options.algorithm, n, data.size_bytes());
  CollectiveScope scope(comm, "all_reduce", data.size_bytes());
  if (n == 1) {
    finish_reduce(data, op, 1);
    return;
  }
  if (asks_native(options, op) && comm.native_all_reduce(data, op.op)) return;
  switch (algorithm) {
    case Algorithm::naive:
      all_reduce_naive(comm, data, op);
      return;
    case Algorithm::tree:
      all_reduce_tree(comm, data, op);
      return;
    case Algorithm::halving_doubling:
      all_reduce_halving_doubling(comm, data, op);
      return;
    case Algorithm::recursive_doubling:
      all_reduce_recursive_doubling(comm, data, op);
      return;
    case Algorithm::ring:
    case Algorithm::automatic:  // resolved above; never here
    case Algorithm::native:
      all_reduce_ring(comm, data, op);
      return;
  }
}

void gather(Communicator& comm, std::span<const float> send, std::span<float> recv, int root,
            const CollectiveOptions& options) {
  check_root(comm, root, "gather");
  check_rows(comm, "gather", "recv", recv.size(), send.size(), "sent by each", comm.rank() != root);
  const int n = comm.size();
  resolve_algorithm(CollectiveOp::gather, options.algorithm, n, send.size_bytes() * n);
  CollectiveScope scope(comm, "gather", send.size_bytes() * n);
  if (n == 1) {
    copy_floats(send, recv);
    return;
  }
  if (options.algorithm == Algorithm::native && comm.native_gather(send, recv, root)) return;
  gather_linear(comm, send, recv, root);
}

void scatter(Communicator& comm, std::span<const float> send, std::span<float> recv, int root,
             const CollectiveOptions& options) {
  check_root(comm, root, "scatter");
  check_rows(comm, "scatter", "send", send.size(), recv.size(), "received by each",
             comm.rank() != root);
  const int n = comm.size();
  resolve_algorithm(CollectiveOp::scatter, options.algorithm, n, recv.size_bytes() * n);
  CollectiveScope scope(comm, "scatter", recv.size_bytes() * n);
  if (n == 1) {
    copy_floats(send, recv);
    return;
  }
  if (options.algorithm == Algorithm::native && comm.native_scatter(send, recv, root)) return;
  scatter_linear(comm, send, recv, root);
}

void all_gather(Communicator& comm, std::span<const float> send, std::span<float> recv,
                const CollectiveOptions& options) {
  check_rows(comm, "all_gather", "recv", recv.size(), send.size(), "sent by each", false);
  const int n = comm.size();
  resolve_algorithm(CollectiveOp::all_gather, options.algorithm, n, recv.size_bytes());
  CollectiveScope scope(comm, "all_gather", recv.size_bytes());
  if (n == 1) {
    copy_floats(send, recv);
    return;
  }
  if (options.algorithm == Algorithm::native && comm.native_all_gather(send, recv)) return;
  all_gather_ring(comm, send, recv);
}

void reduce_scatter(Communicator& comm, std::span<const float> send, std::span<float> recv,
                    Reduction op, const CollectiveOptions& options) {
  check_rows(comm, "reduce_scatter", "send", send.size(), recv.size(), "received by each", false);
  op.phantom = comm.phantom();
  const int n = comm.size();
  resolve_algorithm(CollectiveOp::reduce_scatter, options.algorithm, n, send.size_bytes());
  CollectiveScope scope(comm, "reduce_scatter", send.size_bytes());
  if (n == 1) {
    copy_floats(send, recv);
    finish_reduce(recv, op, 1);
    return;
  }
  if (asks_native(options, op) && comm.native_reduce_scatter(send, recv, op.op)) return;
  reduce_scatter_ring(comm, send, recv, op);
}

void barrier(Communicator& comm, const CollectiveOptions& options) {
  resolve_algorithm(CollectiveOp::barrier, options.algorithm, comm.size(), 0);
  CollectiveScope scope(comm, "barrier", 0);
  if (comm.size() == 1) return;
  if (options.algorithm == Algorithm::native && comm.native_barrier()) return;
  barrier_dissemination(comm);
}

}  // namespace dsgd
