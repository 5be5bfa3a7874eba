// The wire protocol's defences: CRC32C (both implementations agree on known vectors and
// random buffers), frame headers with the payload's CRC, strangers that connect to a running
// node (wrong token, wrong version, garbage) refused while the run goes on with exact
// results, and peers that send bad or corrupt frames losing their connection with a
// CommError that names them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "listening_nodes.h"
#include "raw_socket.h"
#include "wait_until.h"
#include "sim/cluster.h"
#include "sim/crc32c.h"
#include "sim/frame.h"
#include "sim/handshake.h"
#include "sim/node.h"

using namespace dsgd;
using dsgd::test::garbage;
using namespace std::chrono_literals;

using namespace dsgd::test;

namespace {

// A data frame as a peer would send it: header (with the payload's CRC unless `crc` says
// otherwise) and payload.
std::vector<uint8_t> data_frame(int source, int tag, uint64_t seq, const std::vector<float>& v,
                                std::optional<uint32_t> crc = std::nullopt) {
  const size_t bytes = v.size() * sizeof(float);
  const sim::HeaderBytes h =
      sim::encode_header({.kind = sim::FrameKind::data,
                          .source = source,
                          .tag = tag,
                          .seq = seq,
                          .length = bytes,
                          .crc32c = crc ? *crc : sim::crc32c(v.data(), bytes)});
  std::vector<uint8_t> out(h.begin(), h.end());
  out.resize(out.size() + bytes);
  std::memcpy(out.data() + h.size(), v.data(), bytes);
  return out;
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// CRC32C
// ---------------------------------------------------------------------------------------

TEST_CASE("crc32c: known vectors, with both implementations", "[wire][crc]") {
  struct Vector {
    std::vector<uint8_t> bytes;
    uint32_t crc;
  };
  std::vector<Vector> vectors;
  const std::string check = "123456789";
  vectors.push_back({{check.begin(), check.end()}, 0xE3069283});
  vectors.push_back({{}, 0});
  // RFC 3720 (iSCSI), appendix B.4.
  vectors.push_back({std::vector<uint8_t>(32, 0x00), 0x8A9136AA});
  vectors.push_back({std::vector<uint8_t>(32, 0xFF), 0x62A8AB43});
  std::vector<uint8_t> up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<uint8_t>(i);
    down[i] = static_cast<uint8_t>(31 - i);
  }
  vectors.push_back({up, 0x46DD794E});
  vectors.push_back({down, 0x113FDB5C});
  for (const auto& v : vectors) {
    CHECK(sim::crc32c(v.bytes) == v.crc);
    CHECK(sim::crc32c_portable(v.bytes.data(), v.bytes.size()) == v.crc);
  }
}

TEST_CASE("crc32c: ISA-L and Boost.CRC agree on random buffers, whole or in pieces",
          "[wire][crc]") {
  std::mt19937 rng(7);
  std::vector<uint8_t> buffer((1 << 20) + 64);
  for (auto& b : buffer)
    b = static_cast<uint8_t>(rng());
  // Below, at and above the sizes where ISA-L changes method, at alignments 0..7.
  for (size_t size :
       {1, 7, 8, 9, 255, 767, 768, 769, 4099, 24575, 24576, 24577, 100003, (1 << 20) + 5}) {
    for (size_t offset = 0; offset < 8; ++offset) {
      INFO("size " << size << " offset " << offset);
      const uint8_t* p = buffer.data() + offset;
      const uint32_t portable = sim::crc32c_portable(p, size);
      REQUIRE(sim::crc32c(p, size) == portable);
      // Extending a CRC over the rest gives the CRC of the whole, in both.
      const size_t cut = size / 3;
      REQUIRE(sim::crc32c(p + cut, size - cut, sim::crc32c(p, cut)) == portable);
      REQUIRE(sim::crc32c_portable(p + cut, size - cut, sim::crc32c_portable(p, cut)) == portable);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------------------

TEST_CASE("frame headers carry the payload's CRC32C, a flipped bit is caught", "[wire][frame]") {
  const std::vector<float> v{1.0f, -2.0f, 3.5f};
  const std::vector<uint8_t> frame = data_frame(2, 5, 9, v);
  sim::HeaderBytes bytes;
  std::copy_n(frame.begin(), bytes.size(), bytes.begin());
  std::string why;
  const auto header = sim::decode_header(bytes, &why);
  REQUIRE(header);
  CHECK(header->length == 12);
  CHECK(header->crc32c == sim::crc32c(v.data(), 12));
  std::vector<uint8_t> payload(frame.begin() + sim::kFrameHeaderBytes, frame.end());
  CHECK(sim::check_payload(*header, payload) == "");
  payload[5] ^= 0x10;
  CHECK_THAT(sim::check_payload(*header, payload), Catch::Contains("CRC32C"));
  payload.pop_back();
  CHECK_THAT(sim::check_payload(*header, payload), Catch::Contains("header says 12"));
  bytes[6] = 1;  // a reserved byte
  CHECK_FALSE(sim::decode_header(bytes, &why));
  CHECK_THAT(why, Catch::Contains("reserved"));
}

TEST_CASE("a hello with a corrupt payload is refused, one of version 1 is named",
          "[wire][handshake]") {
  sim::Network network({}, 2);
  sim::NetClock clock;
  sim::SimNode node0(0, 2, {}, network, clock), node1(1, 2, {}, network, clock);
  node0.set_job({.token = "sesame"});
  node1.set_job({.token = "sesame"});
  node0.set_timeout(5s);
  node1.set_timeout(5s);
  start_listening({&node0, &node1});
  std::vector<uint8_t> corrupt = sim::encode_hello({.world = 2, .rank = 1, .token = "sesame"});
  corrupt.back() ^= 1;  // in the token's padding: decodes, but the CRC no longer fits
  const int bad = raw_connect(node0.port());
  raw_send(bad, corrupt);
  // A version-1 hello: length as a u64, no CRC (here: zero).
  std::vector<uint8_t> v1 = sim::encode_hello({.version = 1, .world = 2, .rank = 1});
  std::fill(v1.begin() + 44, v1.begin() + 48, 0);
  const int old = raw_connect(node0.port());
  raw_send(old, v1);
  // Both are refused; node1's connection, made when it first sends, is taken.
  std::vector<float> x{4, 5}, y(2);
  node1.send(x, 0, 3);
  node1.flush(Clock::now() + 5s);
  node0.recv(y, 1, 3);
  CHECK(y == x);
  CHECK(closed_by_peer(bad, 5s));
  CHECK(closed_by_peer(old, 5s));
  ::close(bad);
  ::close(old);
  CHECK(wait_for([&] { return node0.refusals().size() >= 2; }, 5s));
  const auto refusals = node0.refusals();
  INFO(Catch::Detail::stringify(refusals));
  CHECK(contains(refusals, "CRC32C"));
  CHECK(contains(refusals, "wrong protocol version 1"));
}

// ---------------------------------------------------------------------------------------
// Strangers during a run
// ---------------------------------------------------------------------------------------

TEST_CASE(
    "strangers on the port of a running node of its own are refused, silent ones delay no "
    "peer",
    "[wire][handshake][sim]") {
  sim::Network network({}, 2);
  sim::NetClock clock;
  sim::SimNode node0(0, 2, {}, network, clock), node1(1, 2, {}, network, clock);
  for (auto* n : {&node0, &node1}) {
    n->set_job({.token = "sesame"});
    n->set_timeout(10s);
  }
  start_listening({&node0, &node1});
  const uint16_t port = node0.port();
  // Three that connect and say nothing: each would hold a blocking handshake for 5 s.
  std::vector<int> silent;
  for (int i = 0; i < 3; ++i)
    silent.push_back(raw_connect(port));
  std::vector<int> fds;
  fds.push_back(raw_connect(port));
  raw_send(fds.back(), sim::encode_hello({.world = 2, .rank = 1, .token = "guess"}));
  fds.push_back(raw_connect(port));
  raw_send(fds.back(), sim::encode_hello({.version = 99, .world = 2, .rank = 1}));
  fds.push_back(raw_connect(port));
  raw_send(fds.back(), garbage());
  fds.push_back(raw_connect(port));
  raw_send(fds.back(), data_frame(1, 0, 0, {1.0f, 2.0f}));  // data without a hello
  std::vector<uint8_t> huge = sim::encode_hello({.world = 2, .rank = 1});
  huge.resize(sim::kFrameHeaderBytes);
  huge[43] = 0x40;  // length 1 GiB: refused before anything is allocated
  fds.push_back(raw_connect(port));
  raw_send(fds.back(), huge);
  // The real peer's first message comes through long before the silent ones time out.
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> b(100003), got(100003);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<float>(i % 7);
  Request sent = node1.isend(b, 0, 9);
  std::thread receiver([&] { node0.recv(got, 1, 9); });
  node1.wait(sent);
  receiver.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(took < 2.0);  // a bound: the hello timeout is 5 s
  CHECK(got == b);
  for (int fd : fds) {
    CHECK(closed_by_peer(fd, 10s));
    ::close(fd);
  }
  for (int fd : silent)
    ::close(fd);
  CHECK(wait_for([&] { return node0.refusals().size() >= 5; }, 10s));
  const auto refusals = node0.refusals();
  INFO(Catch::Detail::stringify(refusals));
  CHECK(contains(refusals, "127.0.0.1:"));
  CHECK(contains(refusals, "wrong job token"));
  CHECK(contains(refusals, "wrong protocol version 99"));
  CHECK(contains(refusals, "bad frame magic"));
  CHECK(contains(refusals, "sent data before a hello"));
  CHECK(contains(refusals, "over the"));
  node0.close();
  node1.close();
}

TEST_CASE(
    "strangers on the port of an in-process cluster are closed unread at its next connection, "
    "the run goes on with exact results",
    "[wire][sim][network]") {
  constexpr int kNodes = 3;
  std::vector<std::vector<float>> results(kNodes);
  std::vector<std::string> refusals;
  bool all_closed = true;
  sim::run_cluster({.nodes = kNodes, .timeout = 30s}, [&](Communicator& comm) {
    const int r = comm.rank();
    auto& node = dynamic_cast<sim::SimNode&>(comm);
    std::vector<float> token(1);
    if (r == 0) {
      // Before rank 0 talks to anyone, strangers knock on the cluster's port; rank 0's
      // first send makes a connection there, which closes them.
      std::vector<int> fds;
      fds.push_back(raw_connect(node.port()));
      raw_send(fds.back(), sim::encode_hello({.world = kNodes, .rank = 2, .token = "guess"}));
      fds.push_back(raw_connect(node.port()));
      raw_send(fds.back(), garbage());
      fds.push_back(raw_connect(node.port()));
      comm.send(token, 1, 0);
      for (int fd : fds) {
        all_closed = all_closed && closed_by_peer(fd, 10s);
        ::close(fd);
      }
      comm.send(token, 2, 0);
      refusals = node.refusals();
    } else {
      comm.recv(token, 0, 0);
    }
    std::vector<float> b(100003);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = static_cast<float>((r + 1) * (i % 7));
    all_reduce(comm, b, ReduceOp::SUM, {.algorithm = Algorithm::ring});
    results[r] = std::move(b);
  });
  CHECK(all_closed);
  INFO(Catch::Detail::stringify(refusals));
  REQUIRE(refusals.size() == 3);
  CHECK(contains(refusals, "not a connection of this run"));
  for (int r = 0; r < kNodes; ++r) {
    REQUIRE(results[r].size() == 100003);
    for (size_t i = 0; i < results[r].size(); ++i)
      REQUIRE(results[r][i] == static_cast<float>(6 * (i % 7)));
  }
}

// ---------------------------------------------------------------------------------------
// Bad frames from a connected peer
// ---------------------------------------------------------------------------------------

namespace {

// Rank 0 as a real SimNode with a port of its own; rank 1 a raw socket that passed the
// handshake.
struct RawPeer {
  sim::Network network{{}, 2};
  sim::NetClock clock;
  sim::SimNode node{0, 2, {}, network, clock};
  int fd = -1;

  RawPeer() {
    node.set_job({.token = "sesame"});
    node.set_timeout(10s);
    fd = raw_connect(node.port());
    raw_send(fd, sim::encode_hello({.world = 2, .rank = 1, .token = "sesame"}));
    node.start();  // its I/O thread takes the connection; a wait hands it to the node
  }
  ~RawPeer() {
    node.close();
    ::close(fd);
  }
};

}  // namespace

TEST_CASE("a corrupt or bad frame closes that connection, the wait on the peer names it",
          "[wire][sim]") {
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* reason;
  };
  const std::vector<float> v{1.0f, 2.0f, 3.0f};
  std::vector<uint8_t> unknown_kind = data_frame(1, 7, 1, v);
  unknown_kind[4] = 9;
  std::vector<uint8_t> huge = data_frame(1, 7, 1, v);
  huge[40] = 0xfc;
  huge[41] = huge[42] = huge[43] = 0xff;  // 4 GiB - 4 bytes
  std::vector<uint8_t> long_farewell = data_frame(1, 7, 1, v);
  long_farewell[4] = 5;  // a farewell of 8 KiB: more than a reason needs
  long_farewell[40] = 0x00;
  long_farewell[41] = 0x20;
  long_farewell[42] = long_farewell[43] = 0;
  const std::vector<Case> cases{
      {"long farewell", long_farewell, "a farewell of 8192 bytes"},
      {"corrupt payload", data_frame(1, 7, 1, v, sim::crc32c(v.data(), 12) ^ 1), "CRC32C"},
      {"unknown kind", unknown_kind, "unknown frame kind 9"},
      {"oversized", huge, "over the"},
      {"another source", data_frame(0, 7, 1, v), "claims to come from rank 0"},
      {"garbage", garbage(), "bad frame magic"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      RawPeer peer;
      // A good frame first: the raw peer speaks the protocol.
      raw_send(peer.fd, data_frame(1, 7, 0, v));
      std::vector<float> got(3);
      peer.node.recv(got, 1, 7);
      CHECK(got == v);
      raw_send(peer.fd, c.bytes);
      try {
        peer.node.recv(got, 1, 7);
        FAIL("a bad frame was received");
      } catch (const TimeoutError& e) {
        FAIL(std::string("timed out instead: ") + e.what());
      } catch (const CommError& e) {
        CHECK(e.peer() == 1);
        CHECK_THAT(e.what(), Catch::Contains("lost rank 1") && Catch::Contains(c.reason));
      }
      CHECK(closed_by_peer(peer.fd, 5s));
      CHECK(contains(peer.node.refusals(), c.reason));
    }
  }
}
