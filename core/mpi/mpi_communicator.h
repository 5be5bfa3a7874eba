// MpiCommunicator: one MPI rank as a dsgd Communicator. Point-to-point is MPI_Isend and a
// matched receive (MPI_Improbe, then MPI_Imrecv of exactly the message's size) with
// MPI_FLOAT and the caller's tag on the communicator as given (no MPI_Comm_dup, so mpi4py
// ranks in the same job can talk to it); every wait polls until its deadline;
// native_* call MPI's blocking collectives under a Watchdog. Not a launcher (MpiSession is),
// not thread-safe: one thread at a time calls it (MPI_THREAD_SERIALIZED).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "core/mpi/watchdog.h"

namespace dsgd::mpi {

class MpiRequest;

// dsgd's collectives use tags from kCollectiveTagBase upwards; an MPI whose MPI_TAG_UB is
// below kCollectiveTagBase + kCollectiveTagSpan cannot run them. Open MPI's is 2^31 - 1.
inline constexpr int kCollectiveTagSpan = 1024;
// MPI counts are ints: one message carries at most this many floats (8 GiB).
inline constexpr size_t kMaxCount = std::numeric_limits<int>::max();

class MpiCommunicator final : public Communicator {
 public:
  // Requires an initialised MPI (MpiSession) with MPI_ERRORS_RETURN on `comm`. Not
  // collective: builds nothing shared. UsageError when MPI_TAG_UB is too small.
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiCommunicator() override = default;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "mpi"; }
  MPI_Comm mpi_comm() const { return comm_; }
  int tag_ub() const { return tag_ub_; }

  // Host names of every rank (from preflight); until set, messages name only the rank.
  void set_hosts(std::vector<std::string> hosts);
  // "rank 3 (host node2)", or "rank 3" when the host is unknown.
  std::string describe(int rank) const;

  // Arms the watchdog for one blocking MPI call with this communicator's timeout.
  Watchdog::Scope blocking(const char* call, size_t bytes);

  bool native_all_reduce(std::span<float> data, ReduceOp op) override;
  bool native_broadcast(std::span<float> data, int root) override;
  bool native_reduce(std::span<float> data, ReduceOp op, int root) override;
  bool native_gather(std::span<const float> send, std::span<float> recv, int root) override;
  bool native_scatter(std::span<const float> send, std::span<float> recv, int root) override;
  bool native_all_gather(std::span<const float> send, std::span<float> recv) override;
  bool native_reduce_scatter(std::span<const float> send, std::span<float> recv,
                             ReduceOp op) override;
  bool native_barrier() override;

 protected:
  Request do_isend(std::span<const float> data, int dst, int tag) override;
  Request do_irecv(std::span<float> data, int src, int tag) override;

 private:
  friend class MpiRequest;
  // Matches the receives not yet matched, in the order they were posted (see the .cpp).
  void match_receives();
  void forget_receive(const MpiRequest* request);

  void check_tag(int tag, const char* what) const;
  int checked_count(size_t count, const char* what) const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  int tag_ub_ = 0;
  std::string host_;
  std::vector<std::string> hosts_;      // per rank; empty until set_hosts
  std::vector<uint64_t> send_seq_;      // per destination: messages sent so far (events)
  std::vector<MpiRequest*> unmatched_;  // receives without a message yet, in posting order
  Watchdog watchdog_;
};

}  // namespace dsgd::mpi
