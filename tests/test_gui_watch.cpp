// dsgd-gui --watch: the window as an observer of a run in another process, streaming with
// `dsgd train --monitor`; foreign connections and wrong tokens are refused, the run unharmed.
#include <catch2/catch.hpp>
#include <string>

#include "cli_runner.h"
#include "core/errors.h"
#include "core/io/monitor_wire.h"
#include "gui/model/app.h"
#include "gui/model/watch.h"
#include "raw_socket.h"
#include "wait_until.h"

using namespace dsgd;
using namespace dsgd::gui;

namespace {

// The bytes of a text, for raw_send.
std::vector<uint8_t> bytes(const std::string& text) {
  return {text.begin(), text.end()};
}

}  // namespace

TEST_CASE("the window watches a dsgd train run in another process", "[gui][monitor]") {
  GuiApp app;
  app.open_watch("0");  // any free port on 127.0.0.1
  REQUIRE(app.watch() != nullptr);
  const uint16_t port = app.watch()->port();
  // A foreign connection first: closed, counted, and the watch goes on.
  const int foreign = test::raw_connect(port);
  test::raw_send(foreign, bytes("GET / HTTP/1.0\n\n"));
  CHECK(test::closed_by_peer(foreign, std::chrono::seconds(10)));
  ::close(foreign);
  const test::CliResult run = test::run_dsgd(
      fmt::format("train --nodes 4 --steps 5 --latency 1ms -q --monitor 127.0.0.1:{}", port));
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("0 dropped") != std::string::npos);
  REQUIRE(test::wait_for([&] {
    const WatchState w = app.watch()->state();
    return !w.senders.empty() && w.connected == 0;
  }));
  const WatchState w = app.watch()->state();
  CHECK(w.refused == 1);
  CHECK(w.world == 4);
  CHECK(w.model_time);
  const Snapshot s = app.snapshot();
  CHECK(s.error.empty());
  CHECK(s.world == 4);
  CHECK(s.time_base == TimeBase::model);
  CHECK(s.title.find("watching") != std::string::npos);
  CHECK(s.network.find("latency 1 ms") != std::string::npos);
  CHECK(s.steps.size() == 4 * 5);
  CHECK(s.messages.size() > 4 * 5);  // each step's all_reduce, and the broadcast
  Commands none;
  app.apply(none);
  CHECK(app.view().draft.run.cluster.nodes == 4);  // the controls show the watched run
}

TEST_CASE("ranks run by processes of their own are named after their senders", "[gui][monitor]") {
  GuiApp app;
  app.open_watch("0");
  REQUIRE(app.watch() != nullptr);
  const auto node = [&](const char* name, int rank) {
    const int fd = test::raw_connect(app.watch()->port());
    test::raw_send(fd, bytes(monitor_hello_line({.name = name, .world = 2}) +
                             monitor_event_line({.kind = EventKind::step_begin, .rank = rank})));
    return fd;
  };
  const int alice = node("alice", 1);
  REQUIRE(test::wait_for([&] { return app.watch()->state().events.size() == 1; }));
  CHECK(app.snapshot().rank_names.empty());  // one sender runs every rank: no names
  const int bob = node("bob", 0);
  REQUIRE(test::wait_for([&] { return app.watch()->state().events.size() == 2; }));
  CHECK(app.snapshot().rank_names == std::vector<std::string>{"bob", "alice"});
  ::close(alice);
  ::close(bob);
}

TEST_CASE("once every sender has gone, a message never received was lost, not in flight",
          "[gui][monitor]") {
  GuiApp app;
  app.open_watch("0");
  REQUIRE(app.watch() != nullptr);
  // Rank 0 sends to rank 1, whose laptop died before receiving it.
  const int alice = test::raw_connect(app.watch()->port());
  test::raw_send(alice, bytes(monitor_hello_line({.name = "alice", .world = 2}) +
                              monitor_event_line({.kind = EventKind::send_begin,
                                                  .rank = 0,
                                                  .peer = 1,
                                                  .bytes = 8,
                                                  .wall_s = 0.1,
                                                  .model_s = 0.1})));
  const int bob = test::raw_connect(app.watch()->port());
  test::raw_send(
      bob, bytes(monitor_hello_line({.name = "bob", .world = 2}) +
                 monitor_event_line(
                     {.kind = EventKind::step_begin, .rank = 1, .wall_s = 0.05, .model_s = 0.05})));
  REQUIRE(test::wait_for([&] { return app.watch()->state().events.size() == 2; }));
  Snapshot s = app.snapshot();
  CHECK(s.in_flight.size() == 1);  // alice's laptop is still there: it may yet arrive
  CHECK(s.lost.empty());
  ::close(bob);
  ::close(alice);
  REQUIRE(test::wait_for([&] { return app.watch()->state().connected == 0; }));
  s = app.snapshot();
  CHECK(s.in_flight.empty());
  CHECK(s.lost.size() == 1);
}

TEST_CASE("senders whose clocks differ are placed on the watch's clock", "[gui][monitor]") {
  Watch watch("0");
  // Two machines' events at the same moment, their clocks 95 s apart.
  const auto sender = [&](double clock_s) {
    const int fd = test::raw_connect(watch.port());
    test::raw_send(fd, bytes(monitor_hello_line({.world = 2}) + monitor_clock_line(clock_s, 0) +
                             monitor_event_line({.kind = EventKind::step_begin,
                                                 .rank = clock_s > 50 ? 0 : 1,
                                                 .wall_s = clock_s + 0.001})));
    return fd;
  };
  const int a = sender(100.0), b = sender(5.0);
  REQUIRE(test::wait_for([&] { return watch.state().events.size() == 2; }));
  const WatchState w = watch.state();
  CHECK(std::abs(w.events[0].wall_s - w.events[1].wall_s) < 1.0);  // were 95 s apart
  CHECK(w.events[0].wall_s >= 0);
  ::close(a);
  ::close(b);
}

TEST_CASE("a watch with a token refuses a run without it", "[gui][monitor]") {
  Watch watch("127.0.0.1:0", "s3cret");
  const int wrong = test::raw_connect(watch.port());
  test::raw_send(wrong, bytes(monitor_hello_line({.name = "mallory", .token = "guess"})));
  CHECK(test::closed_by_peer(wrong, std::chrono::seconds(10)));
  ::close(wrong);
  const int right = test::raw_connect(watch.port());
  test::raw_send(right, bytes(monitor_hello_line({.name = "alice", .token = "s3cret"}) +
                              monitor_event_line({.kind = EventKind::step_begin, .rank = 0})));
  REQUIRE(test::wait_for([&] { return watch.state().events.size() == 1; }));
  ::close(right);
  const WatchState w = watch.state();
  CHECK(w.refused == 1);
  CHECK(w.last_refusal.find("wrong job token") != std::string::npos);
  CHECK(w.senders == std::vector<std::string>{"alice"});
}

TEST_CASE("a watch on a port that is taken, or not a port, is refused", "[gui][monitor]") {
  Watch first("0");
  CHECK_THROWS_AS(Watch(std::to_string(first.port())), DataError);
  CHECK_THROWS_AS(Watch("http"), UsageError);
  CHECK_THROWS_AS(Watch("host:99999"), UsageError);
}

TEST_CASE("a connection that sends no hello in time is refused, the watch goes on",
          "[gui][monitor]") {
  Watch watch("0", "", std::chrono::milliseconds(300));
  const int silent = test::raw_connect(watch.port());
  CHECK(test::closed_by_peer(silent, std::chrono::seconds(30)));
  ::close(silent);
  const WatchState w = watch.state();
  CHECK(w.refused == 1);
  CHECK(w.last_refusal.find("no hello within 0.3 s") != std::string::npos);
  CHECK(w.connected == 0);
}
