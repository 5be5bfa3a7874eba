// dsgd node: ranks as separate processes. Three `dsgd node` processes must train exactly as
// `dsgd train --nodes 3`; foreign connections (wrong token, wrong protocol version, garbage,
// an absurd length) are refused without harming the run; a missing rank makes the others
// fail within the deadline. Also the handshake codec and nodes with ports of their own, in
// process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli_runner.h"
#include "core/errors.h"
#include "listening_nodes.h"
#include "node_processes.h"
#include "raw_socket.h"
#include "wait_until.h"
#include "core/io/npz.h"
#include "sim/handshake.h"
#include "sim/node.h"
#include "sim/rendezvous.h"

using namespace dsgd;
using dsgd::test::garbage;
using namespace std::chrono_literals;
using dsgd::test::closed_by_peer;
using dsgd::test::raw_connect;
using dsgd::test::raw_send;
using dsgd::test::read_text;
using dsgd::test::TempDir;
using namespace dsgd::test;  // node_processes.h

namespace {

std::vector<uint8_t> hello_bytes(const std::string& token,
                                 uint16_t version = sim::kProtocolVersion) {
  return sim::encode_hello({.version = version, .world = 3, .rank = 1, .token = token});
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Handshake codec, in process
// ---------------------------------------------------------------------------------------

TEST_CASE("hello: encode and decode round trip, the header's length is the payload's",
          "[handshake]") {
  const sim::Hello h{.world = 7,
                     .rank = 5,
                     .epoch_ns = -123456789,
                     .run_hash = 0xfeedfacecafebeefULL,
                     .host_id = 42,
                     .port = 29500,
                     .token = "sesame"};
  const std::vector<uint8_t> bytes = sim::encode_hello(h);
  REQUIRE(bytes.size() == sim::kFrameHeaderBytes + sim::kHelloFixedBytes + 8);  // padded
  sim::HeaderBytes header{};
  std::copy_n(bytes.begin(), header.size(), header.begin());
  std::string why;
  const auto frame = sim::decode_header(header, &why);
  REQUIRE(frame);
  CHECK(frame->kind == sim::FrameKind::hello);
  CHECK(frame->source == 5);
  CHECK(frame->length == sim::kHelloFixedBytes + 8);
  const auto back = sim::decode_hello(std::span(bytes).subspan(sim::kFrameHeaderBytes), &why);
  REQUIRE(back);
  CHECK(back->version == sim::kProtocolVersion);
  CHECK(back->world == 7);
  CHECK(back->rank == 5);
  CHECK(back->epoch_ns == -123456789);
  CHECK(back->run_hash == 0xfeedfacecafebeefULL);
  CHECK(back->host_id == 42);
  CHECK(back->port == 29500);
  CHECK(back->token == "sesame");
}

TEST_CASE("hello: a wrong version, bad magic or inconsistent length is refused with a reason",
          "[handshake]") {
  std::string why;
  auto payload_of = [](const std::vector<uint8_t>& frame) {
    return std::vector<uint8_t>(frame.begin() + sim::kFrameHeaderBytes, frame.end());
  };
  auto v1 = payload_of(hello_bytes("t", 1));  // the version before frames carried a CRC
  CHECK_FALSE(sim::decode_hello(v1, &why));
  CHECK(why.find("wrong protocol version 1") != std::string::npos);
  auto bad_magic = payload_of(hello_bytes("t"));
  bad_magic[0] ^= 0xff;
  CHECK_FALSE(sim::decode_hello(bad_magic, &why));
  CHECK(why.find("bad magic") != std::string::npos);
  auto truncated = payload_of(hello_bytes("token"));
  truncated.resize(truncated.size() - 4);
  CHECK_FALSE(sim::decode_hello(truncated, &why));
  CHECK(why.find("malformed") != std::string::npos);
  CHECK_FALSE(sim::decode_hello(std::vector<uint8_t>(3, 0), &why));
}

TEST_CASE("hello: check_hello names what does not match the job", "[handshake]") {
  const sim::JobIdentity job{.token = "sesame", .epoch_ns = 10, .run_hash = 99};
  sim::Hello h{.world = 3, .rank = 1, .epoch_ns = 10, .run_hash = 99, .token = "sesame"};
  CHECK(sim::check_hello(h, job, 3, 0) == "");
  auto with = [&](auto change) {
    sim::Hello copy = h;
    change(copy);
    return sim::check_hello(copy, job, 3, 0);
  };
  CHECK(with([](sim::Hello& x) { x.token = "sesamE"; }) == "wrong job token");
  CHECK(with([](sim::Hello& x) { x.token = "sesame2"; }) == "wrong job token");
  CHECK(with([](sim::Hello& x) { x.world = 4; }).find("world size 4") != std::string::npos);
  CHECK(with([](sim::Hello& x) { x.rank = 3; }).find("not a rank") != std::string::npos);
  CHECK(with([](sim::Hello& x) { x.rank = -1; }).find("not a rank") != std::string::npos);
  CHECK(with([](sim::Hello& x) { x.rank = 0; }).find("own") != std::string::npos);
  CHECK(with([](sim::Hello& x) { x.epoch_ns = 11; }).find("epoch") != std::string::npos);
  CHECK(with([](sim::Hello& x) { x.run_hash = 1; }).find("fingerprint") != std::string::npos);
  CHECK(sim::random_token() != sim::random_token());
  CHECK(sim::random_token().size() == 32);
}

TEST_CASE("rendezvous addresses: IPv4 or localhost with a port, nothing looked up", "[handshake]") {
  CHECK(sim::parse_endpoint("localhost:29500", "--rendezvous").address().is_loopback());
  CHECK(sim::parse_endpoint("10.1.2.3:1", "--rendezvous").port() == 1);
  CHECK_THROWS_AS(sim::parse_endpoint("10.1.2.3", "--rendezvous"), UsageError);
  CHECK_THROWS_AS(sim::parse_endpoint("10.1.2.3:0", "--rendezvous"), UsageError);
  CHECK_THROWS_AS(sim::parse_endpoint("10.1.2.3:70000", "--rendezvous"), UsageError);
  CHECK_THROWS_AS(sim::parse_endpoint("example.org:80", "--rendezvous"), UsageError);
}

// ---------------------------------------------------------------------------------------
// SimNode set-up, in process
// ---------------------------------------------------------------------------------------

TEST_CASE("a node's port refuses garbage and a wrong token, and takes a peer's first send",
          "[handshake][sim]") {
  sim::Network network({}, 2);
  sim::NetClock clock;
  sim::SimNode node0(0, 2, {}, network, clock), node1(1, 2, {}, network, clock),
      intruder(1, 2, {}, network, clock);
  node0.set_job({.token = "sesame"});
  node1.set_job({.token = "sesame"});
  intruder.set_job({.token = "guess"});
  for (auto* n : {&node0, &node1, &intruder})
    n->set_timeout(3s);
  dsgd::test::start_listening({&node0, &node1}, {&intruder});
  const int junk = raw_connect(node0.port());
  raw_send(junk, garbage());
  // Each connects when it first sends; the intruder's connection is refused.
  std::vector<float> x{1, 2, 3}, y(3, 0);
  intruder.send(x, 0, 7);
  intruder.flush(Clock::now() + 3s);
  node1.send(x, 0, 7);
  node1.flush(Clock::now() + 3s);
  node0.recv(y, 1, 7);
  CHECK(y == x);
  CHECK(closed_by_peer(junk, 3s));
  ::close(junk);
  CHECK(dsgd::test::wait_for([&] { return node0.refusals().size() >= 2; }, 5s));
  const std::vector<std::string> refusals = node0.refusals();
  INFO(Catch::Detail::stringify(refusals));
  CHECK(std::any_of(refusals.begin(), refusals.end(),
                    [](const std::string& r) { return r.find("wrong job token") != r.npos; }));
  CHECK(std::any_of(refusals.begin(), refusals.end(),
                    [](const std::string& r) { return r.find("bad frame magic") != r.npos; }));
  for (auto* n : {&node0, &node1, &intruder})
    n->close();
}

TEST_CASE("a rank that sends once and then computes past the hello's limit still delivers",
          "[handshake][sim]") {
  // Lesson 13's rank 0 broadcasts, then runs demos of its own for a minute without a call
  // that would write: its first send must leave with its connection's hello.
  sim::Network network({}, 2);
  sim::NetClock clock;
  sim::SimNode node0(0, 2, {}, network, clock), node1(1, 2, {}, network, clock);
  for (auto* n : {&node0, &node1}) {
    n->set_job({.token = "sesame"});
    n->set_timeout(3s);
  }
  dsgd::test::start_listening({&node0, &node1}, {});
  std::vector<float> x{1, 2, 3}, y(3, 0);
  node1.send(x, 0, 7);
  std::this_thread::sleep_for(sim::kHelloTimeout + 1s);  // rank 1 computes; nobody writes
  node0.recv(y, 1, 7);
  CHECK(y == x);
  CHECK(node0.refusals().empty());
  for (auto* n : {&node0, &node1})
    n->close();
}

TEST_CASE("a receive from a rank of another process that never connects names it at the deadline",
          "[handshake][sim]") {
  sim::Network network({}, 3);
  sim::NetClock clock;
  sim::SimNode node(1, 3, {}, network, clock);
  node.set_job({.token = "sesame"});
  node.set_timeout(300ms);
  node.set_peer_addresses({{"127.0.0.1", 1}, {"127.0.0.1", node.port()}, {"127.0.0.1", 1}});
  node.start();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> buffer(1);
  try {
    node.recv(buffer, 2, 0);
    FAIL("recv returned without a peer");
  } catch (const TimeoutError& e) {
    CHECK(e.peer() == 2);
    CHECK_THAT(e.what(),
               Catch::Contains("recv from rank 2") && Catch::Contains("it never connected"));
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(waited >= 0.25);
  CHECK(waited < 3.0);
}

// ---------------------------------------------------------------------------------------
// dsgd node processes
// ---------------------------------------------------------------------------------------

TEST_CASE("three dsgd node processes train exactly like dsgd train --nodes 3", "[node][cli]") {
  TempDir dir;
  const Reference want = reference(dir, "--latency 200us");
  const uint16_t port = free_port();
  // Started in reverse: ranks 2 and 1 wait for rank 0's rendezvous to come up. The pause
  // only orders the starts so that they usually retry; nothing below depends on it (any
  // order must train the same), and none of them says anything before rank 0 is up.
  Process r2(node_args(2, 3, port, "--latency 200us --timeout 10s"), dir / "r2");
  Process r1(node_args(1, 3, port, "--latency 200us --timeout 10s"), dir / "r1");
  std::this_thread::sleep_for(200ms);
  Process r0(node_args(0, 3, port,
                       fmt::format("--latency 200us --timeout 10s --save {} --metrics {}",
                                   dir / "node.npz", dir / "m.jsonl")),
             dir / "r0");
  CHECK(r0.wait(20s) == 0);
  CHECK(r1.wait(5s) == 0);
  CHECK(r2.wait(5s) == 0);
  INFO(r0.err() + r1.err() + r2.err());
  require_same_params(read_npz(dir / "node.npz"), want.params);
  // The same model time: each process models its own links, as the threads do.
  CHECK(summary_value(r0.out(), "model time") ==
        Approx(summary_value(want.out, "model time")).epsilon(1e-3));
  // Rank 0 wrote one metrics line per step; the others wrote nothing.
  const std::string metrics = read_text(dir / "m.jsonl");
  CHECK(std::count(metrics.begin(), metrics.end(), '\n') == 20);
  CHECK(r0.out().find("rank 0 of 3 processes") != std::string::npos);
  CHECK(r1.out().empty());
}

TEST_CASE("dsgd node with clocks counted per machine (--clock local) trains the same",
          "[node][cli]") {
  TempDir dir;
  const Reference want = reference(dir, "--latency 1ms --bandwidth 1Gbit");
  const uint16_t port = free_port();
  const std::string flags = "--clock local --latency 1ms --bandwidth 1Gbit --timeout 10s";
  Process r0(node_args(0, 3, port, flags + " --save " + dir / "node.npz"), dir / "r0");
  Process r1(node_args(1, 3, port, flags), dir / "r1");
  Process r2(node_args(2, 3, port, flags), dir / "r2");
  CHECK(r0.wait(20s) == 0);
  CHECK(r1.wait(5s) == 0);
  CHECK(r2.wait(5s) == 0);
  INFO(r0.err() + r1.err() + r2.err());
  require_same_params(read_npz(dir / "node.npz"), want.params);
  CHECK(summary_value(r0.out(), "model time") ==
        Approx(summary_value(want.out, "model time")).epsilon(1e-3));
  // Delays counted from each arrival still hold messages back: every all-reduce needs at
  // least one 1 ms hop (a bound on wall time, never an exact figure).
  CHECK(summary_value(r0.out(), "s  (") >= 1.0);
}

TEST_CASE("wrong token, wrong version, garbage and absurd lengths are refused, the run goes on",
          "[node][cli]") {
  TempDir dir;
  const Reference want = reference(dir);
  const uint16_t port = free_port();
  Process r0(node_args(0, 3, port, "--timeout 15s --save " + dir / "node.npz"), dir / "r0");
  const uint16_t r0_port = accept_port(r0.await_err("accepts peers on", 10s));
  // Three connections to rank 0's own port that never say anything: its peers' connections
  // are read beside them, not after them, and the job goes on.
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i)
    idle.push_back(raw_connect(r0_port));

  // At the rendezvous: each is closed at once, none is let in.
  const int wrong_token = raw_connect(port);
  raw_send(wrong_token, hello_bytes("guess"));
  const int wrong_version = raw_connect(port);
  raw_send(wrong_version, hello_bytes("sesame", 99));
  const int junk = raw_connect(port);
  raw_send(junk, garbage());
  const int huge = raw_connect(port);
  std::vector<uint8_t> huge_header = hello_bytes("sesame");
  huge_header.resize(sim::kFrameHeaderBytes);
  std::fill(huge_header.begin() + 40, huge_header.end(), 0);
  huge_header[40 + 3] = 0x40;  // length 1 GiB: refused before anything is read or allocated
  raw_send(huge, huge_header);
  for (int fd : {wrong_token, wrong_version, junk, huge}) {
    CHECK(closed_by_peer(fd, 3s));
    ::close(fd);
  }
  // One that says nothing is still waiting when the last rank registers: dropped then.
  const int silent = raw_connect(port);
  // A whole node with the wrong token is refused and says so.
  Process stranger(fmt::format("node --rank 1 --world 3 --rendezvous 127.0.0.1:{} --token guess "
                               "{} --timeout 5s",
                               port, kTrainFlags),
                   dir / "stranger");
  CHECK(stranger.wait(10s) == 3);
  CHECK(stranger.err().find("refused this node") != std::string::npos);

  // Rank 1's own port gets garbage and a wrong token before rank 2 connects to it.
  Process r1(node_args(1, 3, port, "--timeout 15s"), dir / "r1");
  const uint16_t r1_port = accept_port(r1.await_err("accepts peers on", 10s));
  const int junk1 = raw_connect(r1_port);
  raw_send(junk1, garbage());
  const int wrong1 = raw_connect(r1_port);
  raw_send(wrong1, hello_bytes("guess"));
  Process r2(node_args(2, 3, port, "--timeout 15s"), dir / "r2");

  CHECK(r0.wait(20s) == 0);
  CHECK(r1.wait(5s) == 0);
  CHECK(r2.wait(5s) == 0);
  CHECK(closed_by_peer(silent, 1s));
  ::close(silent);
  for (int fd : idle)
    ::close(fd);
  CHECK(closed_by_peer(junk1, 1s));
  CHECK(closed_by_peer(wrong1, 1s));
  ::close(junk1);
  ::close(wrong1);
  const std::string e0 = r0.err(), e1 = r1.err();
  INFO(e0 + "\n" + e1 + "\n" + r2.err());
  CHECK(e0.find("rank 0 (rendezvous) refused a connection from 127.0.0.1:") != std::string::npos);
  CHECK(e0.find("wrong job token") != std::string::npos);
  CHECK(e0.find("wrong protocol version 99") != std::string::npos);
  CHECK(e0.find("bad frame magic") != std::string::npos);
  CHECK(e0.find("over the") != std::string::npos);
  CHECK(e1.find("rank 1 refused a connection from 127.0.0.1:") != std::string::npos);
  CHECK(e1.find("bad frame magic") != std::string::npos);
  CHECK(e1.find("wrong job token") != std::string::npos);
  require_same_params(read_npz(dir / "node.npz"), want.params);
}

TEST_CASE("a rank that never starts makes the others fail within the deadline, naming it",
          "[node][cli]") {
  TempDir dir;
  const uint16_t port = free_port();
  const auto t0 = std::chrono::steady_clock::now();
  Process r0(node_args(0, 3, port, "--timeout 3s --save " + dir / "node.npz"), dir / "r0");
  Process r1(node_args(1, 3, port, "--timeout 3s"), dir / "r1");
  CHECK(r0.wait(12s) == 3);
  CHECK(r1.wait(4s) == 3);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string e0 = r0.err(), e1 = r1.err();
  INFO(e0 + "\n" + e1);
  CHECK(e0.find("rank 2 did not join the rendezvous") != std::string::npos);
  CHECK(e1.find("rank 2 did not join the rendezvous") != std::string::npos);
  CHECK(took >= 2.5);
  CHECK(took < 8.0);
  CHECK_FALSE(std::filesystem::exists(dir / "node.npz"));
}

TEST_CASE("dsgd node refuses to listen beyond loopback unless --listen says so", "[node][cli]") {
  const auto r = dsgd::test::run_dsgd(fmt::format(
      "node --rank 0 --world 2 --rendezvous 192.0.2.1:29500 --token t {}", kTrainFlags));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--listen 0.0.0.0") != std::string::npos);
  const auto bad_rank = dsgd::test::run_dsgd(
      "node --rank 2 --world 2 --rendezvous 127.0.0.1:29500 --token t --steps 1");
  CHECK(bad_rank.exit_code == 2);
  CHECK(bad_rank.err.find("--rank 2") != std::string::npos);
  const auto switch_topology = dsgd::test::run_dsgd(
      "node --rank 0 --world 2 --rendezvous 127.0.0.1:29500 --token t --topology switch");
  CHECK(switch_topology.exit_code == 2);
  CHECK(switch_topology.err.find("mesh") != std::string::npos);
}

TEST_CASE("a node that fails tells its peers why it leaves: they name the rank lost first",
          "[handshake][sim]") {
  sim::Network network({}, 3);
  sim::NetClock clock;
  std::vector<std::unique_ptr<sim::SimNode>> nodes;
  for (int r = 0; r < 3; ++r) {
    nodes.push_back(std::make_unique<sim::SimNode>(r, 3, sim::NodeOptions{}, network, clock));
    nodes.back()->set_timeout(5s);
  }
  start_listening({nodes[0].get(), nodes[1].get(), nodes[2].get()});
  // Every pair connects: each rank sends one float to every other and receives theirs.
  std::vector<float> one{1.0f}, got(1);
  for (int from = 0; from < 3; ++from) {
    for (int to = 0; to < 3; ++to)
      if (to != from) nodes[from]->send(one, to, 0);
    nodes[from]->flush(std::chrono::steady_clock::now() + 5s);
  }
  for (int to = 0; to < 3; ++to)
    for (int from = 0; from < 3; ++from)
      if (from != to) nodes[to]->recv(got, from, 0);
  nodes[2]->crash();  // as a killed process: its connections drop, it says nothing
  std::string rank0_error;
  try {
    nodes[0]->recv(got, 2, 0);
    FAIL("rank 0 received from a crashed rank");
  } catch (const CommError& e) {
    rank0_error = e.what();
    nodes[0]->leave(e.what());
    nodes[0]->close();
  }
  CHECK_THAT(rank0_error, Catch::Contains("lost rank 2"));
  try {
    nodes[1]->recv(got, 0, 0);
    FAIL("rank 1 received from a rank that left");
  } catch (const CommError& e) {
    CHECK(e.peer() == 0);
    CHECK_THAT(e.what(), Catch::Contains("lost rank 0") &&
                             Catch::Contains("it left the run after this: " + rank0_error));
  }
}
