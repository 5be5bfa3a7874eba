// MonitorSink: streams a run's events to an observer (`--monitor HOST:PORT`, e.g. `dsgd-gui
// --watch PORT`) in the wire format of core/io/monitor_wire.h, without ever slowing the run:
// on_event only appends to a bounded queue; a thread of its own connects (again every half
// second while it cannot), sends the hello and then the events. When the queue is full (an
// observer that reads slowly, or none yet) events are dropped, counted, and the observer is
// told how many before the next one it gets. An observer that connects late sees the hello
// and what comes from then on. Nothing is read from the observer.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <chrono>
#include <deque>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/events.h"
#include "core/io/monitor_wire.h"
#include "sim/run_spec.h"

namespace dsgd::sim {

class MonitorSink : public EventSink {
 public:
  // `endpoint`: "HOST:PORT" (UsageError, naming --monitor, when it is not one). At most
  // `capacity` events wait to be sent.
  MonitorSink(const std::string& endpoint, MonitorHello hello, size_t capacity = 1 << 16);
  // Sends what is queued, for at most `flush_s` seconds (less once the observer takes
  // nothing for a tenth of a second), then stops: finish().
  ~MonitorSink() override;
  MonitorSink(const MonitorSink&) = delete;
  MonitorSink& operator=(const MonitorSink&) = delete;

  void on_event(const Event& event) override;
  uint64_t dropped() const;  // events dropped so far
  uint64_t sent() const;     // events written to an observer so far

  static constexpr double flush_s = 1.0;
  // Sends what is queued, for at most flush_s, and says what the observer got, for the
  // run's summary: "127.0.0.1:29600 (1200 events sent, 0 dropped)". Events after it are
  // dropped. Idempotent.
  std::string finish();

 private:
  void run();
  bool connect_once();
  bool send_all(const std::string& bytes);
  double round_trip_s() const;

  std::string endpoint_, host_, port_;
  std::string hello_;
  size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Event> queue_;
  uint64_t dropped_ = 0, unreported_ = 0, sent_ = 0;
  // The events' clock (their wall_s counts from the run's epoch): where it stands on the
  // steady clock, from the first event's wall_s as it arrives; unknown before.
  std::optional<std::chrono::steady_clock::time_point> epoch_;
  std::chrono::steady_clock::time_point clock_sent_;  // when the last clock record went
  bool stopping_ = false;
  bool sending_ = false;
  bool tried_ = false;  // the thread has tried to connect once  // a batch taken from the queue is
                        // being written
  int fd_ = -1;         // the connection, -1 while there is none
  std::thread thread_;
};

// The sink for `spec.outputs.monitor`, saying hello as `name` (the host's name when empty)
// with the run's description and `token` (the job token of `dsgd node`, which a watch
// started with --token asks for); nullptr when the run has no observer.
std::unique_ptr<MonitorSink> make_monitor(const RunSpec& spec, std::string name = "",
                                          std::string token = "");

}  // namespace dsgd::sim
