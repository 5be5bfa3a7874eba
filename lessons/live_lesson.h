// LiveLesson: a lesson running in a thread of its own, while the caller's thread steers it
// (control(): step mode, pause, speed; step() delivers one message) and watches its output
// grow (transcript(), or the recorder's merged transcript). The one run of `dsgd lesson N`
// on simulated nodes (--step and --auto), of `dsgd lesson N --step` on SimGrid's ranks, and
// of dsgd-gui's lesson panel. Not MPI: there each rank is a process of its own and calls
// run_lesson_rank (runner.h).
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/events.h"
#include "lessons/lesson.h"
#include "lessons/readme.h"
#include "lessons/step_transcript.h"
#include "lessons/transcript.h"
#include "sim/cluster.h"
#include "sim/control.h"

namespace dsgd::lessons {

class LiveLesson {
 public:
  using Runner = std::function<void(const sim::ClusterOptions&, const sim::NodeFunction&)>;
  struct Options {
    LessonInfo info;
    LessonText text;
    LessonSettings settings;  // data: the run's own cache when null
    // cluster.events also sees every event (the GUI's views); cluster.control steers the
    // run (else the run's own, control()).
    sim::ClusterOptions cluster;
    // A live transcript at this pace (stepped: sync_sections and step mode on); none: the
    // caller reads recorder().take_ready().
    std::optional<StepTranscript::Pace> pace;
    // Runs the ranks on another backend than simulated nodes (empty: sim::run_cluster),
    // stepped by `stepper` (null: the simulated nodes' control()). dsgd lesson --step on
    // SimGrid: its StepGate.
    Runner run;
    sim::Stepper* stepper = nullptr;
  };

  explicit LiveLesson(Options options);
  ~LiveLesson();  // join()
  LiveLesson(const LiveLesson&) = delete;
  LiveLesson& operator=(const LiveLesson&) = delete;

  void start();
  // Waits for the run to end (a run held in step mode ends only when its messages go on).
  void join();
  bool finished() const { return finished_.load(); }
  // What the run threw, once finished(); null when it succeeded. error(): its message.
  std::exception_ptr failure() const;
  std::string error() const;

  // A message step() delivered; `shown`: the lesson shows it (not a section's message or a
  // training step's).
  struct Delivery {
    sim::StepInfo message;
    bool shown = false;
  };
  // Step mode: once every rank is blocked, delivers the next message (SimControl::step) and
  // reports it to a stepped transcript; nullopt when none came within `timeout`.
  std::optional<Delivery> step(std::chrono::milliseconds timeout);
  // Step mode: the message step() will deliver next, once every rank is blocked, left
  // pending (whether the lesson will show it); nullopt as for step().
  std::optional<Delivery> peek(std::chrono::milliseconds timeout);

  sim::SimControl& control() { return *control_; }
  Recorder& recorder() { return recorder_; }
  StepTranscript* transcript() { return transcript_ ? &*transcript_ : nullptr; }
  const StepTranscript* transcript() const { return transcript_ ? &*transcript_ : nullptr; }
  int world() const { return options_.cluster.nodes; }

 private:
  void body();
  // Whether the lesson shows message `m` (not a section's; stepped: as its sender did when
  // it sent it, a record `take` consumes).
  bool shows(const sim::StepInfo& m, bool take);

  Options options_;
  DataCache data_;
  sim::SimControl own_control_;
  sim::SimControl* control_;
  sim::Stepper* stepper_;
  Recorder recorder_;
  EventFanout events_;
  std::optional<StepTranscript> transcript_;
  std::mutex step_mutex_;  // a step and its report, or the transcript's end
  mutable std::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::string error_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace dsgd::lessons
