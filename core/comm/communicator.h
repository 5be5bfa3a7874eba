// Communicator: the point-to-point interface every backend implements (simulated sockets,
// MPI). Names follow torch.distributed: rank, size, send, recv, isend, irecv, wait.
// Collectives are not members: they are free functions written once over these calls
// (core/comm/collectives.h). Nothing here knows which backend it runs on.
#pragma once

#include <chrono>
#include <cstddef>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/comm/reduce_op.h"
#include "core/events.h"

namespace dsgd {

using Clock = std::chrono::steady_clock;

inline constexpr int kAnySource = -1;
// Tags at or above this value are reserved for dsgd's collectives; user tags stay below.
inline constexpr int kCollectiveTagBase = 1 << 30;

// What a completed receive got: the actual source and tag, and how many floats.
struct Status {
  int source = -1;
  int tag = 0;
  size_t count = 0;
};

// A point in time by which a blocking call must complete. A default-constructed Deadline
// means "the communicator's timeout from now".
struct Deadline {
  std::optional<Clock::time_point> at;
  static Deadline after(std::chrono::milliseconds d) { return {Clock::now() + d}; }
};

// Backend-side state of one non-blocking operation.
class RequestImpl {
 public:
  virtual ~RequestImpl() = default;
  // Blocks until the operation completes or `deadline` passes (TimeoutError), or the peer
  // is lost (CommError). Calling it again after completion returns the same Status.
  virtual Status wait_until(Clock::time_point deadline) = 0;
  // Non-blocking: true (and *status filled) once complete; throws on failure.
  virtual bool test(Status* status) = 0;
};

// Handle to a non-blocking send or receive, like torch.distributed's Work. The buffer
// passed to isend/irecv must stay alive and untouched until wait() or test() says done.
class Request {
 public:
  Request() = default;
  Request(std::shared_ptr<RequestImpl> impl, std::chrono::milliseconds timeout)
      : impl_(std::move(impl)), timeout_(timeout) {}
  bool valid() const { return impl_ != nullptr; }
  Status wait(Deadline deadline = {});
  bool test(Status* status = nullptr);

 private:
  std::shared_ptr<RequestImpl> impl_;
  std::chrono::milliseconds timeout_{0};
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* backend() const = 0;  // "sim", "mpi", "simgrid"

  // Non-blocking point-to-point. Messages between the same pair with the same tag arrive
  // in the order they were sent. irecv's buffer size must equal the message size:
  // a mismatch is an error naming both sizes, never a silent truncation.
  Request isend(std::span<const float> data, int dst, int tag = 0);
  Request irecv(std::span<float> data, int src = kAnySource, int tag = 0);

  // Blocking forms: isend/irecv followed by wait.
  void send(std::span<const float> data, int dst, int tag = 0, Deadline deadline = {});
  Status recv(std::span<float> data, int src = kAnySource, int tag = 0, Deadline deadline = {});
  Status wait(Request& request, Deadline deadline = {}) { return request.wait(deadline); }
  bool test(Request& request, Status* status = nullptr) { return request.test(status); }

  // The deadline every blocking call gets when none is given.
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

  // Observers of this rank's events (may be null).
  void set_events(EventSink* sink) { events_ = sink; }
  EventSink* events() const { return events_; }
  void emit(Event event) const;
  // Seconds since the run's common epoch (steady clock), and the model time (seconds of
  // simulated network time; -1 where the backend has no model).
  double wall_s() const;
  virtual double model_s() const { return -1.0; }
  void set_epoch(Clock::time_point epoch) { epoch_ = epoch; }
  Clock::time_point epoch() const { return epoch_; }
  // Payload bytes this rank has posted for sending (to other ranks) so far.
  uint64_t bytes_sent() const { return bytes_sent_; }

  // A buffer of `count` floats that collectives reuse from call to call (slots 0 and 1 are
  // independent), so a large all_reduce costs no allocation, zeroing or page faults after
  // the first. Contents are undefined; valid until the next scratch() of the same slot.
  // With phantom payloads, every slot of every rank is one buffer the run shares.
  static constexpr int kScratchSlots = 2;
  std::span<float> scratch(size_t count, int slot = 0);

  // Phantom payloads (SimGrid's sizes-only mode): a message carries only its size, a
  // receive leaves its buffer as it was and collectives skip their arithmetic, so that a
  // run of thousands of ranks models the time of buffers that would not fit in memory once
  // per rank. Results mean nothing then; times do. phantom_payloads: the run's mode
  // (default: false); phantom: whether this rank's messages are phantom now, which they are
  // not while a RealPayloads lives.
  virtual bool phantom_payloads() const { return false; }
  bool phantom() const { return real_payloads_ == 0 && phantom_payloads(); }
  // While one lives, this rank's messages carry their floats and its collectives compute,
  // in a run of phantom payloads too: for the small messages a rank needs the contents of
  // (a benchmark's common start time, its measurements). Every rank taking part in such a
  // message or collective must hold one.
  class RealPayloads {
   public:
    explicit RealPayloads(Communicator& comm) : comm_(comm) { ++comm_.real_payloads_; }
    ~RealPayloads() { --comm_.real_payloads_; }
    RealPayloads(const RealPayloads&) = delete;
    RealPayloads& operator=(const RealPayloads&) = delete;

   private:
    Communicator& comm_;
  };
  // Phantom payloads: `count` floats of memory that every rank of the run shares, for
  // buffers whose contents mean nothing (a benchmark's, a workload's gradients). Valid
  // until the run ends. logic_error where phantom_payloads() is false.
  virtual std::span<float> shared_buffer(size_t count);

  // Hooks the trainer calls so a backend can model compute: the simulator advances its
  // model clock by flops / node speed, slows stragglers and fires crash faults. `step` is
  // the 1-based step about to run. Default: nothing.
  virtual void on_compute(double measured_s, double flops) {}
  virtual void on_step(int64_t step) {}
  // Compute beside this rank's communication (DDP's backward while the buckets' all_reduces
  // are under way), which on_compute cannot model: it would add the compute after the
  // messages. compute_model_s: the model seconds `flops` take on this rank (0 where the
  // backend has no model); straggle: the wall-time slow-down on_compute applies to compute
  // measured at `measured_s`. Both may be called from any thread. advance_model_to: on the
  // thread that talks, the rank's model time becomes at least t (the compute ended at t).
  virtual double compute_model_s(double flops) const { return 0; }
  virtual void straggle(double measured_s) const {}
  virtual void advance_model_to(double t) {}
  // Whether a thread other than the rank's may make this rank's calls (DDP's communication
  // thread). False where a rank is not a thread (a SimGrid actor): the rank makes its
  // buckets' calls itself after backward, each starting at its bucket's model time.
  virtual bool callable_from_any_thread() const { return true; }

  // Why this rank can no longer finish a collective with every other rank (a peer was
  // lost, the run was aborted), or "" while all is well. Rank thread; it does not block,
  // but may move bytes that are ready. For waits outside the Communicator (NCCL on the
  // GPUs) to end when the run has, not at their deadline. Default: "" (MPI ends the job).
  virtual std::string failure() { return {}; }

  // Native collectives: a backend with its own (MPI_Allreduce, MPI_Bcast, ...) performs the
  // operation and returns true; Algorithm::native falls back to dsgd's own algorithm where
  // these return false. Arguments mean what they mean in collectives.h.
  virtual bool native_all_reduce(std::span<float> data, ReduceOp op) { return false; }
  virtual bool native_broadcast(std::span<float> data, int root) { return false; }
  virtual bool native_reduce(std::span<float> data, ReduceOp op, int root) { return false; }
  virtual bool native_gather(std::span<const float> send, std::span<float> recv, int root) {
    return false;
  }
  virtual bool native_scatter(std::span<const float> send, std::span<float> recv, int root) {
    return false;
  }
  virtual bool native_all_gather(std::span<const float> send, std::span<float> recv) {
    return false;
  }
  virtual bool native_reduce_scatter(std::span<const float> send, std::span<float> recv,
                                     ReduceOp op) {
    return false;
  }
  virtual bool native_barrier() { return false; }

 protected:
  virtual Request do_isend(std::span<const float> data, int dst, int tag) = 0;
  virtual Request do_irecv(std::span<float> data, int src, int tag) = 0;

 private:
  std::chrono::milliseconds timeout_{30000};
  EventSink* events_ = nullptr;
  Clock::time_point epoch_ = Clock::now();
  uint64_t bytes_sent_ = 0;
  int real_payloads_ = 0;  // RealPayloads alive
  struct Scratch {
    std::unique_ptr<float[]> data;
    size_t capacity = 0;
  };
  std::array<Scratch, kScratchSlots> scratch_;
};

}  // namespace dsgd
