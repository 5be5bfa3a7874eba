#include "lessons/live_lesson.h"

#include <utility>

#include "lessons/runner.h"

namespace dsgd::lessons {

LiveLesson::LiveLesson(Options options)
    : options_(std::move(options)),
      control_(options_.cluster.control ? options_.cluster.control : &own_control_),
      stepper_(options_.stepper ? options_.stepper : control_),
      recorder_(options_.settings.lang) {
  LessonSettings& s = options_.settings;
  if (!s.data) s.data = &data_;
  events_.add(&recorder_);
  events_.add(options_.cluster.events);
  options_.cluster.events = &events_;
  options_.cluster.control = control_;
  if (!options_.pace) return;
  transcript_.emplace(world(), options_.text, *options_.pace);
  if (*options_.pace == StepTranscript::Pace::stepped) {
    s.sync_sections = true;
    control_->set_step_mode(true);
  }
}

LiveLesson::~LiveLesson() {
  join();
}

void LiveLesson::start() {
  if (transcript_)
    recorder_.set_live([t = &*transcript_](int rank, const LogItem& item) { t->add(rank, item); });
  thread_ = std::thread([this] { body(); });
}

void LiveLesson::body() {
  try {
    const sim::NodeFunction rank = [&](Communicator& comm) {
      run_lesson_rank(comm, options_.info, recorder_, options_.settings, false);
    };
    if (options_.run)
      options_.run(options_.cluster, rank);
    else
      sim::run_cluster(options_.cluster, rank);
  } catch (const std::exception& e) {
    std::lock_guard lock(failure_mutex_);
    failure_ = std::current_exception();
    error_ = e.what();
  } catch (...) {
    std::lock_guard lock(failure_mutex_);
    failure_ = std::current_exception();
    error_ = "unknown exception";
  }
  if (transcript_) {
    std::lock_guard lock(step_mutex_);  // after the report of the last message stepped
    transcript_->finish();
  }
  finished_ = true;
}

void LiveLesson::join() {
  if (thread_.joinable()) thread_.join();
}

std::exception_ptr LiveLesson::failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

std::string LiveLesson::error() const {
  std::lock_guard lock(failure_mutex_);
  return error_;
}

std::optional<LiveLesson::Delivery> LiveLesson::step(std::chrono::milliseconds timeout) {
  std::lock_guard lock(step_mutex_);
  std::optional<sim::StepInfo> m = stepper_->step(timeout);
  if (!m) return std::nullopt;
  const bool shown = shows(*m, true);
  if (m->tag != kSectionTag && options_.pace == StepTranscript::Pace::stepped)
    transcript_->delivered(*m, shown);
  return Delivery{*m, shown};
}

bool LiveLesson::shows(const sim::StepInfo& m, bool take) {
  if (m.tag == kSectionTag) return false;
  if (options_.pace != StepTranscript::Pace::stepped) return recorder_.shows_messages(m.source);
  // Every message is stepped: each is taken in turn, shown as its sender was when it sent it.
  return take ? recorder_.take_shown(m.source, m.dest, m.tag)
              : recorder_.next_shown(m.source, m.dest, m.tag);
}

std::optional<LiveLesson::Delivery> LiveLesson::peek(std::chrono::milliseconds timeout) {
  std::lock_guard lock(step_mutex_);
  std::optional<sim::StepInfo> m = stepper_->peek(timeout);
  if (!m) return std::nullopt;
  return Delivery{*m, shows(*m, false)};
}

}  // namespace dsgd::lessons
