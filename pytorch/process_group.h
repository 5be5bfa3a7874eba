// ProcessGroupDsgd: torch.distributed's process group "dsgd". Each process of a PyTorch
// program is one simulated node of a `dsgd node` run (sim/served_node.h): the same socket
// transport, link model and faults, configured from the environment (job_config.h). The
// group's ranks meet through the store init_process_group made (its TCPStore on
// MASTER_ADDR:MASTER_PORT): rank 0 publishes its rendezvous address and a job token there,
// the others read them and join. Every operation is a dsgd Communicator call or one of
// dsgd's collectives, run in order on the node's thread; its Work completes (and its future
// with the output tensors, which DDP waits on) when the node has run it. An operation the
// backend does not have raises a Python RuntimeError naming it, as torch's default does.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/io/trace.h"
#include "pytorch/job_config.h"
#include "sim/served_node.h"

namespace dsgd::pytorch {

class ProcessGroupDsgd : public c10d::ProcessGroup {
 public:
  // Joins the group (blocks until every rank has, or `timeout` passed: a Python error).
  ProcessGroupDsgd(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   std::chrono::milliseconds timeout);
  // Leaves the run once every operation handed over has ended; writes the trace.
  ~ProcessGroupDsgd() override;

  const std::string getBackendName() const override { return "dsgd"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;

 private:
  class DsgdWork;
  // Hands `op` to the node; the Work's result and future hold `outputs` once it has run.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                         sim::ServedNode::Operation op);
  c10::intrusive_ptr<c10d::Work> enqueue_blocking(c10d::OpType type,
                                                  std::vector<at::Tensor> outputs,
                                                  std::function<void(Communicator&)> op);
  c10::intrusive_ptr<c10d::Work> post_recv(std::vector<at::Tensor>& tensors, int src, int tag,
                                           const char* name);

  JobConfig config_;
  CollectiveOptions allreduce_;
  ChromeTraceWriter trace_;
  std::unique_ptr<sim::ServedNode> node_;
};

}  // namespace dsgd::pytorch
