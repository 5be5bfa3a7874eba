// The handshake of the simulated transport between processes: the hello frame that opens
// every connection of dsgd node and its rendezvous (magic, protocol version, job token,
// world size, rank, network-clock epoch), its checks, and the deadline-bounded blocking
// I/O of the rendezvous.
// A hello's length is checked against kMaxHelloBytes before its payload is read, so a
// foreign peer cannot make the acceptor allocate more than that. Not the data path: later frames
// are frame.h's.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "sim/frame.h"

namespace dsgd::sim {

inline constexpr uint32_t kHelloMagic = 0x48475344;  // "DSGH" read as little-endian bytes
// 2: frame headers carry the payload's CRC32C (frame.h).
inline constexpr uint16_t kProtocolVersion = 2;
inline constexpr size_t kMaxTokenBytes = 256;
inline constexpr size_t kHelloFixedBytes = 48;
inline constexpr size_t kMaxHelloBytes = kHelloFixedBytes + kMaxTokenBytes;  // payload
// How long an accepted connection may take to introduce itself.
inline constexpr std::chrono::seconds kHelloTimeout{5};

// What every connection of one run must carry to be let in.
struct JobIdentity {
  std::string token;      // a secret shared by the run's nodes (random per in-process run)
  int64_t epoch_ns = 0;   // the network clock's epoch, steady-clock ns (0 in one process)
  uint64_t run_hash = 0;  // fingerprint of the training config and data (0 in one process)
};

// Payload of a hello frame (FrameKind::hello, source = rank), little-endian:
//   0 magic u32 "DSGH" | 4 version u16 | 6 token bytes u16 (<= 256) | 8 world i32 |
//   12 rank i32 | 16 epoch_ns i64 | 24 run_hash u64 | 32 host_id u64 | 40 port u16 |
//   42 6 reserved (0) | 48 token, zero-padded to a multiple of 4 (frame lengths are)
struct Hello {
  uint16_t version = kProtocolVersion;
  int32_t world = 0;
  int32_t rank = 0;
  int64_t epoch_ns = 0;
  uint64_t run_hash = 0;
  uint64_t host_id = 0;  // rendezvous: which machine (hash of its boot id), 0 if unknown
  uint16_t port = 0;     // rendezvous: the sender's listening port, 0 otherwise
  std::string token;
};

// The whole frame: header + payload. The token is cut to kMaxTokenBytes (callers refuse
// longer ones first).
std::vector<uint8_t> encode_hello(const Hello& hello);
// Parses a payload; nullopt with *why = a one-line reason (bad magic, wrong protocol
// version, inconsistent length). The frame's CRC is the caller's to check (check_payload).
std::optional<Hello> decode_hello(std::span<const uint8_t> payload, std::string* why);
// "" when `hello` may join the job `job` of `world` ranks at the node of rank `self`
// (self = -1: any rank may), otherwise why not ("wrong job token", ...).
std::string check_hello(const Hello& hello, const JobIdentity& job, int world, int self);

// The header of a connection's first frame, checked before its payload is read: it decodes,
// it is a hello, and its length is within kMaxHelloBytes (the peer chose it). nullopt with
// *why otherwise.
std::optional<FrameHeader> check_hello_header(const HeaderBytes& bytes, std::string* why);

// A 128-bit random token in hex, for a run that makes its own.
std::string random_token();
// This machine's identity: a hash of /proc/sys/kernel/random/boot_id (0 if unreadable).
// Equal ids mean one host, hence one CLOCK_MONOTONIC that every process can share.
uint64_t host_id();
// "127.0.0.1:54321" for a connected socket ("unknown peer" if it is not).
std::string remote_name(const boost::asio::ip::tcp::socket& socket);
// A connection a listener refused: who refused it ("rank 1", "rank 0 (rendezvous)"), the
// peer's address ("127.0.0.1:54321") and why ("wrong job token").
struct Refusal {
  std::string who, from, reason;
};
// Where refusals go instead of stderr (a lesson that shows them); called on the listener's
// thread. Empty: stderr.
using RefusalSink = std::function<void(const Refusal&)>;
// Reports a refusal to `log`, or when it is empty as one line on stderr: "dsgd: rank 1
// refused a connection from 127.0.0.1:54321: wrong job token".
void log_refusal(const std::string& who, const boost::asio::ip::tcp::socket& socket,
                 const std::string& reason, const RefusalSink& log = {});

// --- set-up I/O ------------------------------------------------------------------------
// Blocking calls with a deadline, for sockets whose io_context no other thread runs (the
// rendezvous). Each runs that io_context until its operation completes
// or the deadline passes, then cancels it and returns boost::asio::error::timed_out.
using ErrorCode = boost::system::error_code;
ErrorCode connect_until(boost::asio::ip::tcp::socket& socket,
                        const boost::asio::ip::tcp::endpoint& peer, Clock::time_point deadline);
ErrorCode write_until(boost::asio::ip::tcp::socket& socket, std::span<const uint8_t> bytes,
                      Clock::time_point deadline);
ErrorCode read_until(boost::asio::ip::tcp::socket& socket, std::span<uint8_t> bytes,
                     Clock::time_point deadline);

// Reads one set-up frame (FrameKind::hello) whose payload is at most `max_bytes`: the
// header first, its length checked, then the payload and its CRC32C. nullopt with *why on
// a timeout, a closed connection, a bad header, another kind, an oversized or corrupt
// payload; *io_error (when given) is then the socket's error (timed_out, eof, ...), or
// clear for bad content.
std::optional<std::vector<uint8_t>> read_setup_frame(boost::asio::ip::tcp::socket& socket,
                                                     size_t max_bytes, Clock::time_point deadline,
                                                     std::string* why,
                                                     ErrorCode* io_error = nullptr);
// read_setup_frame + decode_hello (a hello of another protocol version is named as such
// before its CRC is checked).
std::optional<Hello> read_hello(boost::asio::ip::tcp::socket& socket, Clock::time_point deadline,
                                std::string* why, ErrorCode* io_error = nullptr);

// Little-endian field access for set-up payloads.
namespace wire {
void put_u16(std::vector<uint8_t>& out, uint16_t v);
void put_u32(std::vector<uint8_t>& out, uint32_t v);
void put_u64(std::vector<uint8_t>& out, uint64_t v);
// Reads fields in order; any read past the end sets ok() false and returns 0.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint8_t u8();
  uint16_t u16();
  uint32_t u32();
  uint64_t u64();
  std::string text(size_t n);
  size_t left() const { return ok_ ? bytes_.size() - at_ : 0; }
  bool ok() const { return ok_; }

 private:
  bool need(size_t n);
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};
}  // namespace wire

}  // namespace dsgd::sim
