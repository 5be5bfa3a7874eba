#include "sim/handshake.h"

#include <algorithm>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "core/fnv1a.h"

#include "sim/crc32c.h"

namespace dsgd::sim {

namespace asio = boost::asio;
using asio::ip::tcp;

// ---------------------------------------------------------------------------------------
// Wire fields
// ---------------------------------------------------------------------------------------

namespace wire {

void put_u16(std::vector<uint8_t>& out, uint16_t v) {
  for (int i = 0; i < 2; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

bool Reader::need(size_t n) {
  if (!ok_ || bytes_.size() - at_ < n) ok_ = false;
  return ok_;
}
uint8_t Reader::u8() {
  return need(1) ? bytes_[at_++] : 0;
}
uint16_t Reader::u16() {
  if (!need(2)) return 0;
  const uint16_t v = uint16_t(bytes_[at_] | bytes_[at_ + 1] << 8);
  at_ += 2;
  return v;
}
uint32_t Reader::u32() {
  const uint32_t lo = u16();
  return lo | uint32_t(u16()) << 16;
}
uint64_t Reader::u64() {
  const uint64_t lo = u32();
  return lo | uint64_t(u32()) << 32;
}
std::string Reader::text(size_t n) {
  if (!need(n)) return {};
  std::string s(reinterpret_cast<const char*>(bytes_.data() + at_), n);
  at_ += n;
  return s;
}

}  // namespace wire

// ---------------------------------------------------------------------------------------
// Hello
// ---------------------------------------------------------------------------------------

std::vector<uint8_t> encode_hello(const Hello& h) {
  const size_t token_bytes = std::min(h.token.size(), kMaxTokenBytes);
  const size_t padded = (token_bytes + 3) / 4 * 4;  // frame lengths are whole float32s
  std::vector<uint8_t> out(kFrameHeaderBytes);      // the header, once the payload's CRC is known
  out.reserve(kFrameHeaderBytes + kHelloFixedBytes + padded);
  wire::put_u32(out, kHelloMagic);
  wire::put_u16(out, h.version);
  wire::put_u16(out, static_cast<uint16_t>(token_bytes));
  wire::put_u32(out, static_cast<uint32_t>(h.world));
  wire::put_u32(out, static_cast<uint32_t>(h.rank));
  wire::put_u64(out, static_cast<uint64_t>(h.epoch_ns));
  wire::put_u64(out, h.run_hash);
  wire::put_u64(out, h.host_id);
  wire::put_u16(out, h.port);
  out.resize(out.size() + 6, 0);  // reserved
  out.insert(out.end(), h.token.begin(), h.token.begin() + static_cast<ptrdiff_t>(token_bytes));
  out.resize(out.size() + padded - token_bytes, 0);
  const std::span<const uint8_t> payload(out.data() + kFrameHeaderBytes,
                                         out.size() - kFrameHeaderBytes);
  const HeaderBytes header = encode_header({.kind = FrameKind::hello,
                                            // A node asking to join has no rank yet.
                                            .source = std::max(h.rank, 0),
                                            .length = payload.size(),
                                            .crc32c = crc32c(payload)});
  std::copy(header.begin(), header.end(), out.begin());
  return out;
}

std::optional<Hello> decode_hello(std::span<const uint8_t> payload, std::string* why) {
  wire::Reader in(payload);
  const uint32_t magic = in.u32();
  if (!in.ok() || magic != kHelloMagic) {
    *why = "not a dsgd hello (bad magic)";
    return std::nullopt;
  }
  Hello h;
  h.version = in.u16();
  // The version comes first so that a peer of another version is named as such.
  if (in.ok() && h.version != kProtocolVersion) {
    *why = fmt::format(
        "wrong protocol version {} (this dsgd speaks {}): run the same dsgd "
        "on every node",
        h.version, kProtocolVersion);
    return std::nullopt;
  }
  const uint16_t token_bytes = in.u16();
  h.world = static_cast<int32_t>(in.u32());
  h.rank = static_cast<int32_t>(in.u32());
  h.epoch_ns = static_cast<int64_t>(in.u64());
  h.run_hash = in.u64();
  h.host_id = in.u64();
  h.port = in.u16();
  in.text(6);
  if (!in.ok() || token_bytes > kMaxTokenBytes || in.left() != (token_bytes + 3u) / 4 * 4) {
    *why =
        fmt::format("malformed hello ({} bytes for a {}-byte token)", payload.size(), token_bytes);
    return std::nullopt;
  }
  h.token = in.text(token_bytes);
  return h;
}

std::string check_hello(const Hello& h, const JobIdentity& job, int world, int self) {
  // Compared without an early exit, so the time taken says nothing about the token.
  bool same = h.token.size() == job.token.size();
  uint8_t diff = 0;
  for (size_t i = 0; i < h.token.size() && same; ++i)
    diff |= uint8_t(h.token[i] ^ job.token[i]);
  if (!same || diff != 0) return "wrong job token";
  if (h.world != world)
    return fmt::format("world size {} but this job has {} ranks", h.world, world);
  if (h.rank < 0 || h.rank >= world)
    return fmt::format("rank {} is not a rank of this job (0..{})", h.rank, world - 1);
  if (h.rank == self) return fmt::format("claims rank {}, this node's own", h.rank);
  if (h.epoch_ns != job.epoch_ns) return "network-clock epoch differs: a node of another run";
  if (h.run_hash != job.run_hash)
    return "different training flags or data (fingerprint differs); give every node the same";
  return "";
}

std::optional<FrameHeader> check_hello_header(const HeaderBytes& bytes, std::string* why) {
  auto header = decode_header(bytes, why);
  if (!header) return std::nullopt;
  if (header->kind != FrameKind::hello) {
    *why = "sent data before a hello";
    return std::nullopt;
  }
  if (header->length > kMaxHelloBytes) {
    *why =
        fmt::format("hello of {} bytes is over the {}-byte limit", header->length, kMaxHelloBytes);
    return std::nullopt;
  }
  return header;
}

std::string random_token() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 4; ++i)
    token += fmt::format("{:08x}", device());
  return token;
}

uint64_t host_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!std::getline(in, id) || id.empty()) return 0;
  Fnv1a h;
  h.raw(id);
  return h.value();
}

std::string remote_name(const tcp::socket& socket) {
  ErrorCode ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return fmt::format("{}:{}", peer.address().to_string(), peer.port());
}

void log_refusal(const std::string& who, const tcp::socket& socket, const std::string& reason,
                 const RefusalSink& log) {
  if (log) return log({.who = who, .from = remote_name(socket), .reason = reason});
  fmt::print(stderr, "dsgd: {} refused a connection from {}: {}\n", who, remote_name(socket),
             reason);
  std::fflush(stderr);
}

// ---------------------------------------------------------------------------------------
// Set-up I/O with deadlines
// ---------------------------------------------------------------------------------------

namespace {

// Starts an operation with a completion handler that records its result, runs the
// io_context until it completes or the deadline passes, and on a timeout cancels it and
// runs the io_context until the cancelled handler has run (it references locals).
template <typename Start, typename Cancel>
ErrorCode run_until(asio::io_context& io, Clock::time_point deadline, Start start, Cancel cancel) {
  std::optional<ErrorCode> result;
  start([&result](ErrorCode ec, auto&&...) { result = ec; });
  io.restart();
  while (!result) {
    if (Clock::now() >= deadline) {
      cancel();
      io.restart();
      while (!result)
        io.run_one();
      return asio::error::timed_out;
    }
    io.run_one_until(deadline);
    if (io.stopped()) io.restart();
  }
  return *result;
}

asio::io_context& context_of(tcp::socket& socket) {
  return static_cast<asio::io_context&>(socket.get_executor().context());
}

}  // namespace

ErrorCode connect_until(tcp::socket& socket, const tcp::endpoint& peer,
                        Clock::time_point deadline) {
  return run_until(
      context_of(socket), deadline, [&](auto handler) { socket.async_connect(peer, handler); },
      [&] {
        ErrorCode ignored;
        socket.close(ignored);
      });
}

ErrorCode write_until(tcp::socket& socket, std::span<const uint8_t> bytes,
                      Clock::time_point deadline) {
  return run_until(
      context_of(socket), deadline,
      [&](auto handler) {
        asio::async_write(socket, asio::buffer(bytes.data(), bytes.size()), handler);
      },
      [&] {
        ErrorCode ignored;
        socket.close(ignored);
      });
}

ErrorCode read_until(tcp::socket& socket, std::span<uint8_t> bytes, Clock::time_point deadline) {
  return run_until(
      context_of(socket), deadline,
      [&](auto handler) {
        asio::async_read(socket, asio::buffer(bytes.data(), bytes.size()), handler);
      },
      [&] {
        ErrorCode ignored;
        socket.close(ignored);
      });
}

namespace {

struct SetupFrame {
  FrameHeader header;
  std::vector<uint8_t> payload;
};

// read_setup_frame without the CRC check.
std::optional<SetupFrame> read_unchecked(tcp::socket& socket, size_t max_bytes,
                                         Clock::time_point deadline, std::string* why,
                                         ErrorCode* io_error) {
  if (io_error) io_error->clear();
  HeaderBytes header_bytes{};
  ErrorCode ec = read_until(socket, header_bytes, deadline);
  auto failed = [&](const ErrorCode& e) {
    if (io_error) *io_error = e;
    *why = e == asio::error::timed_out ? "no hello before the deadline"
           : e == asio::error::eof     ? "closed the connection during the handshake"
                                       : "handshake failed: " + e.message();
    return std::nullopt;
  };
  if (ec) return failed(ec);
  auto header = decode_header(header_bytes, why);
  if (!header) return std::nullopt;
  if (header->kind != FrameKind::hello) {
    *why = "sent data before a hello";
    return std::nullopt;
  }
  // Checked before allocating: the length field is the peer's to choose.
  if (header->length > max_bytes) {
    *why = fmt::format("set-up frame of {} bytes is over the {}-byte limit", header->length,
                       max_bytes);
    return std::nullopt;
  }
  SetupFrame frame{.header = *header, .payload = std::vector<uint8_t>(header->length)};
  ec = read_until(socket, frame.payload, deadline);
  if (ec) return failed(ec);
  return frame;
}

}  // namespace

std::optional<std::vector<uint8_t>> read_setup_frame(tcp::socket& socket, size_t max_bytes,
                                                     Clock::time_point deadline, std::string* why,
                                                     ErrorCode* io_error) {
  auto frame = read_unchecked(socket, max_bytes, deadline, why, io_error);
  if (!frame) return std::nullopt;
  *why = check_payload(frame->header, frame->payload);
  if (!why->empty()) return std::nullopt;
  return std::move(frame->payload);
}

std::optional<Hello> read_hello(tcp::socket& socket, Clock::time_point deadline, std::string* why,
                                ErrorCode* io_error) {
  auto frame = read_unchecked(socket, kMaxHelloBytes, deadline, why, io_error);
  if (!frame) return std::nullopt;
  auto hello = decode_hello(frame->payload, why);
  if (!hello) return std::nullopt;
  *why = check_payload(frame->header, frame->payload);
  if (!why->empty()) return std::nullopt;
  return hello;
}

}  // namespace dsgd::sim
