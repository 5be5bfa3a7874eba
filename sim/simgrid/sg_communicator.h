// SgCommunicator: one rank of a SimGrid run (an S4U actor) as a dsgd Communicator. Its
// messages go through the run's SgFabric; its clock is SimGrid's (model_s), in which
// compute takes flops / the host's speed (execute) or the measured seconds (sleep_for), a
// straggler's times the factor. Blocking calls have no wall-clock deadline: a wait that
// can never end is a deadlock SimGrid finds once every actor waits, and the run reports
// what each rank waited for (blocked()). A test() that finds its operation unfinished
// lets 1 us of virtual time pass, so that polling makes progress, and fails with a
// TimeoutError once a loop has polled for longer than the timeout, in virtual time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/comm/communicator.h"
#include "sim/simgrid/sg_fabric.h"

namespace dsgd::sim::sg {

enum class ComputeModel {
  flops,     // the trainer's flop counts at the host's speed (deterministic)
  measured,  // the CPU time this process took for it
};

// When a rank's crash fault fires (--crash): when this step begins, or once virtual time
// reaches this many seconds (checked, as on simulated nodes, at each step, compute, send and
// receive). Then the fabric fails its peers' waits on it and the rank throws NodeCrashed.
struct SgCrash {
  std::optional<int64_t> at_step;
  std::optional<double> at_s;
  // Told the rank as the fault fires, before anything else runs (ClusterOptions::on_crash):
  // unwinding may wait, and the run may kill the rank meanwhile.
  std::function<void(int rank)> fired;
};

class SgCommunicator final : public Communicator {
 public:
  // host_flops: the speed of the rank's host, flop/s.
  SgCommunicator(int rank, int world, SgFabric& fabric, ComputeModel compute, double host_flops,
                 double straggler, SgCrash crash = {});

  int rank() const override { return rank_; }
  int size() const override { return world_; }
  const char* backend() const override { return "simgrid"; }
  double model_s() const override;
  bool phantom_payloads() const override { return fabric_.phantom(); }
  std::span<float> shared_buffer(size_t count) override;

  void on_compute(double measured_s, double flops) override;
  void on_step(int64_t step) override;
  double compute_model_s(double flops) const override;
  void advance_model_to(double t) override;
  bool callable_from_any_thread() const override { return false; }  // an actor's calls only

  // What the rank waits for now ("rank 0 waits in recv from rank 1, tag 0"), or "".
  std::string blocked() const;

  // What a rank waits in: a receive from `peer` (bytes 0), or a send of `bytes` to it.
  struct Wait {
    bool send = false;
    int peer = 0, tag = 0;
    size_t bytes = 0;
  };
  // Marks the rank blocked in `wait` while the caller waits (SgRequest). Only a deadlock
  // report puts it into words.
  class Blocked {
   public:
    Blocked(SgCommunicator& c, Wait wait) : c_(c) { c_.blocked_ = wait; }
    ~Blocked() { c_.blocked_.reset(); }

   private:
    SgCommunicator& c_;
  };
  SgFabric& fabric() { return fabric_; }

 protected:
  Request do_isend(std::span<const float> data, int dst, int tag) override;
  Request do_irecv(std::span<float> data, int src, int tag) override;

 private:
  int rank_, world_;
  SgFabric& fabric_;
  ComputeModel compute_;
  double host_flops_;
  double straggler_;
  SgCrash crash_;
  void check_crash_time();
  [[noreturn]] void crash();
  std::unordered_map<int, uint64_t> send_seq_;  // per destination: messages sent so far
  std::optional<Wait> blocked_;
};

}  // namespace dsgd::sim::sg
