#include "pytorch/process_group.h"

#include <pybind11/pybind11.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdlib>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "pytorch/tensor_wire.h"
#include "sim/handshake.h"
#include "sim/rendezvous.h"

namespace dsgd::pytorch {
namespace {

using boost::asio::ip::tcp;
using Posted = sim::ServedNode::Posted;

std::string to_string(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// A port no one listens on now at `address`, for rank 0's rendezvous.
uint16_t free_port(const boost::asio::ip::address& address) {
  boost::asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(address, 0));
  return acceptor.local_endpoint().port();
}

// Where this rank's node meets the others: rank 0 picks the rendezvous port and a job token
// and publishes them in the group's store; the others wait for them there (the store's
// own timeout applies).
sim::NodeProcessOptions meet(c10d::Store& store, int rank, const JobConfig& config) {
  sim::NodeProcessOptions p{.rank = rank, .listen = config.listen};
  if (rank == 0) {
    const char* master = std::getenv("MASTER_ADDR");
    const std::string host = master && *master ? master : "127.0.0.1";
    const std::string where = fmt::format("{}:{}", host, free_port(config.listen));
    p.token = sim::random_token();
    store.set("dsgd/token", std::vector<uint8_t>(p.token.begin(), p.token.end()));
    store.set("dsgd/rendezvous", std::vector<uint8_t>(where.begin(), where.end()));
    p.rendezvous = sim::parse_endpoint(where, "the rendezvous (MASTER_ADDR)");
    return p;
  }
  const std::string where = to_string(store.get("dsgd/rendezvous"));
  p.token = to_string(store.get("dsgd/token"));
  p.rendezvous = sim::parse_endpoint(where, "the rendezvous (MASTER_ADDR)");
  return p;
}

void check_one(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "dsgd backend: ", op, " takes one tensor per process (got ",
              tensors.size(), ")");
  check_tensor(tensors[0], op);
}

void check_list(const std::vector<at::Tensor>& list, const at::Tensor& like, int world,
                const char* op) {
  TORCH_CHECK(static_cast<int>(list.size()) == world, "dsgd backend: ", op, " takes a list of ",
              world, " tensors (one per rank), got ", list.size());
  for (const at::Tensor& t : list) {
    check_tensor(t, op);
    TORCH_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(),
                "dsgd backend: ", op, ": every tensor of the list must have ", like.numel(),
                " elements of ", like.scalar_type());
  }
}

// Every rank's `t`, as rows (world x numel) of t's type: dsgd's all_gather of its bytes.
at::Tensor gather_rows(Communicator& comm, const at::Tensor& t) {
  WireView view(t);
  const size_t n = view.floats().size();
  std::vector<float> all(n * comm.size());
  all_gather(comm, view.floats(), all);
  at::Tensor rows = at::empty({comm.size(), t.numel()}, t.options());
  for (int r = 0; r < comm.size(); ++r) {
    at::Tensor row = rows[r];
    copy_from_wire(std::span<const float>(all).subspan(r * n, n), row);
  }
  return rows;
}

// `t` on every rank replaced by the reduction over all ranks.
void all_reduce_tensor(Communicator& comm, at::Tensor& t, ReduceOp op,
                       const CollectiveOptions& options) {
  if (const auto reduction = wire_reduction(t.scalar_type(), op)) {
    WireView view(t);
    all_reduce(comm, view.floats(), *reduction, options);
    view.put_back();
    return;
  }
  t.copy_(fold_rows(gather_rows(comm, t), op).view_as(t));
}

// `lists[i]` (world tensors each) as one wire buffer: row r holds tensor r's bytes.
std::vector<float> rows_to_wire(const std::vector<at::Tensor>& list) {
  std::vector<float> out;
  for (const at::Tensor& t : list) {
    WireView view(t);
    out.insert(out.end(), view.floats().begin(), view.floats().end());
  }
  return out;
}

void wire_to_rows(std::span<const float> wire, std::vector<at::Tensor>& list) {
  const size_t n = list.empty() ? 0 : wire.size() / list.size();
  for (size_t i = 0; i < list.size(); ++i)
    copy_from_wire(wire.subspan(i * n, n), list[i]);
}

// `send` (world x c elements, row r for rank r) reduced over all ranks; this rank's row into
// `out`.
void reduce_scatter_tensor(Communicator& comm, at::Tensor send, at::Tensor out, ReduceOp op) {
  if (const auto reduction = wire_reduction(send.scalar_type(), op)) {
    const std::vector<float> all = rows_to_wire(send.reshape({comm.size(), -1}).unbind(0));
    WireView view(out);
    dsgd::reduce_scatter(comm, all, view.floats(), *reduction);
    view.put_back();
    return;
  }
  const at::Tensor folded = fold_rows(gather_rows(comm, send.reshape({-1})), op);
  out.copy_(folded.reshape({comm.size(), -1})[comm.rank()].view_as(out));
}

}  // namespace

// A Work that completes when the node has run its operation; its future carries the
// operation's output tensors (DDP's reducer waits on it), or the operation's error.
class ProcessGroupDsgd::DsgdWork : public c10d::Work {
 public:
  DsgdWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
      : Work(rank, type),
        outputs_(std::move(outputs)),
        future_(c10::make_intrusive<c10::ivalue::Future>(
            c10::ListType::create(c10::TensorType::get()))) {}

  void complete(std::exception_ptr error) {
    finish(error);
    if (error)
      future_->setError(error);
    else
      future_->markCompleted(c10::IValue(outputs_));
  }
  void set_source(int source) { source_ = source; }

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  int sourceRank() const override { return source_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  int source_ = -1;
};

ProcessGroupDsgd::ProcessGroupDsgd(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : ProcessGroup(rank, size),
      config_(job_config_from_env(size, timeout)),
      allreduce_{.algorithm = config_.spec.allreduce},
      trace_({.run_json = sim::run_spec_json(config_.spec), .world = size}) {
  sim::ClusterOptions cluster = config_.spec.cluster;
  if (!config_.trace.empty()) cluster.events = &trace_;
  node_ = std::make_unique<sim::ServedNode>(meet(*store, rank, config_), cluster);
}

ProcessGroupDsgd::~ProcessGroupDsgd() {
  // Python destroys the group holding the GIL; the node's thread may need it to drop its
  // last references to the program's tensors, so the wait for that thread lets go of it.
  if (PyGILState_Check()) {
    pybind11::gil_scoped_release unlocked;
    node_.reset();
  } else {
    node_.reset();
  }
  if (config_.trace.empty() || trace_.size() == 0) return;
  try {
    trace_.write(per_rank_path(config_.trace, getRank()));
  } catch (const std::exception& e) {  // a destructor must not throw: say it instead
    fmt::print(stderr, "dsgd backend: rank {}: the trace was not written: {}\n", getRank(),
               e.what());
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::enqueue(c10d::OpType type,
                                                         std::vector<at::Tensor> outputs,
                                                         sim::ServedNode::Operation op) {
  auto work = c10::make_intrusive<DsgdWork>(getRank(), type, std::move(outputs));
  node_->submit(std::move(op), [work](std::exception_ptr error) { work->complete(error); });
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::enqueue_blocking(
    c10d::OpType type, std::vector<at::Tensor> outputs, std::function<void(Communicator&)> op) {
  return enqueue(type, std::move(outputs),
                 [op = std::move(op)](Communicator& comm) -> std::optional<Posted> {
                   op(comm);
                   return std::nullopt;
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  check_one(tensors, "broadcast");
  at::Tensor t = tensors[0];
  const int root = static_cast<int>(opts.rootRank);
  return enqueue_blocking(c10d::OpType::BROADCAST, tensors, [t, root](Communicator& comm) {
    WireView view(t);
    dsgd::broadcast(comm, view.floats(), root);
    view.put_back();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  check_one(tensors, "allreduce");
  at::Tensor t = tensors[0];
  const ReduceOp op = reduce_op(opts.reduceOp, "allreduce");
  return enqueue_blocking(c10d::OpType::ALLREDUCE, tensors,
                          [t, op, options = allreduce_](Communicator& comm) mutable {
                            all_reduce_tensor(comm, t, op, options);
                          });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  check_one(tensors, "reduce");
  at::Tensor t = tensors[0];
  const ReduceOp op = reduce_op(opts.reduceOp, "reduce");
  const int root = static_cast<int>(opts.rootRank);
  return enqueue_blocking(c10d::OpType::REDUCE, tensors, [t, op, root](Communicator& comm) {
    if (const auto reduction = wire_reduction(t.scalar_type(), op)) {
      WireView view(t);
      dsgd::reduce(comm, view.floats(), *reduction, root);
      view.put_back();
      return;
    }
    WireView view(t);
    const size_t n = view.floats().size();
    std::vector<float> all(comm.rank() == root ? n * comm.size() : 0);
    dsgd::gather(comm, view.floats(), all, root);
    if (comm.rank() != root) return;
    at::Tensor rows = at::empty({comm.size(), t.numel()}, t.options());
    for (int r = 0; r < comm.size(); ++r) {
      at::Tensor row = rows[r];
      copy_from_wire(std::span<const float>(all).subspan(r * n, n), row);
    }
    t.copy_(fold_rows(rows, op).view_as(t));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  check_one(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1, "dsgd backend: allgather takes one output list");
  check_list(outputs[0], inputs[0], getSize(), "allgather");
  at::Tensor in = inputs[0];
  std::vector<at::Tensor> out = outputs[0];
  return enqueue_blocking(c10d::OpType::ALLGATHER, out, [in, out](Communicator& comm) mutable {
    WireView view(in);
    std::vector<float> all(view.floats().size() * comm.size());
    all_gather(comm, view.floats(), all);
    wire_to_rows(all, out);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::_allgather_base(at::Tensor& output,
                                                                 at::Tensor& input,
                                                                 const c10d::AllgatherOptions&) {
  check_tensor(input, "_allgather_base");
  check_tensor(output, "_allgather_base");
  TORCH_CHECK(
      output.numel() == input.numel() * getSize() && output.scalar_type() == input.scalar_type(),
      "dsgd backend: _allgather_base's output must hold world_size x the input");
  TORCH_CHECK(output.is_contiguous(), "dsgd backend: _allgather_base's output must be contiguous");
  std::vector<at::Tensor> rows = output.view({getSize(), -1}).unbind(0);
  at::Tensor in = input;
  return enqueue_blocking(c10d::OpType::_ALLGATHER_BASE, {output},
                          [in, rows](Communicator& comm) mutable {
                            WireView view(in);
                            std::vector<float> all(view.floats().size() * comm.size());
                            all_gather(comm, view.floats(), all);
                            wire_to_rows(all, rows);
                          });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  check_one(inputs, "gather");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> out;
  if (getRank() == root) {
    TORCH_CHECK(outputs.size() == 1, "dsgd backend: gather takes one output list on the root");
    check_list(outputs[0], inputs[0], getSize(), "gather");
    out = outputs[0];
  }
  at::Tensor in = inputs[0];
  return enqueue_blocking(c10d::OpType::GATHER, out, [in, out, root](Communicator& comm) mutable {
    WireView view(in);
    std::vector<float> all(comm.rank() == root ? view.floats().size() * comm.size() : 0);
    dsgd::gather(comm, view.floats(), all, root);
    if (comm.rank() == root) wire_to_rows(all, out);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  check_one(outputs, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> in;
  if (getRank() == root) {
    TORCH_CHECK(inputs.size() == 1, "dsgd backend: scatter takes one input list on the root");
    check_list(inputs[0], outputs[0], getSize(), "scatter");
    in = inputs[0];
  }
  at::Tensor out = outputs[0];
  return enqueue_blocking(c10d::OpType::SCATTER, outputs, [in, out, root](Communicator& comm) {
    WireView view(out);
    const std::vector<float> all = comm.rank() == root ? rows_to_wire(in) : std::vector<float>{};
    dsgd::scatter(comm, all, view.floats(), root);
    view.put_back();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  check_one(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1, "dsgd backend: reduce_scatter takes one input list");
  check_list(inputs[0], outputs[0], getSize(), "reduce_scatter");
  const ReduceOp op = reduce_op(opts.reduceOp, "reduce_scatter");
  const at::Tensor send = at::stack(inputs[0]);
  at::Tensor out = outputs[0];
  return enqueue_blocking(
      c10d::OpType::REDUCE_SCATTER, outputs,
      [send, out, op](Communicator& comm) { reduce_scatter_tensor(comm, send, out, op); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "_reduce_scatter_base");
  check_tensor(output, "_reduce_scatter_base");
  TORCH_CHECK(
      input.numel() == output.numel() * getSize() && output.scalar_type() == input.scalar_type(),
      "dsgd backend: _reduce_scatter_base's input must hold world_size x the output");
  const ReduceOp op = reduce_op(opts.reduceOp, "_reduce_scatter_base");
  at::Tensor send = input, out = output;
  return enqueue_blocking(
      c10d::OpType::_REDUCE_SCATTER_BASE, {output},
      [send, out, op](Communicator& comm) { reduce_scatter_tensor(comm, send, out, op); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::barrier(const c10d::BarrierOptions&) {
  return enqueue_blocking(c10d::OpType::BARRIER, {},
                          [](Communicator& comm) { dsgd::barrier(comm); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::send(std::vector<at::Tensor>& tensors, int dst,
                                                      int tag) {
  check_one(tensors, "send");
  auto view = std::make_shared<WireView>(tensors[0]);
  return enqueue(c10d::OpType::SEND, tensors,
                 [view, dst, tag](Communicator& comm) -> std::optional<Posted> {
                   return Posted{comm.isend(view->floats(), dst, tag), [view](const Status&) {}};
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::post_recv(std::vector<at::Tensor>& tensors,
                                                           int src, int tag, const char* name) {
  check_one(tensors, name);
  auto view = std::make_shared<WireView>(tensors[0]);
  auto work = c10::make_intrusive<DsgdWork>(
      getRank(), src == kAnySource ? c10d::OpType::RECVANYSOURCE : c10d::OpType::RECV, tensors);
  node_->submit(
      [view, src, tag, work](Communicator& comm) -> std::optional<Posted> {
        return Posted{comm.irecv(view->floats(), src, tag), [view, work](const Status& status) {
                        view->put_back();
                        work->set_source(status.source);
                      }};
      },
      [work](std::exception_ptr error) { work->complete(error); });
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::recv(std::vector<at::Tensor>& tensors, int src,
                                                      int tag) {
  return post_recv(tensors, src, tag, "recv");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupDsgd::recvAnysource(std::vector<at::Tensor>& tensors,
                                                               int tag) {
  return post_recv(tensors, kAnySource, tag, "recvAnysource");
}

}  // namespace dsgd::pytorch
