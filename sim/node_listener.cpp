#include "sim/node_listener.h"

#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/fd_limit.h"
#include "sim/mailbox.h"

namespace dsgd::sim {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
// Connections read up to their hello at once; beyond this the oldest is dropped.
constexpr size_t kMaxHandshakes = 16;
}  // namespace

NodeListener::NodeListener(int rank, int world, const std::string& listen_address, Mailbox& mailbox,
                           RefusalLog& refusals)
    : rank_(rank), world_(world), mailbox_(mailbox), refusals_(refusals), admitted_(world) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(listen_address, ec);
  if (ec)
    throw UsageError(
        fmt::format("listen address '{}': give an IP address, e.g. 0.0.0.0", listen_address));
  acceptor_ = std::make_unique<tcp::acceptor>(io_, tcp::endpoint(address, 0));
}

NodeListener::~NodeListener() {
  close();
  std::lock_guard lock(incoming_mutex_);
  for (const Incoming& in : incoming_)  // handed over, never taken
    ::close(in.fd);
}

uint16_t NodeListener::port() const {
  return acceptor_->local_endpoint().port();
}

void NodeListener::start() {
  accept_next();
  work_.emplace(io_.get_executor());
  io_thread_ = std::thread([this] {
    prctl(PR_SET_TIMERSLACK, 1000UL);  // 1 us instead of Linux's default 50 us
    io_.run();
  });
}

void NodeListener::close() {
  if (io_thread_.joinable()) {
    asio::post(io_, [this] {
      boost::system::error_code ignored;
      acceptor_->close(ignored);
      for (auto& h : handshakes_) {  // their pending reads and timers would keep run() going
        h->timer.cancel();
        h->socket.close(ignored);
      }
      handshakes_.clear();
    });
    work_.reset();
    io_thread_.join();
  }
  boost::system::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
}

// ---------------------------------------------------------------------------------------
// Dialling (the node's thread)
// ---------------------------------------------------------------------------------------

Dialed NodeListener::dial(int peer) {
  if (peer < 0 || peer >= static_cast<int>(peers_.size()))
    return {.why = fmt::format("no address for rank {}", peer)};
  const PeerAddress& to = peers_[peer];
  Dialed d{.where = fmt::format("{}:{}", to.host, to.port)};
  boost::system::error_code ec;
  const tcp::endpoint endpoint(asio::ip::make_address(to.host, ec), to.port);
  if (ec) return {.where = d.where, .why = "not an IP address"};
  d.fd = ::socket(endpoint.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (d.fd < 0) {
    if (errno == EMFILE || errno == ENFILE)
      throw fd_limit_error(fmt::format("rank {}: connecting to rank {}", rank_, peer));
    return {.where = d.where, .why = std::strerror(errno)};
  }
  const int one = 1;
  ::setsockopt(d.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(d.fd, endpoint.data(), endpoint.size()) != 0) {
    if (errno != EINPROGRESS) {
      d.why = std::strerror(errno);
      ::close(d.fd);
      d.fd = -1;
      return d;
    }
    d.connecting = true;
  }
  d.hello = encode_hello({.world = world_,
                          .rank = rank_,
                          .epoch_ns = job_.epoch_ns,
                          .run_hash = job_.run_hash,
                          .token = job_.token});
  return d;
}

void NodeListener::take_incoming(std::vector<Incoming>& out) {
  if (!has_incoming_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(incoming_mutex_);
  out.insert(out.end(), incoming_.begin(), incoming_.end());
  incoming_.clear();
  has_incoming_.store(false, std::memory_order_release);
}

// ---------------------------------------------------------------------------------------
// Accepting (I/O thread)
// ---------------------------------------------------------------------------------------

void NodeListener::accept_next() {
  auto h = std::make_shared<Handshake>(io_);
  acceptor_->async_accept(h->socket, [this, h](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;  // closing
    if (ec == asio::error::no_descriptors || ec.value() == ENFILE) return out_of_descriptors();
    if (!ec) {
      handshakes_.push_back(h);
      // The oldest has had the longest to say hello: it goes, so that silent connections
      // cannot keep a peer that speaks out.
      if (handshakes_.size() > kMaxHandshakes)
        refuse(handshakes_.front(),
               fmt::format("no hello while {} newer connections came", kMaxHandshakes));
      read_hello(h);
    }
    // Other errors (a connection reset before it was accepted) are that connection's.
    accept_next();
  });
}

// Accepting again would fail at once, again and again: the node gives up, naming the limit.
void NodeListener::out_of_descriptors() {
  mailbox_.abort(
      fd_limit_error(fmt::format("rank {}: accepting a peer's connection", rank_)).what());
}

void NodeListener::read_hello(const HandshakePtr& h) {
  h->timer.expires_after(kHelloTimeout);
  h->timer.async_wait([this, h](boost::system::error_code ec) {
    if (!ec) refuse(h, fmt::format("no hello within {} s", kHelloTimeout.count()));
  });
  asio::async_read(
      h->socket, asio::buffer(h->header), [this, h](boost::system::error_code ec, size_t) {
        if (ec == asio::error::operation_aborted) return;  // refused meanwhile
        if (ec)
          return refuse(h, ec == asio::error::eof ? "closed the connection during the handshake"
                                                  : ec.message());
        std::string why;
        const auto header = check_hello_header(h->header, &why);
        if (!header) return refuse(h, why);
        h->frame = *header;
        h->payload.resize(header->length);
        read_hello_payload(h);
      });
}

void NodeListener::read_hello_payload(const HandshakePtr& h) {
  asio::async_read(h->socket, asio::buffer(h->payload),
                   [this, h](boost::system::error_code ec, size_t) {
                     if (ec == asio::error::operation_aborted) return;
                     if (ec) return refuse(h, "connection lost: " + ec.message());
                     std::string why;
                     const auto hello = decode_hello(h->payload, &why);
                     if (hello) why = check_payload(h->frame, h->payload);
                     if (why.empty()) why = check_hello(*hello, job_, world_, rank_);
                     if (why.empty() && admitted_[hello->rank])
                       why = fmt::format("rank {} is connected already", hello->rank);
                     if (!why.empty()) return refuse(h, why);
                     admit(h, *hello);
                   });
}

// Hands the connection to the node, which reads it from its next wait on.
void NodeListener::admit(const HandshakePtr& h, const Hello& hello) {
  admitted_[hello.rank] = true;
  h->timer.cancel();
  handshakes_.remove(h);
  boost::system::error_code ec;
  h->socket.set_option(tcp::no_delay(true), ec);
  const int fd = h->socket.release(ec);
  if (ec) return;
  {
    std::lock_guard lock(incoming_mutex_);
    incoming_.push_back({.peer = hello.rank, .fd = fd});
    has_incoming_.store(true, std::memory_order_release);
  }
  mailbox_.wake();
}

void NodeListener::refuse(const HandshakePtr& h, const std::string& why) {
  if (!h->socket.is_open()) return;  // refused already (its timer and its read both fired)
  log_refusal(fmt::format("rank {}", rank_), h->socket, why);
  refusals_.add(fmt::format("{}: {}", remote_name(h->socket), why));
  boost::system::error_code ignored;
  h->timer.cancel();
  h->socket.close(ignored);
  handshakes_.remove(h);
}

}  // namespace dsgd::sim
