// MpiCommunicator: requests and their deadlines, point-to-point, native collectives.
// R = world size, c = elements each rank contributes or receives.
#include "core/mpi/mpi_communicator.h"

#include "core/comm/collective_tags.h"

#include <algorithm>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/message_events.h"
#include "core/mpi/mpi_check.h"
#include "core/mpi/mpi_session.h"

namespace dsgd::mpi {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// A pause between two polls this long means the process itself was not running.
constexpr double kStoppedS = 1.0;

// How a wait polls MPI_Test. Spin for the first 100 us: a message already on its way
// completes within microseconds, and MPI moves data only while some MPI call runs. Then
// yield the core until 2 ms, then sleep in growing pauses of at most 200 us, so a rank
// waiting on a slow or lost peer does not take the core from ranks that share it.
class Backoff {
 public:
  void pause() {
    const auto waited = Clock::now() - start_;
    if (waited < microseconds(100)) return;
    if (waited < milliseconds(2)) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, microseconds(200));
  }

 private:
  Clock::time_point start_ = Clock::now();
  microseconds sleep_{10};
};

MPI_Op to_mpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:  // SUM, then finish_reduce divides once
      return MPI_SUM;
    case ReduceOp::MAX:
      return MPI_MAX;
    case ReduceOp::MIN:
      return MPI_MIN;
    case ReduceOp::PROD:
      return MPI_PROD;
  }
  return MPI_SUM;
}

bool overlaps(std::span<const float> a, std::span<const float> b) {
  return !a.empty() && !b.empty() && a.data() < b.data() + b.size() &&
         b.data() < a.data() + a.size();
}

int query_tag_ub() {
  // MPI_TAG_UB is an attribute of MPI_COMM_WORLD, the same for every communicator.
  int* value = nullptr;
  int found = 0;
  DSGD_MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found));
  return found && value ? *value : 32767;  // 32767: the least the MPI standard promises
}

std::string who_am_i(MPI_Comm comm) {
  int rank = 0;
  DSGD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return fmt::format("rank {} (host {})", rank, host_name());
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------

// A receive is matched before it is posted. Open MPI 4.1 overruns a receive buffer that is
// smaller than a message above its eager limit, on every transport tried (self, vader's
// single copy, tcp): pml/ob1 moves the sender's full length instead of failing with
// MPI_ERR_TRUNCATE. So a receive first matches its message (MPI_Improbe), checks its size,
// and only then receives it (MPI_Imrecv of exactly that size); a message of another size is
// drained into scratch memory and reported as a UsageError naming both sizes, as the
// simulator reports it. Matching keeps MPI's order: receives are matched in the order they
// were posted (MpiCommunicator::match_receives), and every poll of any request matches, so
// a rank waiting on its send still takes the messages its peers send it.
constexpr int kMaxDrainBytes = 1 << 28;  // larger mismatched messages stay unreceived

// One MPI_Isend or one matched receive. Completes once: the first MPI_Test (or cancel) that
// reports completion fixes its Status or its error; later waits and tests return the same.
class MpiRequest final : public RequestImpl {
 public:
  MpiRequest(MpiCommunicator& comm, MPI_Request request, bool is_recv, int peer, int tag,
             std::span<float> buffer, size_t send_count)
      : comm_(comm),
        request_(request),
        is_recv_(is_recv),
        peer_(peer),
        tag_(tag),
        buffer_(buffer),
        send_count_(send_count),
        matched_(!is_recv) {}

  ~MpiRequest() override {
    if (!matched_ && !done_) comm_.forget_receive(this);
    if (request_ == MPI_REQUEST_NULL) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    // Dropped before completion. A receive must not write into a buffer that may be gone:
    // cancel it and wait for the cancel (local, immediate). A send cannot be taken back;
    // freeing the request lets it complete on its own.
    if (is_recv_) {
      MPI_Cancel(&request_);
      MPI_Wait(&request_, MPI_STATUS_IGNORE);
    } else {
      MPI_Request_free(&request_);
    }
  }

  Status wait_until(Clock::time_point deadline) override {
    Backoff backoff;
    Clock::time_point last = Clock::now();
    while (!done_ && !poll()) {
      const Clock::time_point now = Clock::now();
      // A pause between two polls far longer than any backoff: this process did not run
      // (SIGSTOP, a debugger, an overloaded host), so the deadline says nothing of the peer.
      longest_pause_ = std::max(longest_pause_, now - last);
      last = now;
      if (now >= deadline && expire()) break;
      backoff.pause();
    }
    return finish();
  }

  bool test(Status* status) override {
    if (!done_ && !poll()) return false;
    *status = finish();
    return true;
  }

  int peer() const { return peer_; }
  int tag() const { return tag_; }

  // One MPI_Improbe for this receive's message: false while none has arrived. A matched
  // message is posted (MPI_Imrecv) or, when its size differs, drained and reported.
  bool try_match() {
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0;
    const int source = peer_ == kAnySource ? MPI_ANY_SOURCE : peer_;
    int rc = MPI_Improbe(source, tag_, comm_.mpi_comm(), &flag, &message, &st);
    if (rc == MPI_SUCCESS && !flag) return false;
    matched_ = true;
    if (rc != MPI_SUCCESS) return fail(rc, "MPI_Improbe");
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    if (static_cast<size_t>(bytes) != buffer_.size_bytes()) {
      drain(message, st, bytes);
      return true;
    }
    rc = MPI_Imrecv(buffer_.data(), static_cast<int>(buffer_.size()), MPI_FLOAT, &message,
                    &request_);
    if (rc != MPI_SUCCESS) return fail(rc, "MPI_Imrecv");
    return true;
  }

 private:
  bool fail(int rc, const char* call) {
    done_ = true;
    store_error(rc, call);
    return true;
  }

  // A matched message of another size than the buffer: received whole into scratch memory,
  // so that the communicator works on, and reported.
  void drain(MPI_Message& message, const MPI_Status& st, int bytes) {
    done_ = true;
    error_ = mismatch(st.MPI_SOURCE, st.MPI_TAG,
                      bytes % sizeof(float) == 0 ? std::to_string(bytes / sizeof(float))
                                                 : fmt::format("{} bytes, not whole", bytes));
    if (bytes > kMaxDrainBytes) return;  // its sender's wait ends at its deadline
    std::vector<char> scratch(bytes);
    auto guard = comm_.blocking("MPI_Mrecv (a message of another size)", scratch.size());
    MPI_Mrecv(scratch.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
  }

  std::exception_ptr mismatch(int source, int tag, const std::string& count) const {
    return std::make_exception_ptr(UsageError(fmt::format(
        "{}: recv buffer holds {} floats but the message from {} (tag {}) has {} floats; "
        "size the buffer to match the send",
        comm_.describe(comm_.rank()), buffer_.size(), comm_.describe(source), tag, count)));
  }

  // Matches pending receives, then one MPI_Test: true once complete (successfully or not).
  bool poll() {
    comm_.match_receives();
    if (done_) return true;
    if (!matched_) return false;
    MPI_Status st;
    int flag = 0;
    const int rc = MPI_Test(&request_, &flag, &st);
    if (rc == MPI_SUCCESS && !flag) return false;
    complete(rc, st);
    return true;
  }

  void complete(int rc, const MPI_Status& st) {
    done_ = true;
    request_ = MPI_REQUEST_NULL;  // MPI frees a completed request
    if (!is_recv_) {
      status_ = {comm_.rank(), tag_, send_count_};
      if (rc != MPI_SUCCESS) store_error(rc, "MPI_Isend");
      return;
    }
    int count = MPI_UNDEFINED;
    MPI_Get_count(&st, MPI_FLOAT, &count);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    // Matching checked the size; an MPI that still reports truncation is reported alike.
    if (error_class == MPI_ERR_TRUNCATE ||
        (rc == MPI_SUCCESS && static_cast<size_t>(count) != buffer_.size())) {
      const bool known = count != MPI_UNDEFINED && static_cast<size_t>(count) != buffer_.size();
      error_ = mismatch(st.MPI_SOURCE, st.MPI_TAG, known ? std::to_string(count) : "more");
      return;
    }
    if (rc != MPI_SUCCESS) {
      store_error(rc, "MPI_Irecv");
      return;
    }
    status_ = {st.MPI_SOURCE, st.MPI_TAG, static_cast<size_t>(count)};
  }

  void store_error(int rc, const char* call) {
    try {
      check(rc, call, peer_);
    } catch (...) {
      error_ = std::current_exception();
    }
  }

  // The deadline passed. Returns true if the operation completed after all (a receive
  // that matched while being cancelled is not a timeout); throws TimeoutError otherwise.
  bool expire() {
    if (!matched_) {
      comm_.forget_receive(this);  // nothing was posted: nothing to cancel
    } else if (is_recv_) {
      MPI_Cancel(&request_);
      MPI_Status st;
      int rc = MPI_SUCCESS;
      {
        // Cancelling is local and immediate, unless the message was already being
        // transferred from a peer that then vanished: the watchdog bounds that case.
        auto guard = comm_.blocking("MPI_Wait (cancelled receive)", buffer_.size_bytes());
        rc = MPI_Wait(&request_, &st);
      }
      int cancelled = 0;
      MPI_Test_cancelled(&st, &cancelled);
      if (!cancelled) {
        complete(rc, st);
        return true;
      }
      request_ = MPI_REQUEST_NULL;
    } else {
      // MPI cannot take a send back: free the request and let it finish or not. MPI may
      // still read the caller's buffer, so after this error the run must end (the MPI
      // launcher aborts the job).
      MPI_Request_free(&request_);
    }
    done_ = true;
    error_ = std::make_exception_ptr(TimeoutError(timeout_message(), peer_));
    std::rethrow_exception(error_);
  }

  std::string timeout_message() const {
    const std::string peer = peer_ == kAnySource ? "any rank" : comm_.describe(peer_);
    const std::string what = fmt::format("{}: {} {} {} ({}) passed its deadline ({:g} s timeout)",
                                         comm_.describe(comm_.rank()), is_recv_ ? "recv" : "send",
                                         is_recv_ ? "from" : "to", peer, tag_text(tag_),
                                         std::chrono::duration<double>(comm_.timeout()).count());
    const double stopped_s = std::chrono::duration<double>(longest_pause_).count();
    if (stopped_s >= kStoppedS)
      return fmt::format(
          "{} while this rank itself did not run for {:.1f} s (stopped by "
          "SIGSTOP or a debugger, or a starved host); it cannot tell whether {} "
          "is alive",
          what, stopped_s, peer);
    return fmt::format("{}; is {} alive and {}?", what, peer, is_recv_ ? "sending" : "receiving");
  }

  Status finish() {
    if (error_) std::rethrow_exception(error_);
    if (is_recv_ && !reported_ && comm_.events()) {
      reported_ = true;
      comm_.emit(message_event(EventKind::recv_end, status_.source, status_.tag,
                               buffer_.first(status_.count)));
    }
    return status_;
  }

  MpiCommunicator& comm_;
  MPI_Request request_;
  const bool is_recv_;
  const int peer_;  // destination, or requested source (kAnySource)
  const int tag_;
  const std::span<float> buffer_;  // receives only
  const size_t send_count_;
  bool matched_;  // a send, or a receive whose message MPI_Improbe matched
  bool done_ = false;
  bool reported_ = false;
  Status status_;
  std::exception_ptr error_;
  Clock::duration longest_pause_{0};  // between two polls of wait_until
};

// ---------------------------------------------------------------------------------------
// Set-up and point-to-point
// ---------------------------------------------------------------------------------------

MpiCommunicator::MpiCommunicator(MPI_Comm comm)
    : comm_(comm), host_(host_name()), watchdog_(who_am_i(comm)) {
  DSGD_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  DSGD_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  tag_ub_ = query_tag_ub();
  if (tag_ub_ < kCollectiveTagBase + kCollectiveTagSpan - 1)
    throw UsageError(fmt::format(
        "this MPI allows tags up to {} (MPI_TAG_UB), but dsgd's collectives use tags {} to {}; "
        "use an MPI with a larger MPI_TAG_UB (Open MPI's is 2147483647)",
        tag_ub_, kCollectiveTagBase, kCollectiveTagBase + kCollectiveTagSpan - 1));
  send_seq_.assign(size_, 0);
}

void MpiCommunicator::set_hosts(std::vector<std::string> hosts) {
  if (static_cast<int>(hosts.size()) == size_) hosts_ = std::move(hosts);
}

std::string MpiCommunicator::describe(int rank) const {
  if (rank == rank_) return fmt::format("rank {} (host {})", rank, host_);
  if (rank >= 0 && rank < static_cast<int>(hosts_.size()) && !hosts_[rank].empty())
    return fmt::format("rank {} (host {})", rank, hosts_[rank]);
  return fmt::format("rank {}", rank);
}

Watchdog::Scope MpiCommunicator::blocking(const char* call, size_t bytes) {
  return Watchdog::Scope(watchdog_, call, bytes, Clock::now() + timeout(), timeout());
}

void MpiCommunicator::check_tag(int tag, const char* what) const {
  if (tag > tag_ub_)
    throw UsageError(
        fmt::format("{}: {} with tag {}, but this MPI allows tags up to {} "
                    "(MPI_TAG_UB)",
                    describe(rank_), what, tag, tag_ub_));
}

int MpiCommunicator::checked_count(size_t count, const char* what) const {
  if (count > kMaxCount)
    throw UsageError(
        fmt::format("{}: {} of {} floats, but one MPI message carries at most {}; "
                    "split it",
                    describe(rank_), what, count, kMaxCount));
  return static_cast<int>(count);
}

Request MpiCommunicator::do_isend(std::span<const float> data, int dst, int tag) {
  check_tag(tag, "send");
  const int count = checked_count(data.size(), "send");
  if (events()) {
    emit(message_event(EventKind::send_begin, dst, tag, data, send_seq_[dst]));
  }
  ++send_seq_[dst];
  MPI_Request request = MPI_REQUEST_NULL;
  DSGD_MPI_CHECK_PEER(MPI_Isend(data.data(), count, MPI_FLOAT, dst, tag, comm_, &request), dst);
  return Request(std::make_shared<MpiRequest>(*this, request, false, dst, tag, std::span<float>{},
                                              data.size()),
                 timeout());
}

Request MpiCommunicator::do_irecv(std::span<float> data, int src, int tag) {
  check_tag(tag, "recv");
  checked_count(data.size(), "recv");
  if (events()) emit(message_event(EventKind::recv_begin, src, tag, data.size_bytes()));
  auto request = std::make_shared<MpiRequest>(*this, MPI_REQUEST_NULL, true, src, tag, data, 0);
  unmatched_.push_back(request.get());
  match_receives();  // a message already here is posted at once
  return Request(std::move(request), timeout());
}

// A receive that could take a message meant for an earlier one still unmatched waits for
// it, as MPI matches posted receives in order: same tag, and the same source or any. The
// receives before `it` are the earlier ones still waiting (the matched ones are erased).
void MpiCommunicator::match_receives() {
  for (auto it = unmatched_.begin(); it != unmatched_.end();) {
    const MpiRequest* r = *it;
    const bool behind = std::any_of(unmatched_.begin(), it, [r](const MpiRequest* w) {
      return w->tag() == r->tag() &&
             (w->peer() == r->peer() || w->peer() == kAnySource || r->peer() == kAnySource);
    });
    if (!behind && (*it)->try_match())
      it = unmatched_.erase(it);
    else
      ++it;
  }
}

void MpiCommunicator::forget_receive(const MpiRequest* request) {
  std::erase(unmatched_, request);
}

// ---------------------------------------------------------------------------------------
// Native collectives: MPI's blocking calls (the same code path as a bare MPI program, which
// bench/mpi measures), each under the watchdog. Every rank passes the same sizes, so the
// early returns (nothing to move, a shape MPI's call cannot express) agree on all ranks;
// returning false lets dsgd's own algorithm run instead.
// ---------------------------------------------------------------------------------------

bool MpiCommunicator::native_all_reduce(std::span<float> data, ReduceOp op) {
  if (data.size() > kMaxCount) return false;
  if (data.empty()) return true;
  {
    auto guard = blocking("MPI_Allreduce", data.size_bytes());
    DSGD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()),
                                 MPI_FLOAT, to_mpi(op), comm_));
  }
  finish_reduce(data, op, size_);
  return true;
}

bool MpiCommunicator::native_broadcast(std::span<float> data, int root) {
  if (data.size() > kMaxCount) return false;
  if (data.empty()) return true;
  auto guard = blocking("MPI_Bcast", data.size_bytes());
  DSGD_MPI_CHECK(MPI_Bcast(data.data(), static_cast<int>(data.size()), MPI_FLOAT, root, comm_));
  return true;
}

bool MpiCommunicator::native_reduce(std::span<float> data, ReduceOp op, int root) {
  if (data.size() > kMaxCount) return false;
  if (data.empty()) return true;
  {
    auto guard = blocking("MPI_Reduce", data.size_bytes());
    const int count = static_cast<int>(data.size());
    if (rank_ == root)
      DSGD_MPI_CHECK(
          MPI_Reduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, to_mpi(op), root, comm_));
    else  // data stays unchanged on non-roots, as MPI_Reduce only reads the send buffer
      DSGD_MPI_CHECK(MPI_Reduce(data.data(), nullptr, count, MPI_FLOAT, to_mpi(op), root, comm_));
  }
  if (rank_ == root) finish_reduce(data, op, size_);
  return true;
}

bool MpiCommunicator::native_gather(std::span<const float> send, std::span<float> recv, int root) {
  const size_t c = send.size();
  if (c * size_ > kMaxCount) return false;
  if (c == 0) return true;
  const void* send_buf = send.data();
  if (rank_ == root) {
    if (recv.size() != c * size_) return false;
    if (overlaps(send, recv)) {
      if (send.data() != recv.data() + root * c) return false;
      send_buf = MPI_IN_PLACE;  // root's row is already in place
    }
  }
  auto guard = blocking("MPI_Gather", send.size_bytes());
  DSGD_MPI_CHECK(MPI_Gather(send_buf, static_cast<int>(c), MPI_FLOAT,
                            rank_ == root ? recv.data() : nullptr, static_cast<int>(c), MPI_FLOAT,
                            root, comm_));
  return true;
}

bool MpiCommunicator::native_scatter(std::span<const float> send, std::span<float> recv, int root) {
  const size_t c = recv.size();
  if (c * size_ > kMaxCount) return false;
  if (c == 0) return true;
  void* recv_buf = recv.data();
  if (rank_ == root) {
    if (send.size() != c * size_) return false;
    if (overlaps(send, recv)) {
      if (recv.data() != send.data() + root * c) return false;
      recv_buf = MPI_IN_PLACE;  // root's row is already where it belongs
    }
  }
  auto guard = blocking("MPI_Scatter", recv.size_bytes());
  DSGD_MPI_CHECK(MPI_Scatter(rank_ == root ? send.data() : nullptr, static_cast<int>(c), MPI_FLOAT,
                             recv_buf, static_cast<int>(c), MPI_FLOAT, root, comm_));
  return true;
}

bool MpiCommunicator::native_all_gather(std::span<const float> send, std::span<float> recv) {
  const size_t c = send.size();
  if (c * size_ > kMaxCount || recv.size() != c * size_) return false;
  if (c == 0) return true;
  const void* send_buf = send.data();
  if (overlaps(send, recv)) {
    if (send.data() != recv.data() + rank_ * c) return false;
    send_buf = MPI_IN_PLACE;
  }
  auto guard = blocking("MPI_Allgather", recv.size_bytes());
  DSGD_MPI_CHECK(MPI_Allgather(send_buf, static_cast<int>(c), MPI_FLOAT, recv.data(),
                               static_cast<int>(c), MPI_FLOAT, comm_));
  return true;
}

bool MpiCommunicator::native_reduce_scatter(std::span<const float> send, std::span<float> recv,
                                            ReduceOp op) {
  const size_t c = recv.size();
  if (c * size_ > kMaxCount || send.size() != c * size_ || overlaps(send, recv)) return false;
  if (c == 0) return true;
  {
    auto guard = blocking("MPI_Reduce_scatter_block", send.size_bytes());
    DSGD_MPI_CHECK(MPI_Reduce_scatter_block(send.data(), recv.data(), static_cast<int>(c),
                                            MPI_FLOAT, to_mpi(op), comm_));
  }
  finish_reduce(recv, op, size_);
  return true;
}

bool MpiCommunicator::native_barrier() {
  auto guard = blocking("MPI_Barrier", 0);
  DSGD_MPI_CHECK(MPI_Barrier(comm_));
  return true;
}

}  // namespace dsgd::mpi
