#include "sim/node.h"

#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "core/errors.h"
#include "sim/crc32c.h"

namespace dsgd::sim {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
// Strangers being read at once beyond this are refused unread.
constexpr size_t kMaxStrangers = 16;

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
  SimRequest(SimNode& node, std::shared_ptr<OpState> op) : node_(node), op_(std::move(op)) {}

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
    Status status = Mailbox::result(*op_);  // throws the stored error
    if (op_->is_recv && !reported_) {
      reported_ = true;
      node_.observe_arrival(*op_);
      if (!node_.events()) return status;
      Event e{.kind = EventKind::recv_end,
              .peer = status.source,
              .tag = status.tag,
              .bytes = status.count * sizeof(float),
              .op = "recv"};
      e.preview_count = static_cast<uint8_t>(std::min<size_t>(4, status.count));
      for (int i = 0; i < e.preview_count; ++i)
        e.preview[i] = op_->buffer[i];
      node_.emit(e);
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
    const bool recv = op_->is_recv;
    const std::string down =
        op_->peer == kAnySource
            ? ""
            : node_.outage_note(recv ? op_->peer : node_.rank(), recv ? node_.rank() : op_->peer);
    throw TimeoutError(
        fmt::format("rank {}: {} {} {} ({}) passed its deadline ({:g} s timeout); {}", node_.rank(),
                    recv ? "recv" : "send", recv ? "from" : "to", peer, tag_text(op_->tag), seconds,
                    !down.empty()
                        ? down
                        : fmt::format("is {} alive and {}?", peer, recv ? "sending" : "receiving")),
        op_->peer);
  }

  SimNode& node_;
  std::shared_ptr<OpState> op_;
  bool reported_ = false;
};

// ---------------------------------------------------------------------------------------
// Set-up
// ---------------------------------------------------------------------------------------

SimNode::SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock)
    : rank_(rank),
      world_(world),
      options_(options),
      network_(network),
      clock_(clock),
      mailbox_(rank, world, clock, *this) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0)
    throw CommError(fmt::format("rank {}: eventfd failed: {}", rank, std::strerror(errno)), -1);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options_.listen_address, ec);
  if (ec)
    throw UsageError(fmt::format("listen address '{}': give an IP address, e.g. 0.0.0.0",
                                 options_.listen_address));
  acceptor_ = std::make_unique<tcp::acceptor>(io_, tcp::endpoint(address, 0));
  peers_.reserve(world);
  for (int i = 0; i < world; ++i)
    peers_.push_back(std::make_unique<Peer>());
}

SimNode::~SimNode() {
  close();
}

uint16_t SimNode::port() const {
  return acceptor_->local_endpoint().port();
}

void SimNode::connect(int peer, uint16_t port, const std::string& host) {
  const Clock::time_point deadline = Clock::now() + timeout();
  auto socket = std::make_unique<tcp::socket>(io_);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) ec = connect_until(*socket, tcp::endpoint(address, port), deadline);
  const Hello hello{.world = world_,
                    .rank = rank_,
                    .epoch_ns = job_.epoch_ns,
                    .run_hash = job_.run_hash,
                    .token = job_.token};
  if (!ec) ec = write_until(*socket, encode_hello(hello), deadline);
  if (ec)
    throw CommError(fmt::format("rank {}: cannot connect to rank {} at {}:{}: {}", rank_, peer,
                                host, port, ec.message()),
                    peer);
  attach(peer, std::move(socket));
}

void SimNode::accept_one() {
  const Clock::time_point deadline = Clock::now() + timeout();
  const std::string who = fmt::format("rank {}", rank_);
  while (true) {
    auto socket = std::make_unique<tcp::socket>(io_);
    const boost::system::error_code ec = accept_until(*acceptor_, *socket, deadline);
    if (ec) {
      // Higher ranks connect to lower ones: the missing ones are above this rank.
      std::string missing;
      int first = -1;
      for (int p = rank_ + 1; p < world_; ++p)
        if (!peers_[p]->socket) {
          missing += fmt::format("{}{}", missing.empty() ? "" : ", ", p);
          if (first < 0) first = p;
        }
      const std::string what =
          fmt::format("rank {}: rank{} {} did not connect", rank_,
                      missing.find(',') == std::string::npos ? "" : "s", missing);
      if (ec == asio::error::timed_out)
        throw TimeoutError(fmt::format("{} within {:g} s; did it start, with the same --token?",
                                       what, std::chrono::duration<double>(timeout()).count()),
                           first);
      throw CommError(fmt::format("{}: {}", what, ec.message()), first);
    }
    std::string why;
    const auto hello = read_hello(*socket, std::min(deadline, Clock::now() + kHelloTimeout), &why);
    if (hello) why = check_hello(*hello, job_, world_, rank_);
    if (why.empty() && hello->rank < rank_)
      why = fmt::format("rank {} connected to a higher rank (lower ranks accept)", hello->rank);
    if (why.empty() && peers_[hello->rank]->socket)
      why = fmt::format("rank {} is connected already", hello->rank);
    if (why.empty()) {
      attach(hello->rank, std::move(socket));
      return;
    }
    log_refusal(who, *socket, why);  // and keep accepting: a foreign peer breaks nothing
    note_refusal(fmt::format("{}: {}", remote_name(*socket), why));
  }
}

void SimNode::note_refusal(const std::string& line) {
  std::lock_guard lock(refusals_mutex_);
  refusals_.push_back(line);
}

std::vector<std::string> SimNode::refusals() const {
  std::lock_guard lock(refusals_mutex_);
  return refusals_;
}

// ---------------------------------------------------------------------------------------
// Strangers: connections after set-up (I/O thread)
// ---------------------------------------------------------------------------------------

void SimNode::accept_strangers() {
  auto stranger = std::make_shared<Stranger>(io_);
  acceptor_->async_accept(stranger->socket, [this, stranger](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;  // closing
    if (!ec) {
      strangers_.push_back(stranger);
      if (strangers_.size() > kMaxStrangers)
        refuse(stranger, fmt::format("more than {} connections at once", kMaxStrangers));
      else
        read_stranger(stranger);
    }
    // Other errors (a connection reset before it was accepted, out of descriptors) are
    // the one connection's: keep accepting.
    accept_strangers();
  });
}

void SimNode::read_stranger(const std::shared_ptr<Stranger>& s) {
  s->timer.expires_after(kHelloTimeout);
  s->timer.async_wait([this, s](boost::system::error_code ec) {
    if (!ec) refuse(s, fmt::format("no hello within {} s", kHelloTimeout.count()));
  });
  asio::async_read(
      s->socket, asio::buffer(s->header), [this, s](boost::system::error_code ec, size_t) {
        if (ec == asio::error::operation_aborted) return;  // refused meanwhile
        if (ec)
          return refuse(s, ec == asio::error::eof ? "closed the connection during the handshake"
                                                  : ec.message());
        std::string why;
        const auto header = decode_header(s->header, &why);
        if (!header) return refuse(s, why);
        if (header->kind != FrameKind::hello) return refuse(s, "sent data before a hello");
        if (header->length > kMaxHelloBytes)  // before allocating: the peer chose the length
          return refuse(s, fmt::format("hello of {} bytes is over the {}-byte limit",
                                       header->length, kMaxHelloBytes));
        s->frame = *header;
        s->payload.resize(header->length);
        asio::async_read(
            s->socket, asio::buffer(s->payload), [this, s](boost::system::error_code ec2, size_t) {
              if (ec2 == asio::error::operation_aborted) return;
              if (ec2) return refuse(s, "connection lost: " + ec2.message());
              std::string why2;
              const auto hello = decode_hello(s->payload, &why2);
              if (hello) why2 = check_payload(s->frame, s->payload);
              if (why2.empty()) why2 = check_hello(*hello, job_, world_, rank_);
              if (why2.empty())
                why2 =
                    fmt::format("rank {} is connected already (the run has started)", hello->rank);
              refuse(s, why2);
            });
      });
}

void SimNode::refuse(const std::shared_ptr<Stranger>& s, const std::string& why) {
  if (!s->socket.is_open()) return;  // refused already (its timer and its read both fired)
  log_refusal(fmt::format("rank {}", rank_), s->socket, why);
  note_refusal(fmt::format("{}: {}", remote_name(s->socket), why));
  boost::system::error_code ignored;
  s->timer.cancel();
  s->socket.close(ignored);
  strangers_.remove(s);
}

void SimNode::attach(int peer, std::unique_ptr<tcp::socket> socket) {
  socket->set_option(tcp::no_delay(true));
  peers_[peer]->socket = std::move(socket);
}

void SimNode::start() {
  // The rank thread polls the peers' sockets itself: take them out of Asio, whose reactor
  // would otherwise wake the I/O thread for every frame that arrives.
  for (auto& peer : peers_)
    if (peer->socket) {
      peer->fd = peer->socket->release();
      peer->socket.reset();
    }
  stage_.resize(kStageBytes);
  accept_strangers();
  work_.emplace(io_.get_executor());
  io_thread_ = std::thread([this] {
    prctl(PR_SET_TIMERSLACK, 1000UL);  // 1 us instead of Linux's default 50 us
    io_.run();
  });
}

// ---------------------------------------------------------------------------------------
// Compute, model time and faults (rank thread)
// ---------------------------------------------------------------------------------------

void SimNode::on_compute(double measured_s, double flops) {
  model_now_s_ += flops / (options_.gflops * 1e9) * options_.straggler;
  if (options_.straggler > 1.0)
    std::this_thread::sleep_for(
        std::chrono::duration<double>(measured_s * (options_.straggler - 1)));
  check_crash_time();
}

void SimNode::on_step(int64_t step) {
  if (options_.crash_at_step && step >= *options_.crash_at_step) throw NodeCrashed{rank_};
  check_crash_time();
}

void SimNode::check_crash_time() {
  if (options_.crash_at_s && clock_.now_s() >= *options_.crash_at_s) throw NodeCrashed{rank_};
}

void SimNode::observe_arrival(const OpState& op) {
  model_now_s_ = std::max(model_now_s_, op.model_s);
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

Request SimNode::do_isend(std::span<const float> data, int dst, int tag) {
  check_crash_time();
  mailbox_.check_can_send(dst);
  Peer& peer = *peers_[dst];
  auto op = mailbox_.new_send(dst, tag);
  op->status = {rank_, tag, data.size()};
  if (events()) {
    Event e{.kind = EventKind::send_begin,
            .peer = dst,
            .tag = tag,
            .bytes = data.size_bytes(),
            .seq = peer.next_seq,
            .op = "send"};
    e.preview_count = static_cast<uint8_t>(std::min<size_t>(4, data.size()));
    for (int i = 0; i < e.preview_count; ++i)
      e.preview[i] = data[i];
    emit(e);
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
                             .model_s = model_now_s_});
    mailbox_.complete(op);
    return Request(std::make_shared<SimRequest>(*this, op), timeout());
  }
  Network::Arrival arrival =
      network_.schedule(rank_, dst, data.size_bytes(), net_now, model_now_s_);
  arrival.net_s = peer.last_net_s = std::max(arrival.net_s, peer.last_net_s);
  arrival.model_s = peer.last_model_s = std::max(arrival.model_s, peer.last_model_s);
  FrameHeader header{
      .kind = FrameKind::data,
      .source = rank_,
      .tag = tag,
      .seq = peer.next_seq++,
      // Clocks not shared: the delay, which the receiver adds to its clock.
      .visible_ns = saturated_ns(shared_clock_ ? arrival.net_s : arrival.net_s - net_now),
      .model_ns = saturated_ns(arrival.model_s),
      .length = data.size_bytes(),
      .crc32c = crc32c(data.data(), data.size_bytes())};
  sent_.fetch_add(1, std::memory_order_release);
  if (peer.lost) {
    mailbox_.complete(op, std::make_exception_ptr(CommError(
                              fmt::format("rank {}: no connection to rank {}", rank_, dst), dst)));
    return Request(std::make_shared<SimRequest>(*this, op), timeout());
  }
  // Queued with the caller's buffer and written at once as far as the socket takes it; only
  // an eager send the socket did not take whole is copied.
  peer.outbox.push_back(OutFrame{.header = encode_header(header), .data = data, .op = op});
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
  return Request(std::make_shared<SimRequest>(*this, op), timeout());
}

Request SimNode::do_irecv(std::span<float> data, int src, int tag) {
  check_crash_time();
  if (events())
    emit({.kind = EventKind::recv_begin,
          .peer = src,
          .tag = tag,
          .bytes = data.size_bytes(),
          .op = "recv"});
  return Request(std::make_shared<SimRequest>(*this, mailbox_.post_recv(data, src, tag)),
                 timeout());
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
  for (const auto& peer : peers_)
    if (peer->fd >= 0) ::shutdown(peer->fd, SHUT_RDWR);
  abort_requested_.store(true);
  wake();
}

void SimNode::crash() {
  mailbox_.abort(fmt::format("rank {} crashed", rank_));
  closing_ = true;
  for (int p = 0; p < world_; ++p)
    drop_peer(p, "crashed");
}

void SimNode::close() {
  if (closing_.exchange(true) && !io_thread_.joinable() && wake_fd_ < 0) return;
  if (io_thread_.joinable()) {
    asio::post(io_, [this] {
      boost::system::error_code ignored;
      acceptor_->close(ignored);
      for (auto& s : strangers_) {  // their pending reads and timers would keep run() going
        s->timer.cancel();
        s->socket.close(ignored);
      }
      strangers_.clear();
    });
    work_.reset();
    io_thread_.join();
  }
  boost::system::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
  for (auto& peer : peers_) {
    if (peer->socket) peer->socket->close(ignored);
    if (peer->fd >= 0) ::close(peer->fd);
    peer->fd = -1;
  }
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
