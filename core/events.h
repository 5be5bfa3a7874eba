// Events: what every backend and the trainer report, as plain structs, to observers.
// One stream feeds the trace writer, the metrics, the GUI snapshot and the lessons.
// Not a logger: sinks decide what to keep. Sinks are called from the rank's own thread
// (several ranks may call one sink at once), so a shared sink must lock.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace dsgd {

enum class EventKind : uint8_t {
  send_begin,        // a send was posted (rank -> peer)
  send_end,          // the send's buffer is free again
  recv_begin,        // a receive was posted (peer may be -1: any source)
  recv_end,          // the receive completed; peer is the actual source
  collective_begin,  // op names the collective ("all_reduce"), bytes its payload
  collective_end,
  compute_begin,  // op names the phase ("forward_backward", "update")
  compute_end,
  step_begin,  // seq is the training step
  step_end,
  note,  // free-form marker (op); peer, tag and seq when it is about a message (below)
};

// A note about the rank's latest send to `peer` with `tag`: the network lost it `seq` times
// and it was sent again after each loss, so it arrives that many timeouts late.
inline constexpr const char* kRetransmitNote = "retransmit";
// A note in a summarised trace (core/io/trace_summary.h), about the rank's latest send to
// `peer` with `tag` (a message from one group of ranks to another): it stands for `seq`
// messages of the run.
inline constexpr const char* kBundleNote = "messages";
// An elastic run's round r adds r << kRoundShift to its message events' seq (send and receive
// begin and end), so that its messages are told from an earlier round's.
inline constexpr int kRoundShift = 40;
// A note that the rank's part in a round of an elastic run ended there (a rank was lost):
// what it left open ends unfinished, and its messages never received were abandoned. Its
// seq is the round's number.
inline constexpr const char* kRoundEndNote = "round ended";

const char* to_string(EventKind kind);

struct Event {
  EventKind kind = EventKind::note;
  int rank = -1;
  int peer = -1;
  int tag = 0;
  uint64_t bytes = 0;
  uint64_t seq = 0;      // per (rank, peer, tag) message sequence, or the step number
  double wall_s = 0.0;   // seconds since the run's epoch on the steady clock
  double model_s = 0.0;  // seconds of model time (alpha-beta link model), -1 if unknown
  const char* op = "";   // static string: "all_reduce", "send", "forward_backward", ...
  uint8_t preview_count = 0;
  std::array<float, 4> preview{};  // first values of the payload, for tooltips and lessons
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Event& event) = 0;
};

// Fans one event out to several sinks. Not itself locked: build it before the run starts.
class EventFanout : public EventSink {
 public:
  void add(EventSink* sink) {
    if (sink) sinks_.push_back(sink);
  }
  bool empty() const { return sinks_.empty(); }
  void on_event(const Event& event) override {
    for (EventSink* s : sinks_)
      s->on_event(event);
  }

 private:
  std::vector<EventSink*> sinks_;
};

// Keeps every event in memory (tests, lessons, the GUI snapshot). Thread-safe.
class EventBuffer : public EventSink {
 public:
  void on_event(const Event& event) override {
    std::lock_guard lock(mutex_);
    events_.push_back(event);
  }
  std::vector<Event> snapshot() const {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

}  // namespace dsgd
