// Watch: `dsgd-gui --watch [HOST:]PORT`, the window as an observer of runs in other processes
// or on other machines, each streaming its events with `--monitor HOST:PORT`
// (sim/monitor_sink.h, core/io/monitor_wire.h). A thread of its own listens (on 127.0.0.1
// unless a host is given), accepts any number of senders and reads their lines; the window
// copies what has come each frame. A connection whose first line is not a hello, whose
// token is wrong (when the watch has one), or that sends a malformed or overlong line is
// closed and counted as refused; the others go on. Nothing is ever sent back to a run.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/events.h"
#include "gui/model/listen_socket.h"

namespace dsgd::gui {

// What the watched runs have sent so far.
struct WatchState {
  // Per sender in the order sent; ops point into the Watch. wall_s is on the watch's clock
  // (seconds since it began) for a sender that sent its clock, as it was sent otherwise.
  std::vector<Event> events;
  std::string run_json;              // the first hello's run description; "" until one comes
  int world = 0;                     // the largest world a hello gave
  bool model_time = true;            // every event so far has a model time
  std::vector<std::string> senders;  // the names of the hellos, in the order they came
  // The sender whose events name each rank (by rank; "" for a rank not seen): who runs it.
  std::vector<std::string> rank_names;
  int connected = 0;         // senders connected now
  int refused = 0;           // connections closed as not a dsgd run's (or wrong token)
  uint64_t dropped = 0;      // events the senders dropped (gaps they reported)
  std::string last_refusal;  // why the latest refused connection was closed
};

class Watch {
 public:
  // UsageError for an endpoint that is not PORT or HOST:PORT; DataError when it cannot
  // listen there (the port taken). Port 0: any free port (port() says which). A connection
  // that has sent no hello within `hello_within` is refused.
  Watch(const std::string& endpoint, std::string token = "",
        std::chrono::milliseconds hello_within = kGreetWithin);
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  uint16_t port() const { return server_.port(); }
  const std::string& endpoint() const { return endpoint_; }
  WatchState state() const;

  // The most events kept: past it the older half is dropped (and counted in dropped).
  static constexpr size_t kCapacity = 400000;  // as a run in the window keeps

 private:
  struct Sender;
  void run();
  void accept_one();
  bool read_from(Sender& s);        // false: the connection ended or was refused
  bool silent_too_long(Sender& s);  // refused: no hello within hello_within_
  void take_line(Sender& s, std::string_view line);
  void refuse(Sender& s, const std::string& why);

  std::string endpoint_, token_;
  std::chrono::milliseconds hello_within_;
  ServerSocket server_;
  std::vector<Sender*> senders_;  // the thread's own
  mutable std::mutex mutex_;
  WatchState state_;
  std::deque<std::string> names_;  // the events' ops, interned; never shrinks
  // Every sender's events are placed on this clock (seconds since the watch began), each
  // moved by its clock's offset, estimated as NTP does from the round trip its TCP measured.
  using Clock = std::chrono::steady_clock;
  Clock::time_point started_ = Clock::now();
  std::thread thread_;
};

}  // namespace dsgd::gui
