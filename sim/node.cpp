#include "sim/node.h"

#include <sys/prctl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {

namespace asio = boost::asio;
using asio::ip::tcp;

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
    if (!node_.mailbox_.wait_until(op_, Clock::time_point::min())) return false;
    *status = finish();
    return true;
  }

 private:
  Status finish() {
    Status status = Mailbox::result(*op_);  // throws the stored error
    if (op_->is_recv && !reported_ && node_.events()) {
      reported_ = true;
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
      // A send still in flight references the caller's buffer: break the link so the
      // I/O thread lets go of it before we return.
      node_.break_link(op_->peer, "send passed its deadline");
      node_.mailbox_.wait_until(op_, Clock::now() + std::chrono::seconds(5));
    }
    throw TimeoutError(
        fmt::format("rank {}: {} {} {} (tag {}) passed its deadline ({:g} s "
                    "timeout); is {} alive and {}?",
                    node_.rank(), op_->is_recv ? "recv" : "send", op_->is_recv ? "from" : "to",
                    peer, op_->tag, seconds, peer, op_->is_recv ? "sending" : "receiving"),
        op_->peer);
  }

  SimNode& node_;
  std::shared_ptr<OpState> op_;
  bool reported_ = false;
};

// ---------------------------------------------------------------------------------------
// Set-up
// ---------------------------------------------------------------------------------------

SimNode::SimNode(int rank, int world, const NodeOptions& options)
    : rank_(rank), world_(world), options_(options), mailbox_(rank, world) {
  acceptor_ =
      std::make_unique<tcp::acceptor>(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  peers_.reserve(world);
  for (int i = 0; i < world; ++i)
    peers_.push_back(std::make_unique<Peer>(io_));
}

SimNode::~SimNode() {
  close();
}

uint16_t SimNode::port() const {
  return acceptor_->local_endpoint().port();
}

void SimNode::connect(int peer, uint16_t port) {
  auto socket = std::make_unique<tcp::socket>(io_);
  socket->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  FrameHeader hello{.kind = FrameKind::hello, .source = rank_};
  const HeaderBytes bytes = encode_header(hello);
  asio::write(*socket, asio::buffer(bytes));
  attach(peer, std::move(socket));
}

void SimNode::accept_one() {
  auto socket = std::make_unique<tcp::socket>(io_);
  acceptor_->accept(*socket);
  HeaderBytes bytes{};
  asio::read(*socket, asio::buffer(bytes));
  std::string why;
  auto hello = decode_header(bytes, &why);
  if (!hello || hello->kind != FrameKind::hello || hello->source >= world_ ||
      hello->source == rank_)
    throw CommError(fmt::format("rank {}: refused a connection during set-up: {}", rank_,
                                why.empty() ? "not a hello from a rank of this job" : why),
                    -1);
  attach(hello->source, std::move(socket));
}

void SimNode::attach(int peer, std::unique_ptr<tcp::socket> socket) {
  socket->set_option(tcp::no_delay(true));
  peers_[peer]->socket = std::move(socket);
}

void SimNode::start() {
  for (int p = 0; p < world_; ++p)
    if (peers_[p]->socket) read_header(p);
  work_.emplace(io_.get_executor());
  io_thread_ = std::thread([this] {
    // Linux lets timers fire up to 50 us late by default; the link model wants them on time.
    prctl(PR_SET_TIMERSLACK, 1000UL);  // 1 us
    io_.run();
  });
}

int64_t SimNode::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------------------------------
// Point-to-point
// ---------------------------------------------------------------------------------------

Request SimNode::do_isend(std::span<const float> data, int dst, int tag) {
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
  if (dst == rank_) {  // to itself: no socket, no link
    mailbox_.deliver(Message{rank_, tag, peer.next_seq++, {data.begin(), data.end()}});
    mailbox_.complete(op);
    return Request(std::make_shared<SimRequest>(*this, op), timeout());
  }
  FrameHeader header{.kind = FrameKind::data,
                     .source = rank_,
                     .tag = tag,
                     .seq = peer.next_seq++,
                     .length = data.size_bytes()};
  if (!options_.link.ideal()) {
    const double now = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
    const double arrive = peer.link_clock.schedule(now, data.size_bytes(), options_.link);
    header.deliver_at_ns = static_cast<int64_t>(arrive * 1e9);
  }
  OutFrame frame{.header = encode_header(header)};
  if (data.size_bytes() <= options_.eager_bytes) {
    frame.owned.assign(data.begin(), data.end());
    frame.data = frame.owned;
    mailbox_.complete(op);
  } else {
    frame.data = data;
    frame.op = op;
  }
  frames_queued_.fetch_add(1, std::memory_order_relaxed);
  asio::post(io_, [this, dst, frame = std::move(frame)]() mutable {
    // The eager copy's vector moved with the frame; re-point the span at it.
    if (!frame.owned.empty()) frame.data = frame.owned;
    enqueue(dst, std::move(frame));
  });
  return Request(std::make_shared<SimRequest>(*this, op), timeout());
}

Request SimNode::do_irecv(std::span<float> data, int src, int tag) {
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
// I/O thread: writing
// ---------------------------------------------------------------------------------------

void SimNode::enqueue(int dst, OutFrame frame) {
  Peer& peer = *peers_[dst];
  if (!peer.socket) {
    frames_queued_.fetch_sub(1, std::memory_order_relaxed);
    if (frame.op)
      mailbox_.complete(frame.op,
                        std::make_exception_ptr(CommError(
                            fmt::format("rank {}: no connection to rank {}", rank_, dst), dst)));
    return;
  }
  peer.outbox.push_back(std::move(frame));
  if (!peer.writing) write_next(dst);
}

void SimNode::write_next(int dst) {
  Peer& peer = *peers_[dst];
  if (peer.outbox.empty()) {
    peer.writing = false;
    return;
  }
  peer.writing = true;
  OutFrame& f = peer.outbox.front();
  std::array<asio::const_buffer, 2> buffers{asio::buffer(f.header),
                                            asio::buffer(f.data.data(), f.data.size_bytes())};
  asio::async_write(*peer.socket, buffers, [this, dst](boost::system::error_code ec, size_t) {
    Peer& p = *peers_[dst];
    if (p.outbox.empty()) return;  // dropped meanwhile
    OutFrame done = std::move(p.outbox.front());
    p.outbox.pop_front();
    frames_queued_.fetch_sub(1, std::memory_order_relaxed);
    if (ec) {
      const std::string why = fmt::format("write to rank {} failed: {}", dst, ec.message());
      if (done.op)
        mailbox_.complete(done.op, std::make_exception_ptr(
                                       CommError(fmt::format("rank {}: {}", rank_, why), dst)));
      drop_peer(dst, why);
      return;
    }
    if (done.op) mailbox_.complete(done.op);
    write_next(dst);
  });
}

// ---------------------------------------------------------------------------------------
// I/O thread: reading
// ---------------------------------------------------------------------------------------

void SimNode::read_header(int src) {
  Peer& peer = *peers_[src];
  asio::async_read(
      *peer.socket, asio::buffer(peer.in_header),
      [this, src](boost::system::error_code ec, size_t) {
        if (ec) {
          drop_peer(src, ec == asio::error::eof ? "rank closed its connection" : ec.message());
          return;
        }
        Peer& p = *peers_[src];
        std::string why;
        auto header = decode_header(p.in_header, &why);
        if (!header || header->kind != FrameKind::data || header->source != src) {
          drop_peer(src, why.empty() ? "frame from the wrong source" : why);
          return;
        }
        p.in_frame = *header;
        read_payload(src);
      });
}

void SimNode::read_payload(int src) {
  Peer& peer = *peers_[src];
  peer.in_payload.resize(peer.in_frame.length / sizeof(float));
  asio::async_read(*peer.socket, asio::buffer(peer.in_payload.data(), peer.in_frame.length),
                   [this, src](boost::system::error_code ec, size_t) {
                     if (ec) {
                       drop_peer(src, "connection lost mid-frame: " + ec.message());
                       return;
                     }
                     Peer& p = *peers_[src];
                     Message m{src, p.in_frame.tag, p.in_frame.seq, std::move(p.in_payload)};
                     p.in_payload = {};
                     arrive(src, std::move(m), p.in_frame.deliver_at_ns);
                     read_header(src);
                   });
}

void SimNode::arrive(int src, Message message, int64_t deliver_at_ns) {
  Peer& peer = *peers_[src];
  // In order per link, as over TCP: never before the previous message from this peer.
  deliver_at_ns = std::max(deliver_at_ns, peer.last_deliver_ns);
  peer.last_deliver_ns = deliver_at_ns;
  if (peer.held.empty() && deliver_at_ns <= now_ns()) {
    mailbox_.deliver(std::move(message));
    return;
  }
  peer.held.push_back({deliver_at_ns, std::move(message)});
  if (peer.held.size() == 1) release_held(src);
}

void SimNode::release_held(int src) {
  Peer& peer = *peers_[src];
  const int64_t now = now_ns();
  while (!peer.held.empty() && peer.held.front().deliver_at_ns <= now) {
    mailbox_.deliver(std::move(peer.held.front().message));
    peer.held.pop_front();
  }
  if (peer.held.empty()) return;
  peer.hold_timer.expires_after(std::chrono::nanoseconds(peer.held.front().deliver_at_ns - now));
  peer.hold_timer.async_wait([this, src](boost::system::error_code ec) {
    if (!ec) release_held(src);
  });
}

// ---------------------------------------------------------------------------------------
// Failure and shutdown
// ---------------------------------------------------------------------------------------

void SimNode::drop_peer(int peer_rank, const std::string& reason) {
  Peer& peer = *peers_[peer_rank];
  if (peer.socket) {
    boost::system::error_code ignored;
    peer.socket->shutdown(tcp::socket::shutdown_both, ignored);
    peer.socket->close(ignored);
  }
  // Frames not yet written fail now; the one being written fails in its handler.
  const size_t keep = peer.writing ? 1 : 0;
  while (peer.outbox.size() > keep) {
    OutFrame f = std::move(peer.outbox.back());
    peer.outbox.pop_back();
    frames_queued_.fetch_sub(1, std::memory_order_relaxed);
    if (f.op)
      mailbox_.complete(
          f.op,
          std::make_exception_ptr(CommError(
              fmt::format("rank {}: lost rank {}: {}", rank_, peer_rank, reason), peer_rank)));
  }
  if (closing_.load()) return;
  // Messages already here are still valid: deliver what was held back by the link model.
  while (!peer.held.empty()) {
    mailbox_.deliver(std::move(peer.held.front().message));
    peer.held.pop_front();
  }
  peer.hold_timer.cancel();
  mailbox_.peer_lost(peer_rank, reason);
}

void SimNode::break_link(int peer, const std::string& reason) {
  asio::post(io_, [this, peer, reason] { drop_peer(peer, reason); });
}

void SimNode::flush(Clock::time_point deadline) {
  while (frames_queued_.load(std::memory_order_acquire) > 0) {
    if (Clock::now() > deadline)
      throw TimeoutError(fmt::format("rank {}: {} messages still unsent at the end of the run",
                                     rank_, frames_queued_.load()),
                         -1);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void SimNode::abort(const std::string& reason) {
  mailbox_.abort(reason);
  asio::post(io_, [this, reason] {
    for (int p = 0; p < world_; ++p)
      if (peers_[p]->socket && peers_[p]->socket->is_open()) drop_peer(p, reason);
  });
}

void SimNode::close() {
  if (closing_.exchange(true)) return;
  if (io_thread_.joinable()) {
    asio::post(io_, [this] {
      for (int p = 0; p < world_; ++p) {
        if (peers_[p]->socket) drop_peer(p, "closed");
        peers_[p]->hold_timer.cancel();
      }
      boost::system::error_code ignored;
      acceptor_->close(ignored);
    });
    work_.reset();
    io_thread_.join();
  }
  boost::system::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
}

}  // namespace dsgd::sim
