#include "sim/node.h"

#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "core/errors.h"
#include "core/message_events.h"
#include "sim/crc32c.h"
#include "sim/fd_limit.h"
#include "sim/loopback_hub.h"
#include "sim/node_listener.h"

namespace dsgd::sim {

namespace {
// Seconds as whole ns for a frame, saturated: an outage that never ends delivers at 1e300 s,
// which must stay "never" (about 146 years here), not wrap round to the past and deliver now.
int64_t saturated_ns(double s) {
  constexpr double kLimit = 4.6e18;  // ns, about half of int64's range
  return static_cast<int64_t>(std::clamp(s * 1e9, -kLimit, kLimit));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------

class SimRequest final : public RequestImpl {
 public:
  // A send's request keeps its buffer and CRC32C (NodeOptions::guard_sends).
  struct Guard {
    std::span<const float> data;
    uint32_t crc = 0;
  };
  SimRequest(SimNode& node, std::shared_ptr<OpState> op, std::optional<Guard> guard = {})
      : node_(node), op_(std::move(op)), guard_(guard) {}
  ~SimRequest() override {
    if (guard_ && !finished_ && node_.unwaited_send_.empty())
      node_.unwaited_send_ = fmt::format(
          "rank {}: its isend to rank {} ({}) was never waited for; wait for every request "
          "(MPI: MPI_Wait), or the buffer may be reused while the message is sent",
          node_.rank(), op_->peer, tag_text(op_->tag));
  }

  Status wait_until(Clock::time_point deadline) override {
    if (!node_.mailbox_.wait_until(op_, deadline)) {
      // A receive that completes between the timeout and the cancel is not a timeout.
      if (!op_->is_recv || node_.mailbox_.cancel_recv(op_)) throw_timeout();
    }
    return finish();
  }

  bool test(Status* status) override {
    node_.pump(Clock::now());  // progress: a loop of tests must move bytes too
    if (!node_.mailbox_.poll(op_)) return false;
    *status = finish();
    return true;
  }

 private:
  Status finish() {
    finished_ = true;
    Status status = Mailbox::result(*op_);  // throws the stored error
    if (guard_ && crc32c(guard_->data.data(), guard_->data.size_bytes()) != guard_->crc)
      throw CommError(
          fmt::format("rank {}: the buffer of its isend to rank {} ({}) changed before the "
                      "send's wait returned; MPI leaves such a message undefined: write to the "
                      "buffer only after wait (a receive into it counts)",
                      node_.rank(), op_->peer, tag_text(op_->tag)),
          node_.rank());
    // A send above the eager limit ended when it was matched; a receive that matched one
    // tells its sender now, before this thread goes on to compute.
    if (!op_->is_recv) node_.advance_model_to(op_->model_s);
    if (op_->is_recv) node_.send_matches();
    if (op_->is_recv && !reported_) {
      reported_ = true;
      node_.observe_arrival(*op_);
      if (!node_.events()) return status;
      node_.emit(message_event(EventKind::recv_end, status.source, status.tag,
                               op_->buffer.first(status.count)));
    }
    return status;
  }

  [[noreturn]] void throw_timeout() {
    const auto seconds = std::chrono::duration<double>(node_.timeout()).count();
    const std::string peer =
        op_->peer == kAnySource ? "any rank" : fmt::format("rank {}", op_->peer);
    if (!op_->is_recv) {
      // A send still queued references the caller's buffer: dropping the link lets go of
      // it before we return.
      node_.drop_peer(op_->peer, "send passed its deadline");
    }
    // A peer of another process that crashed before it connected is only found out here
    // (in one process, its hub tells at once).
    const bool never = node_.listener_ && op_->peer != kAnySource && !node_.has_link(op_->peer);
    const bool recv = op_->is_recv;
    const std::string down =
        op_->peer == kAnySource
            ? ""
            : node_.outage_note(recv ? op_->peer : node_.rank(), recv ? node_.rank() : op_->peer);
    throw TimeoutError(
        fmt::format("rank {}: {} {} {} ({}) passed its deadline ({:g} s timeout); {}{}",
                    node_.rank(), recv ? "recv" : "send", recv ? "from" : "to", peer,
                    tag_text(op_->tag), seconds,
                    !down.empty()
                        ? down
                        : fmt::format("is {} alive and {}?", peer, recv ? "sending" : "receiving"),
                    never ? " (it never connected)" : ""),
        op_->peer);
  }

  SimNode& node_;
  std::shared_ptr<OpState> op_;
  bool reported_ = false;
  std::optional<Guard> guard_;
  bool finished_ = false;
};

// ---------------------------------------------------------------------------------------
// Set-up
// ---------------------------------------------------------------------------------------

SimNode::SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock)
    : SimNode(rank, world, options, network, clock, nullptr) {}

SimNode::SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock,
                 LoopbackHub& hub)
    : SimNode(rank, world, options, network, clock, &hub) {}

SimNode::SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock,
                 LoopbackHub* hub)
    : rank_(rank),
      world_(world),
      options_(options),
      checksums_(hub == nullptr),
      network_(network),
      clock_(clock),
      mailbox_(rank, world, clock, *this) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    if (errno == EMFILE || errno == ENFILE)
      throw fd_limit_error(fmt::format("rank {}: making its wake-up descriptor", rank));
    throw CommError(fmt::format("rank {}: eventfd failed: {}", rank, std::strerror(errno)), -1);
  }
  peers_.reserve(world);
  for (int i = 0; i < world; ++i)
    peers_.push_back(std::make_unique<Peer>());
  if (hub) {
    connector_ = hub->join(rank, mailbox_, refusals_);
  } else {
    auto listener =
        std::make_unique<NodeListener>(rank, world, options_.listen_address, mailbox_, refusals_);
    listener_ = listener.get();
    connector_ = std::move(listener);
  }
}

SimNode::~SimNode() {
  close();
}

uint16_t SimNode::port() const {
  return connector_->port();
}

void SimNode::set_job(const JobIdentity& job) {
  job_ = job;
  if (listener_) listener_->set_job(job);
}

void SimNode::set_peer_addresses(std::vector<PeerAddress> peers) {
  if (!listener_)
    throw std::logic_error(
        "set_peer_addresses: the nodes of one process connect through their hub");
  listener_->set_peers(std::move(peers));
}

void SimNode::start() {
  stage_.resize(kStageBytes);
  connector_->start();
}

// ---------------------------------------------------------------------------------------
// Compute, model time and faults (rank thread)
// ---------------------------------------------------------------------------------------

void SimNode::on_compute(double measured_s, double flops) {
  model_now_s_.store(model_s() + compute_model_s(flops), std::memory_order_relaxed);
  straggle(measured_s);
  check_crash_time();
}

double SimNode::compute_model_s(double flops) const {
  return flops / (options_.gflops * 1e9) * options_.straggler;
}

void SimNode::straggle(double measured_s) const {
  if (options_.straggler > 1.0)
    std::this_thread::sleep_for(
        std::chrono::duration<double>(measured_s * (options_.straggler - 1)));
}

void SimNode::on_step(int64_t step) {
  if (options_.crash_at_step && step >= *options_.crash_at_step) throw NodeCrashed{rank_};
  check_crash_time();
  if (step_check_) step_check_(step);
}

void SimNode::check_crash_time() {
  if (options_.crash_at_s && clock_.now_s() >= *options_.crash_at_s) throw NodeCrashed{rank_};
}

void SimNode::observe_arrival(const OpState& op) {
  advance_model_to(op.model_s);
  // Only a wait measures how late this thread runs; one that did not block leaves the lag
  // as it was (the thread has not caught up since).
  if (op.blocked) lag_s_ = std::clamp(clock_.now_s() - op.visible_net_s, 0.0, kMaxLagS);
  last_arrival_net_s_ = std::max(last_arrival_net_s_, op.visible_net_s);
}

void SimNode::released_at(double t) {
  lag_s_ = std::clamp(clock_.now_s() - t, 0.0, kMaxLagS);
  last_arrival_net_s_ = std::max(last_arrival_net_s_, t);
}

double SimNode::net_now_s() const {
  // Never before a message this thread has already received: a reply cannot leave before
  // what it answers arrived, or early stamps would add up along a chain of messages.
  return std::max(clock_.now_s() - lag_s_, last_arrival_net_s_);
}

// ---------------------------------------------------------------------------------------
// Point-to-point
// ---------------------------------------------------------------------------------------

Request SimNode::send_request(std::shared_ptr<OpState> op, std::span<const float> data) {
  std::optional<SimRequest::Guard> guard;
  if (options_.guard_sends) guard = SimRequest::Guard{data, crc32c(data.data(), data.size_bytes())};
  return Request(std::make_shared<SimRequest>(*this, std::move(op), guard), timeout());
}

void SimNode::check_sends() const {
  if (!unwaited_send_.empty()) throw CommError(unwaited_send_, rank_);
}

Request SimNode::do_isend(std::span<const float> data, int dst, int tag) {
  check_crash_time();
  mailbox_.check_can_send(dst);
  Peer& peer = *peers_[dst];
  auto op = mailbox_.new_send(dst, tag);
  op->status = {rank_, tag, data.size()};
  if (events()) {
    emit(message_event(EventKind::send_begin, dst, tag, data, peer.next_seq));
  }
  const double net_now = net_now_s();
  const double stamped_at = clock_.now_s();
  if (dst == rank_) {  // to itself: no socket, no link
    mailbox_.deliver(Message{.source = rank_,
                             .dest = rank_,
                             .tag = tag,
                             .seq = peer.next_seq++,
                             .payload = Payload(data.begin(), data.end()),
                             .visible_net_s = net_now,
                             .model_s = model_s()});
    mailbox_.complete(op);
    return send_request(op, data);
  }
  if (!peer.lost && !has_link(dst) && !open_link(dst, op)) return send_request(op, data);
  Network::Arrival arrival = network_.schedule(rank_, dst, data.size_bytes(), net_now, model_s());
  arrival.net_s = peer.last_net_s = std::max(arrival.net_s, peer.last_net_s);
  arrival.model_s = peer.last_model_s = std::max(arrival.model_s, peer.last_model_s);
  if (arrival.retransmits > 0 && events()) emit(retransmit_note(dst, tag, arrival.retransmits));
  const bool sync = data.size_bytes() > options_.eager_bytes;
  FrameHeader header{
      .kind = sync ? FrameKind::data_sync : FrameKind::data,
      .source = rank_,
      .tag = tag,
      .seq = peer.next_seq++,
      // Clocks not shared: the delay, which the receiver adds to its clock.
      .visible_ns = saturated_ns(shared_clock_ ? arrival.net_s : arrival.net_s - net_now),
      .model_ns = saturated_ns(arrival.model_s),
      .length = data.size_bytes(),
      .crc32c = checksums_ ? crc32c(data.data(), data.size_bytes()) : 0};
  sent_.fetch_add(1, std::memory_order_release);
  if (peer.lost) {
    mailbox_.complete(op, std::make_exception_ptr(CommError(
                              fmt::format("rank {}: no connection to rank {}", rank_, dst), dst)));
    return send_request(op, data);
  }
  // Queued with the caller's buffer and written at once as far as the socket takes it; only
  // an eager send the socket did not take whole is copied.
  // A send above the eager limit completes at its match (take_match), which comes only
  // after the receiver has read it whole, so after it was written.
  peer.outbox.push_back(
      OutFrame{.header = encode_header(header), .data = data, .op = sync ? nullptr : op});
  if (sync) peer.awaiting_match.emplace_back(header.seq, op);
  frames_queued_.fetch_add(1, std::memory_order_relaxed);
  write_peer(dst);
  if (data.size_bytes() <= options_.eager_bytes && !op->done) {
    OutFrame& f = peer.outbox.back();  // still queued, so still the last
    f.owned.assign(data.begin(), data.end());
    f.data = f.owned;
    f.op = nullptr;
    mailbox_.complete(op);
  }
  // The model has no per-message CPU cost: what this thread spent in the transport after
  // stamping the message (checksum, system call, copy) does not delay its next send either,
  // as with scheduler lag (a root sending to 15 ranks would otherwise stamp the last late).
  lag_s_ = std::min(kMaxLagS, lag_s_ + (clock_.now_s() - stamped_at));
  return send_request(op, data);
}

Request SimNode::do_irecv(std::span<float> data, int src, int tag) {
  check_crash_time();
  if (events()) emit(message_event(EventKind::recv_begin, src, tag, data.size_bytes()));
  auto op = mailbox_.post_recv(data, src, tag, model_s());
  send_matches();
  return Request(std::make_shared<SimRequest>(*this, std::move(op)), timeout());
}

void SimNode::send_matches() {
  for (const Mailbox::Match& m : mailbox_.take_matches()) {
    Peer& peer = *peers_[m.source];
    if (peer.lost) continue;  // its send failed with the connection
    const FrameHeader header{.kind = FrameKind::matched,
                             .source = rank_,
                             .tag = m.tag,
                             .seq = m.seq,
                             .model_ns = saturated_ns(m.model_s)};
    peer.outbox.push_back(OutFrame{.header = encode_header(header)});
    frames_queued_.fetch_add(1, std::memory_order_relaxed);
    matches_sent_.fetch_add(1, std::memory_order_release);
    write_peer(m.source);
  }
}

// ---------------------------------------------------------------------------------------
// Failure and shutdown
// ---------------------------------------------------------------------------------------

void SimNode::flush(Clock::time_point deadline) {
  while (frames_queued_.load(std::memory_order_relaxed) > 0) {
    if (Clock::now() > deadline)
      throw TimeoutError(fmt::format("rank {}: {} messages still unsent at the end of the run",
                                     rank_, frames_queued_.load()),
                         -1);
    pump(std::min(deadline, Clock::now() + std::chrono::milliseconds(10)));
  }
}

std::string SimNode::failure() {
  // The rank thread moves the bytes: outside the network's waits nobody reads the sockets,
  // so a peer's EOF is only seen by reading what is ready now.
  pump(Clock::now());
  return mailbox_.failure();
}

void SimNode::abort(const std::string& reason) {
  mailbox_.abort(reason);
  // The fds stay open (only close() closes them), so shutting them down from this thread
  // cannot hit a descriptor reused meanwhile. The rank thread fails its queued sends.
  {
    std::lock_guard lock(fds_mutex_);
    for (int fd : fds_)
      ::shutdown(fd, SHUT_RDWR);
  }
  abort_requested_.store(true);
  wake();
}

void SimNode::leave(const std::string& reason) {
  if (closing_.load()) return;
  // The failed function has unwound: no receive may be filled and no queued send read from
  // its buffers any more. Only the farewell (which owns its bytes) is written; nothing is
  // read.
  mailbox_.abort(reason);
  const std::string text = reason.substr(0, kMaxFarewellBytes);
  std::vector<float> payload((text.size() + sizeof(float) - 1) / sizeof(float), 0.0f);
  std::memcpy(payload.data(), text.data(), text.size());
  const uint32_t crc = crc32c(payload.data(), payload.size() * sizeof(float));
  const auto deadline = Clock::now() + std::chrono::milliseconds(200);
  for (int p = 0; p < world_; ++p) {
    Peer& peer = *peers_[p];
    if (p == rank_ || peer.lost || peer.link_count == 0 || peer.links[0].connecting) continue;
    // A frame half written cannot be cut short: that peer learns from the closed connection.
    if (!peer.outbox.empty() && peer.outbox.front().written > 0) continue;
    drop_unsent(peer, reason);
    const FrameHeader header{.kind = FrameKind::farewell,
                             .source = rank_,
                             .length = payload.size() * sizeof(float),
                             .crc32c = crc};
    OutFrame frame{.header = encode_header(header), .owned = payload};
    frame.data = frame.owned;
    peer.outbox.push_back(std::move(frame));
    frames_queued_.fetch_add(1, std::memory_order_relaxed);
    while (!peer.outbox.empty() && !peer.lost && Clock::now() < deadline) {
      write_peer(p);
      if (!peer.outbox.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

// Fails the peer's queued frames that were not started (their buffers may be gone).
void SimNode::drop_unsent(Peer& peer, const std::string& reason) {
  const auto gone = std::make_exception_ptr(CommError(reason, rank_));
  while (!peer.outbox.empty()) {
    std::shared_ptr<OpState> op = std::move(peer.outbox.front().op);
    peer.outbox.pop_front();
    frames_queued_.fetch_sub(1, std::memory_order_relaxed);
    if (op) mailbox_.complete(op, gone);
  }
}

void SimNode::crash() {
  const std::string reason = fmt::format("rank {} crashed", rank_);
  mailbox_.abort(reason);
  closing_ = true;
  for (int p = 0; p < world_; ++p)
    drop_peer(p, "crashed");
  connector_->crashed(reason);
}

void SimNode::close() {
  if (closing_.exchange(true) && wake_fd_ < 0) return;
  connector_->close();
  {
    std::lock_guard lock(fds_mutex_);
    for (int fd : fds_)
      ::close(fd);
    fds_.clear();
  }
  for (auto& peer : peers_)
    for (Link& link : peer->links)
      link.fd = -1;
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
}

std::string SimNode::outage_note(int src, int dst) const {
  if (!network_.down_for_good(src, dst, clock_.now_s())) return "";
  return fmt::format(
      "the link {} -> {} is down for good (an outage without 'until' in the "
      "scenario), so nothing crosses it",
      src, dst);
}

}  // namespace dsgd::sim
