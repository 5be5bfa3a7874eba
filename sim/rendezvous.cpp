// Sections: messages | server (rank 0) | client (ranks 1..N-1)
// Protocol, on one TCP connection from rank r to rank 0 (every message a FrameKind::hello
// set-up frame, told apart by its payload magic):
//   r -> 0  hello (epoch 0, port 0)           0 -> r  rank 0's hello, with the epoch
//   r -> 0  hello (epoch, listening port)     0 -> r  table "DSGT" or abort "DSGA"
// Rank 0 answers nothing to a refused connection: it logs why and closes it.
// Elastic runs keep the connection, and after each round:
//   r -> 0  report "DSGR"                     0 -> r  end "DSGE", abort "DSGA" or next "DSGN"
// and after a next round's start, the second hello (new rank, new port) and its table. A node
// joining an elastic run under way sends its first hello with rank kJoinRank, is welcomed,
// and waits for a next round "DSGN" (or end, or abort) without a report.
#include "sim/rendezvous.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <bit>
#include <charconv>
#include <cmath>
#include <list>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "sim/crc32c.h"

namespace dsgd::sim {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// ---------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------

constexpr uint32_t kTableMagic = 0x54475344;   // "DSGT"
constexpr uint32_t kAbortMagic = 0x41475344;   // "DSGA"
constexpr uint32_t kReportMagic = 0x52475344;  // "DSGR"
constexpr uint32_t kEndMagic = 0x45475344;     // "DSGE"
constexpr uint32_t kNextMagic = 0x4e475344;    // "DSGN"
constexpr size_t kMaxHostBytes = 64;
constexpr size_t kMaxReasonBytes = 1024;

// Header + payload, zero-padded to a multiple of 4 bytes (frame lengths are whole floats).
std::vector<uint8_t> setup_frame(const std::vector<uint8_t>& payload) {
  const size_t padded = (payload.size() + 3) / 4 * 4;
  std::vector<uint8_t> out(kFrameHeaderBytes + padded, 0);
  std::copy(payload.begin(), payload.end(), out.begin() + kFrameHeaderBytes);
  const HeaderBytes header =
      encode_header({.kind = FrameKind::hello,
                     .source = 0,
                     .length = padded,
                     .crc32c = crc32c(std::span(out).subspan(kFrameHeaderBytes))});
  std::copy(header.begin(), header.end(), out.begin());
  return out;
}

// A set-up payload's start: its magic and the protocol version.
std::vector<uint8_t> payload_of(uint32_t magic) {
  std::vector<uint8_t> p;
  wire::put_u32(p, magic);
  wire::put_u16(p, kProtocolVersion);
  return p;
}

// A reason: its length (u16) and bytes, cut at kMaxReasonBytes.
void put_reason(std::vector<uint8_t>& p, const std::string& reason) {
  const size_t n = std::min(reason.size(), kMaxReasonBytes);
  wire::put_u16(p, static_cast<uint16_t>(n));
  p.insert(p.end(), reason.begin(), reason.begin() + static_cast<ptrdiff_t>(n));
}

// Table: magic u32 "DSGT" | version u16 | flags u16 (bit 0: one host) | world u32 |
//        epoch_ns i64 | per rank: port u16, host bytes u8, host
std::vector<uint8_t> encode_table(const RendezvousTable& t) {
  std::vector<uint8_t> p = payload_of(kTableMagic);
  wire::put_u16(p, t.one_host ? 1 : 0);
  wire::put_u32(p, static_cast<uint32_t>(t.peers.size()));
  wire::put_u64(p, static_cast<uint64_t>(t.epoch_ns));
  for (const PeerAddress& a : t.peers) {
    wire::put_u16(p, a.port);
    const size_t n = std::min(a.host.size(), kMaxHostBytes);
    p.push_back(static_cast<uint8_t>(n));
    p.insert(p.end(), a.host.begin(), a.host.begin() + static_cast<ptrdiff_t>(n));
  }
  return setup_frame(p);
}

// Abort: magic u32 "DSGA" | version u16 | reason bytes u16 | missing rank i32 | reason
std::vector<uint8_t> encode_abort(int missing, const std::string& reason) {
  std::vector<uint8_t> p = payload_of(kAbortMagic);
  const size_t n = std::min(reason.size(), kMaxReasonBytes);
  wire::put_u16(p, static_cast<uint16_t>(n));
  wire::put_u32(p, static_cast<uint32_t>(missing));
  p.insert(p.end(), reason.begin(), reason.begin() + static_cast<ptrdiff_t>(n));
  return setup_frame(p);
}

// The rest of an abort after its magic and version: the rank it names and the reason
// (check in.ok() after).
std::pair<int, std::string> decode_abort(wire::Reader& in) {
  const uint16_t n = in.u16();
  const int rank = static_cast<int32_t>(in.u32());
  return {rank, in.text(n)};
}

// Report: magic u32 "DSGR" | version u16 | finished u16 | reached_step i64 | model_s f64 |
//         failure_peer i32 | failure bytes u16 | failure
std::vector<uint8_t> encode_report(const RoundReport& r) {
  std::vector<uint8_t> p = payload_of(kReportMagic);
  wire::put_u16(p, r.finished ? 1 : 0);
  wire::put_u64(p, static_cast<uint64_t>(r.reached_step));
  wire::put_u64(p, std::bit_cast<uint64_t>(r.model_s));
  wire::put_u32(p, static_cast<uint32_t>(r.failure_peer));
  put_reason(p, r.failure);
  return setup_frame(p);
}

std::optional<RoundReport> decode_report(std::span<const uint8_t> payload) {
  wire::Reader in(payload);
  RoundReport r;
  if (in.u32() != kReportMagic || in.u16() != kProtocolVersion) return std::nullopt;
  r.finished = (in.u16() & 1) != 0;
  r.reached_step = static_cast<int64_t>(in.u64());
  r.model_s = std::bit_cast<double>(in.u64());
  r.failure_peer = static_cast<int32_t>(in.u32());
  r.failure = in.text(in.u16());
  if (!in.ok() || r.reached_step < 0 || !std::isfinite(r.model_s)) return std::nullopt;
  return r;
}

// End: magic u32 "DSGE" | version u16
std::vector<uint8_t> encode_end() {
  return setup_frame(payload_of(kEndMagic));
}

// Next: magic u32 "DSGN" | version u16 | shares_state u16 | round u32 | rank u32 |
//       model_start_s f64 | world u32 | per rank: node u32
std::vector<uint8_t> encode_next(const RoundStart& start) {
  std::vector<uint8_t> p = payload_of(kNextMagic);
  wire::put_u16(p, start.shares_state ? 1 : 0);
  wire::put_u32(p, static_cast<uint32_t>(start.round));
  wire::put_u32(p, static_cast<uint32_t>(start.rank));
  wire::put_u64(p, std::bit_cast<uint64_t>(start.model_start_s));
  wire::put_u32(p, static_cast<uint32_t>(start.nodes.size()));
  for (int node : start.nodes)
    wire::put_u32(p, static_cast<uint32_t>(node));
  return setup_frame(p);
}

// The rest of a "DSGN" after its magic and version.
std::optional<RoundStart> decode_next(wire::Reader& in) {
  RoundStart start;
  start.shares_state = (in.u16() & 1) != 0;
  start.round = static_cast<int>(in.u32());
  start.rank = static_cast<int>(in.u32());
  start.model_start_s = std::bit_cast<double>(in.u64());
  const uint32_t world = in.u32();
  if (!in.ok() || world < 1 || world > kMaxRendezvousReplyBytes / 4) return std::nullopt;
  for (uint32_t i = 0; i < world; ++i)
    start.nodes.push_back(static_cast<int>(in.u32()));
  if (!in.ok() || start.rank < 0 || start.rank >= start.world() ||
      !std::isfinite(start.model_start_s))
    return std::nullopt;
  return start;
}

// Seconds for messages, to 3 digits: the deadline as the user gave it, not its rounding.
std::string seconds(Clock::duration d) {
  return fmt::format("{:.3g}", std::chrono::duration<double>(d).count());
}

std::string endpoint_name(const tcp::endpoint& e) {
  return fmt::format("{}:{}", e.address().to_string(), e.port());
}

}  // namespace

tcp::endpoint parse_endpoint(const std::string& text, const char* flag) {
  const auto colon = text.rfind(':');
  auto bad = [&](const std::string& what) {
    return UsageError(
        fmt::format("{} '{}': {}; give HOST:PORT, e.g. 127.0.0.1:29500", flag, text, what));
  };
  if (colon == std::string::npos) throw bad("no port");
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port < 1 || port > 65535)
    throw bad("the port must be a number from 1 to 65535");
  if (host == "localhost") host = "127.0.0.1";
  ErrorCode address_error;
  const auto address = asio::ip::make_address_v4(host, address_error);
  if (address_error) throw bad("the host must be an IPv4 address (names are not looked up)");
  return tcp::endpoint(address, static_cast<uint16_t>(port));
}

// ---------------------------------------------------------------------------------------
// Server (rank 0): one io_context, run by the calling thread inside serve()
// ---------------------------------------------------------------------------------------

struct RendezvousServer::Impl {
  struct Conn {
    explicit Conn(asio::io_context& io) : socket(io), timer(io) {}
    tcp::socket socket;
    asio::steady_timer timer;  // the hello deadline
    HeaderBytes header{};
    FrameHeader frame;  // the decoded header of the hello being read
    std::vector<uint8_t> payload, out;
    int rank = -1;
    int stage = 0;  // 0: awaiting the hello, 1: welcomed, awaiting the port, 2: registered
    bool closed = false;
    PeerAddress address;
    uint64_t host_id = 0;
  };
  using ConnPtr = std::shared_ptr<Conn>;

  Impl(const tcp::endpoint& bind, int world_size, std::string job_token, uint64_t hash,
       RefusalSink log)
      : world(world_size), token(std::move(job_token)), run_hash(hash), refusals(std::move(log)) {
    const ErrorCode ec = listen(bind);
    if (ec)
      throw UsageError(
          fmt::format("--rendezvous {}: rank 0 cannot listen there: {}; pick "
                      "another port",
                      endpoint_name(bind), ec.message()));
    bound = acceptor.local_endpoint();
    name = endpoint_name(bound);
  }

  ErrorCode listen(const tcp::endpoint& bind) {
    ErrorCode ec;
    acceptor.open(bind.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(bind, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    return ec;
  }

  void accept() {
    auto conn = std::make_shared<Conn>(io);
    acceptor.async_accept(conn->socket, [this, conn](ErrorCode ec) {
      if (finishing || ec == asio::error::operation_aborted) return;
      if (!ec) {
        conns.push_back(conn);
        arm(conn);
        read_hello(conn);
      }
      accept();
    });
  }

  void arm(const ConnPtr& conn) {
    conn->timer.expires_after(kHelloTimeout);
    conn->timer.async_wait([this, conn](ErrorCode ec) {
      if (!ec && !finishing && !conn->closed)
        refuse(conn, fmt::format("no hello within {} s", kHelloTimeout.count()));
    });
  }

  void refuse(const ConnPtr& conn, const std::string& why) {
    if (conn->closed) return;
    conn->closed = true;
    log_refusal("rank 0 (rendezvous)", conn->socket, why, refusals);
    ErrorCode ignored;
    conn->timer.cancel();
    conn->socket.close(ignored);
    conns.remove(conn);
  }

  void read_hello(const ConnPtr& conn) {
    asio::async_read(conn->socket, asio::buffer(conn->header), [this, conn](ErrorCode ec, size_t) {
      if (finishing || conn->closed) return;
      if (ec)
        return refuse(conn, ec == asio::error::eof ? "closed the connection during the handshake"
                                                   : ec.message());
      std::string why;
      const auto header = check_hello_header(conn->header, &why);
      if (!header) return refuse(conn, why);
      conn->frame = *header;
      conn->payload.resize(header->length);
      asio::async_read(conn->socket, asio::buffer(conn->payload),
                       [this, conn](ErrorCode ec2, size_t) {
                         if (finishing || conn->closed) return;
                         if (ec2) return refuse(conn, "connection lost: " + ec2.message());
                         std::string why2;
                         const auto hello = decode_hello(conn->payload, &why2);
                         if (!hello) return refuse(conn, why2);
                         // After the version: another version's hello is named as such.
                         why2 = check_payload(conn->frame, conn->payload);
                         if (!why2.empty()) return refuse(conn, why2);
                         on_hello(conn, *hello);
                       });
    });
  }

  bool rank_taken(int rank) const {
    return std::any_of(conns.begin(), conns.end(),
                       [&](const ConnPtr& c) { return c->stage > 0 && c->rank == rank; });
  }

  void on_hello(const ConnPtr& conn, const Hello& h) {
    if (conn->stage == 0 && h.rank == kJoinRank) return on_join(conn, h);
    if (conn->stage == 0) {
      std::string why = check_hello(h, {.token = token, .run_hash = run_hash}, world, 0);
      if (why.empty() && rank_taken(h.rank))
        why = fmt::format("rank {} has registered already", h.rank);
      if (!why.empty()) return refuse(conn, why);
      conn->rank = h.rank;
      conn->stage = 1;
      conn->out = welcome();
      asio::async_write(conn->socket, asio::buffer(conn->out), [this, conn](ErrorCode ec, size_t) {
        if (finishing || conn->closed) return;
        if (ec) return refuse(conn, "connection lost: " + ec.message());
        arm(conn);
        read_hello(conn);
      });
      return;
    }
    std::string why =
        check_hello(h, {.token = token, .epoch_ns = epoch_ns, .run_hash = run_hash}, world, 0);
    if (why.empty() && h.rank != conn->rank)
      why = fmt::format("registered as rank {}, then claimed rank {}", conn->rank, h.rank);
    if (why.empty() && h.port == 0) why = "no listening port";
    if (!why.empty()) return refuse(conn, why);
    ErrorCode ec;
    const tcp::endpoint remote = conn->socket.remote_endpoint(ec);
    if (ec) return refuse(conn, "connection lost: " + ec.message());
    conn->timer.cancel();
    conn->stage = 2;
    conn->address = {remote.address().to_string(), h.port};
    conn->host_id = h.host_id;
    ++registered;
  }

  // Rank 0's hello to a node it lets in: the run's epoch, and its machine.
  std::vector<uint8_t> welcome() const {
    return encode_hello({.world = world,
                         .rank = 0,
                         .epoch_ns = epoch_ns,
                         .run_hash = run_hash,
                         .host_id = own_host,
                         .token = token});
  }

  // A node asking to join (an elastic run, once every rank is in): welcomed with the epoch,
  // then it waits for the round it joins (next_round).
  void on_join(const ConnPtr& conn, const Hello& h) {
    Hello as_rank = h;
    as_rank.rank = 0;  // its rank comes later; the rest must match the job
    std::string why = check_hello(as_rank, {.token = token, .run_hash = run_hash}, world, -1);
    if (why.empty() && !joinable)
      why = "asks to join, but no elastic run is under way here (give it --rank)";
    if (!why.empty()) return refuse(conn, why);
    ErrorCode ec;
    const tcp::endpoint remote = conn->socket.remote_endpoint(ec);
    if (ec) return refuse(conn, "connection lost: " + ec.message());
    conn->stage = 3;
    conn->address = {remote.address().to_string(), 0};
    conn->host_id = h.host_id;
    conn->out = welcome();
    asio::async_write(conn->socket, asio::buffer(conn->out), [this, conn](ErrorCode ec2, size_t) {
      if (finishing || conn->closed) return;
      if (ec2) return refuse(conn, "connection lost: " + ec2.message());
      conn->timer.cancel();
      joiners.push_back(conn);
    });
  }

  // Ends every asynchronous operation; only registered and welcomed connections remain.
  void quiesce() {
    finishing = true;
    ErrorCode ignored;
    acceptor.close(ignored);
    for (const ConnPtr& c : conns) {
      c->timer.cancel();
      c->socket.cancel(ignored);
      if (c->stage == 0) c->socket.close(ignored);
    }
    io.restart();
    io.run();  // the cancelled handlers run and return at once
    conns.remove_if([](const ConnPtr& c) { return c->stage == 0; });
  }

  asio::io_context io;
  tcp::acceptor acceptor{io};
  const int world;
  const std::string token;
  const uint64_t run_hash;
  const RefusalSink refusals;
  tcp::endpoint bound;  // where the acceptor listens
  const Clock::time_point created = Clock::now();
  const int64_t epoch_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(created.time_since_epoch()).count();
  const uint64_t own_host = host_id();
  std::string name;
  std::list<ConnPtr> conns;
  std::vector<ConnPtr> members;  // after serve(): by rank, index 0 empty (elastic rounds)
  std::vector<ConnPtr> joiners;  // welcomed, waiting for the next round
  bool joinable = false;         // an elastic run under way: nodes may ask to join
  int registered = 0;
  bool finishing = false;
};

RendezvousServer::RendezvousServer(const tcp::endpoint& bind, int world, std::string token,
                                   uint64_t run_hash, RefusalSink refusals)
    : impl_(std::make_unique<Impl>(bind, world, std::move(token), run_hash, std::move(refusals))) {}
RendezvousServer::~RendezvousServer() = default;
int64_t RendezvousServer::epoch_ns() const {
  return impl_->epoch_ns;
}
uint16_t RendezvousServer::port() const {
  return impl_->acceptor.local_endpoint().port();
}

RendezvousTable RendezvousServer::serve(const PeerAddress& self, Clock::time_point deadline,
                                        Clock::time_point since) {
  Impl& s = *impl_;
  s.accept();
  s.io.restart();
  while (s.registered < s.world - 1 && Clock::now() < deadline)
    s.io.run_one_until(deadline);
  s.quiesce();
  const Clock::time_point write_deadline = Clock::now() + kHelloTimeout;
  if (s.registered == s.world - 1) {
    RendezvousTable table{.epoch_ns = s.epoch_ns, .one_host = s.own_host != 0};
    table.peers.resize(s.world);
    table.peers[0] = self;
    s.members.assign(static_cast<size_t>(s.world), nullptr);
    for (const auto& c : s.conns) {  // all registered: ranks 1..world-1, once each
      table.peers[c->rank] = c->address;
      table.one_host = table.one_host && c->host_id == s.own_host;
      s.members[static_cast<size_t>(c->rank)] = c;
    }
    const std::vector<uint8_t> bytes = encode_table(table);
    // A rank that died meanwhile is found missing by the others when they connect.
    for (const auto& c : s.conns)
      write_until(c->socket, bytes, write_deadline);
    return table;
  }
  std::vector<int> missing;
  for (int r = 1; r < s.world; ++r)
    if (!std::any_of(s.conns.begin(), s.conns.end(),
                     [&](const auto& c) { return c->stage == 2 && c->rank == r; }))
      missing.push_back(r);
  const std::string reason = fmt::format(
      "rank{} {} did not join the rendezvous at {} within {} s; start every rank "
      "with the same --rendezvous, --world and --token",
      missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), s.name, seconds(deadline - since));
  const std::vector<uint8_t> bytes = encode_abort(missing.front(), reason);
  for (const auto& c : s.conns)
    write_until(c->socket, bytes, write_deadline);
  throw TimeoutError("rank 0: " + reason, missing.front());
}

// ---------------------------------------------------------------------------------------
// Server: the rounds of an elastic run, blocking calls on the same io_context
// ---------------------------------------------------------------------------------------

namespace {

// A report is small: its failure text is cut at kMaxReasonBytes.
constexpr size_t kMaxReportBytes = 64 + kMaxReasonBytes;

void close_connection(tcp::socket& socket) {
  ErrorCode ignored;
  socket.close(ignored);
}

}  // namespace

std::vector<std::optional<RoundReport>> RendezvousServer::collect_reports(
    Clock::time_point deadline) {
  using namespace std::chrono_literals;
  Impl& s = *impl_;
  std::vector<std::optional<RoundReport>> reports(s.members.size());
  for (size_t rank = 1; rank < s.members.size(); ++rank) {
    const auto& conn = s.members[rank];
    if (!conn) continue;
    std::string why;
    // A report already here is read even once the deadline has passed.
    const auto frame = read_setup_frame(conn->socket, kMaxReportBytes,
                                        std::max(deadline, Clock::now() + 10ms), &why);
    if (frame) reports[rank] = decode_report(*frame);
    if (!reports[rank]) close_connection(conn->socket), s.members[rank] = nullptr;
  }
  return reports;
}

void RendezvousServer::end_rounds(const std::string& reason, int peer, Clock::time_point deadline) {
  Impl& s = *impl_;
  const std::vector<uint8_t> bytes = reason.empty() ? encode_end() : encode_abort(peer, reason);
  s.members.insert(s.members.end(), s.joiners.begin(), s.joiners.end());
  for (const auto& conn : s.members)
    if (conn) write_until(conn->socket, bytes, deadline), close_connection(conn->socket);
  s.members.clear(), s.joiners.clear();
}

void RendezvousServer::admit_joiners() {
  Impl& s = *impl_;
  if (s.listen(s.bound))  // the port was taken meanwhile: no node can join
    return;
  s.finishing = false;
  s.joinable = true;
  s.accept();
}

size_t RendezvousServer::poll_joiners() {
  Impl& s = *impl_;
  s.io.restart();
  s.io.poll();
  return s.joiners.size();
}

RendezvousTable RendezvousServer::next_round(const std::vector<int>& survivors, RoundStart start,
                                             const PeerAddress& self, Clock::time_point deadline) {
  Impl& s = *impl_;
  std::vector<Impl::ConnPtr> next(survivors.size());
  for (size_t i = 1; i < survivors.size(); ++i)
    next[i] = s.members.at(static_cast<size_t>(survivors[i]));
  // The nodes that asked to join, as many as `start` names after the survivors.
  const size_t joining = static_cast<size_t>(start.world()) - survivors.size();
  next.insert(next.end(), s.joiners.begin(), s.joiners.begin() + static_cast<ptrdiff_t>(joining));
  s.joiners.erase(s.joiners.begin(), s.joiners.begin() + static_cast<ptrdiff_t>(joining));
  for (size_t i = 1; i < next.size(); ++i) {
    start.rank = static_cast<int>(i);
    write_until(next[i]->socket, encode_next(start), deadline);
  }
  s.members = next;
  const int world = start.world();
  RendezvousTable table{.epoch_ns = s.epoch_ns, .one_host = s.own_host != 0};
  table.peers.resize(static_cast<size_t>(world));
  table.peers[0] = self;
  for (int rank = 1; rank < world; ++rank) {
    const auto& conn = s.members[static_cast<size_t>(rank)];
    std::string why;
    const std::optional<Hello> h = read_hello(conn->socket, deadline, &why);
    if (h)
      why = check_hello(*h, {.token = s.token, .epoch_ns = s.epoch_ns, .run_hash = s.run_hash},
                        world, 0);
    if (h && why.empty() && (h->rank != rank || h->port == 0))
      why = fmt::format("claimed rank {} with port {}", h->rank, h->port);
    if (!why.empty()) {
      const std::string reason =
          fmt::format("rank {} (node {}) did not take its place in round {}: {}", rank,
                      start.nodes[static_cast<size_t>(rank)], start.round, why);
      close_connection(conn->socket), s.members[static_cast<size_t>(rank)] = nullptr;
      end_rounds(reason, rank, Clock::now() + kHelloTimeout);
      throw CommError("rank 0: " + reason, rank);
    }
    table.peers[static_cast<size_t>(rank)] = {conn->address.host, h->port};
    table.one_host = table.one_host && h->host_id == s.own_host;
  }
  const std::vector<uint8_t> bytes = encode_table(table);
  for (int rank = 1; rank < world; ++rank)
    write_until(s.members[static_cast<size_t>(rank)]->socket, bytes, deadline);
  return table;
}

// ---------------------------------------------------------------------------------------
// Client (ranks 1..N-1): blocking calls with deadlines on its own io_context
// ---------------------------------------------------------------------------------------

struct RendezvousClient::Impl {
  asio::io_context io;
  tcp::socket socket{io};
  tcp::endpoint server;
  int rank = 0, world = 0;
  std::string token;
  uint64_t run_hash = 0;
  int64_t epoch_ns = 0;
  Clock::time_point started = Clock::now();

  std::string where() const { return "rank 0 at " + endpoint_name(server); }
  // This node, for messages: "rank 2", or "the joining node" before it has a rank.
  std::string who() const {
    return rank == kJoinRank ? "the joining node" : fmt::format("rank {}", rank);
  }
  // Rank 0's answer after a round (or, to a joining node, once it may join).
  std::optional<RoundStart> read_answer(Clock::time_point deadline, Clock::time_point asked);
};

RendezvousClient::RendezvousClient(const tcp::endpoint& server, int rank, int world,
                                   std::string token, uint64_t run_hash)
    : impl_(std::make_unique<Impl>()) {
  impl_->run_hash = run_hash;
  impl_->server = server;
  impl_->rank = rank;
  impl_->world = world;
  impl_->token = std::move(token);
}
RendezvousClient::~RendezvousClient() = default;

Hello RendezvousClient::join(Clock::time_point deadline) {
  using namespace std::chrono_literals;
  Impl& c = *impl_;
  // Rank 0 may start after this rank: retry a refused connection until the deadline.
  while (true) {
    const ErrorCode ec = connect_until(c.socket, c.server, std::min(deadline, Clock::now() + 1s));
    if (!ec) break;
    ErrorCode ignored;
    c.socket.close(ignored);
    if (Clock::now() + 100ms >= deadline)
      throw TimeoutError(
          fmt::format("{}: could not reach the rendezvous ({}) within {} s ({}); is rank "
                      "0 running, with this --rendezvous?",
                      c.who(), c.where(), seconds(deadline - c.started), ec.message()),
          0);
    std::this_thread::sleep_for(100ms);
  }
  const Hello hello{.world = c.world,
                    .rank = c.rank,
                    .run_hash = c.run_hash,
                    .host_id = host_id(),
                    .token = c.token};
  std::string why;
  ErrorCode ec = write_until(c.socket, encode_hello(hello), deadline);
  std::optional<Hello> welcome;
  if (!ec) welcome = read_hello(c.socket, deadline, &why, &ec);
  if (!welcome) {
    if (ec == asio::error::timed_out)
      throw TimeoutError(fmt::format("{}: {} did not answer within {} s", c.who(), c.where(),
                                     seconds(deadline - c.started)),
                         0);
    if (ec)  // rank 0 closes a connection it refuses, without a word to a stranger
      throw CommError(
          fmt::format("{}: {} refused this node ({}); check --token, --world, "
                      "--rank and the train flags against rank 0's, and that every "
                      "node runs the same dsgd (rank 0's log says which)",
                      c.who(), c.where(),
                      ec == asio::error::eof ? "it closed the connection" : ec.message()),
          0);
    throw CommError(fmt::format("{}: {} is not a dsgd rendezvous: {}", c.who(), c.where(), why), 0);
  }
  why = check_hello(*welcome,
                    {.token = c.token, .epoch_ns = welcome->epoch_ns, .run_hash = c.run_hash},
                    c.world, c.rank);
  if (why.empty() && welcome->rank != 0) why = fmt::format("it says it is rank {}", welcome->rank);
  if (!why.empty())
    throw CommError(fmt::format("{}: {} is not this job's rank 0: {}", c.who(), c.where(), why), 0);
  c.epoch_ns = welcome->epoch_ns;
  return *welcome;
}

RendezvousTable RendezvousClient::finish(uint16_t port, Clock::time_point deadline) {
  Impl& c = *impl_;
  const Hello hello{.world = c.world,
                    .rank = c.rank,
                    .epoch_ns = c.epoch_ns,
                    .run_hash = c.run_hash,
                    .host_id = host_id(),
                    .port = port,
                    .token = c.token};
  std::string why;
  ErrorCode ec = write_until(c.socket, encode_hello(hello), deadline);
  std::optional<std::vector<uint8_t>> reply;
  if (!ec) reply = read_setup_frame(c.socket, kMaxRendezvousReplyBytes, deadline, &why, &ec);
  if (!reply) {
    if (ec == asio::error::timed_out)
      throw TimeoutError(fmt::format("rank {}: no table of ranks from {} within {} s; are all "
                                     "{} ranks started?",
                                     c.rank, c.where(), seconds(deadline - c.started), c.world),
                         0);
    throw CommError(fmt::format("rank {}: {} ended the rendezvous without a table ({}); see "
                                "rank 0's error",
                                c.rank, c.where(), ec ? ec.message() : why),
                    0);
  }
  wire::Reader in(*reply);
  const uint32_t magic = in.u32();
  const uint16_t version = in.u16();
  auto malformed = [&] {
    return CommError(fmt::format("rank {}: malformed rendezvous reply from {}", c.rank, c.where()),
                     0);
  };
  if (!in.ok() || version != kProtocolVersion) throw malformed();
  if (magic == kAbortMagic) {
    const auto [missing, reason] = decode_abort(in);
    if (!in.ok()) throw malformed();
    throw TimeoutError(fmt::format("rank {}: {} (rank 0 gave up)", c.rank, reason), missing);
  }
  if (magic != kTableMagic) throw malformed();
  RendezvousTable table;
  table.one_host = (in.u16() & 1) != 0;
  const uint32_t world = in.u32();
  table.epoch_ns = static_cast<int64_t>(in.u64());
  if (!in.ok() || world != static_cast<uint32_t>(c.world) || table.epoch_ns != c.epoch_ns)
    throw malformed();
  for (uint32_t r = 0; r < world; ++r) {
    PeerAddress a;
    a.port = in.u16();
    a.host = in.text(in.u8());
    ErrorCode bad;
    asio::ip::make_address(a.host, bad);
    if (!in.ok() || bad || (a.port == 0 && static_cast<int>(r) != c.rank)) throw malformed();
    table.peers.push_back(std::move(a));
  }
  return table;
}

std::optional<RoundStart> RendezvousClient::report(const RoundReport& report,
                                                   Clock::time_point deadline) {
  Impl& c = *impl_;
  const Clock::time_point asked = Clock::now();
  const ErrorCode ec = write_until(c.socket, encode_report(report), deadline);
  if (ec)
    throw CommError(fmt::format("{}: {} is gone ({}), and with it the rendezvous the survivors "
                                "would meet at: an elastic run of dsgd node processes goes on "
                                "only while rank 0's process lives",
                                c.who(), c.where(), ec.message()),
                    0);
  return c.read_answer(deadline, asked);
}

RoundStart RendezvousClient::await_round(Clock::time_point deadline) {
  Impl& c = *impl_;
  std::optional<RoundStart> start = c.read_answer(deadline, Clock::now());
  if (!start)
    throw CommError(
        fmt::format("{}: the run at {} ended before this node could take part", c.who(), c.where()),
        0);
  return *start;
}

std::optional<RoundStart> RendezvousClient::Impl::read_answer(Clock::time_point deadline,
                                                              Clock::time_point asked) {
  std::string why;
  ErrorCode ec;
  const std::optional<std::vector<uint8_t>> reply =
      read_setup_frame(socket, kMaxRendezvousReplyBytes, deadline, &why, &ec);
  if (!reply) {
    if (ec == asio::error::timed_out)
      throw TimeoutError(fmt::format("{}: {} said nothing about the next round within {} s", who(),
                                     where(), seconds(deadline - asked)),
                         0);
    throw CommError(fmt::format("{}: {} is gone ({}), and with it the rendezvous the "
                                "survivors would meet at: an elastic run of dsgd node processes "
                                "goes on only while rank 0's process lives",
                                who(), where(), ec ? ec.message() : why),
                    0);
  }
  wire::Reader in(*reply);
  const uint32_t magic = in.u32();
  const uint16_t version = in.u16();
  auto malformed = [&] {
    return CommError(fmt::format("{}: malformed round message from {}", who(), where()), 0);
  };
  if (!in.ok() || version != kProtocolVersion) throw malformed();
  if (magic == kEndMagic) return std::nullopt;
  if (magic == kAbortMagic) {
    const auto [peer, reason] = decode_abort(in);
    if (!in.ok()) throw malformed();
    // The reason is rank 0's own error, which names it already.
    throw CommError(fmt::format("rank 0 ended the run for every rank: {}",
                                reason.starts_with("rank 0: ") ? reason.substr(8) : reason),
                    peer);
  }
  std::optional<RoundStart> start;
  if (magic == kNextMagic) start = decode_next(in);
  if (!start) throw malformed();
  rank = start->rank;
  world = start->world();
  return start;
}

}  // namespace dsgd::sim
