#include "gui/model/class_lesson.h"

#include <chrono>

#include "core/errors.h"
#include "gui/model/lesson_session.h"
#include "lessons/log_item_json.h"
#include "lessons/transcript_text.h"
#include "sim/control.h"

namespace dsgd::gui {

ClassLesson::ClassLesson(Classroom& room, const lessons::LessonInfo& info, lessons::Lang lang,
                         int world, int run, bool step)
    : room_(room),
      info_(info),
      lang_(lang),
      text_(lessons::load_lesson_text(info, lang)),
      world_(world),
      run_(run),
      step_(step),
      ranks_(static_cast<size_t>(world)),
      recorder_(std::make_unique<lessons::Recorder>(lang)),
      transcript_(std::make_unique<lessons::StepTranscript>(world, text_,
                                                            lessons::StepTranscript::Pace::free)) {
  recorder_->set_live(
      [this](int rank, const lessons::LogItem& item) { transcript_->add(rank, item); });
  room_.set_run_lines([this](const ClassroomMessage& m) { take(m); });
}

ClassLesson::~ClassLesson() {
  room_.set_run_lines(nullptr);  // after this no call of take() is under way or comes
}

void ClassLesson::take(const ClassroomMessage& m) {
  if (m.item && m.item->run == run_ && m.item->rank >= 0 && m.item->rank < world_) {
    try {
      recorder_->add(m.item->rank, lessons::log_item_from_json(m.item->item_json));
    } catch (const DataError&) {
      // Not an item this dsgd writes: the lesson's transcript goes without it.
    }
  }
  if (m.state && m.state->run == run_ && m.state->rank >= 0 && m.state->rank < world_) {
    std::lock_guard lock(mutex_);
    Rank& r = ranks_[static_cast<size_t>(m.state->rank)];
    r.state = *m.state;
    r.started = r.started || m.state->attached || m.state->sent + m.state->received > 0;
  }
}

// Every rank has run and is blocked or done, has taken every release sent to it, and every
// frame sent has arrived: only then is the set of held messages complete.
bool ClassLesson::quiet_locked() const {
  uint64_t sent = 0, received = 0;
  for (const Rank& r : ranks_) {
    if (!r.started || !r.state || r.state->released != r.releases) return false;
    if (r.state->attached && r.state->busy) return false;
    sent += r.state->sent;
    received += r.state->received;
  }
  return sent == received;
}

std::optional<ClassLesson::Delivery> ClassLesson::step() {
  Delivery d;
  int owner = -1;
  {
    std::lock_guard lock(mutex_);
    if (!quiet_locked()) return std::nullopt;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const std::optional<ClassroomPending>& next = ranks_[r].state->next;
      if (next && (owner < 0 || sim::steps_before(*next, d.message)))
        d.message = *next, owner = int(r);
    }
    if (owner < 0) return std::nullopt;
    Rank& r = ranks_[static_cast<size_t>(owner)];
    ++r.releases;
    r.state->next.reset();
  }
  const ClassroomPending& m = d.message;
  // The sender's item came before its count of the frame, on the same connection: known.
  d.shown = recorder_->take_shown(m.source, m.dest, m.tag);
  room_.send_to_rank(owner, classroom_release_line(
                                {.run = run_, .source = m.source, .seq = m.seq, .net_s = m.net_s}));
  return d;
}

bool ClassLesson::apply(const Command& c) {
  switch (c.kind) {
    case CommandKind::step_message:
      if (!step_) set_pace(true);
      ++pending_steps_;
      return true;
    case CommandKind::play:
      set_pace(false);
      pending_steps_ = 0;
      return true;
    case CommandKind::pause:
      set_pace(true);
      return true;
    case CommandKind::set_step_mode:
      set_pace(c.flag);
      return true;
    default:
      return false;
  }
}

void ClassLesson::set_pace(bool step) {
  step_ = step;
  room_.send_to_run(classroom_pace_line({.run = run_, .step = step}));
}

void ClassLesson::poll() {
  if (pending_steps_ == 0) return;
  if (finished()) {
    pending_steps_ = 0;
    return;
  }
  // Each step waits for the laptops' word on where they stand: a few per frame at most.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(8);
  while (pending_steps_ > 0 && std::chrono::steady_clock::now() < until) {
    const std::optional<Delivery> delivery = step();
    if (!delivery) return;
    if (delivery->shown) --pending_steps_;
  }
}

bool ClassLesson::finished() const {
  {
    std::lock_guard lock(mutex_);
    bool all_ended = true;
    for (const Rank& r : ranks_)
      all_ended = all_ended && r.started && r.state && !r.state->attached;
    if (all_ended) return true;
  }
  const ClassroomState c = room_.state();
  return c.run == run_ && !c.running();  // every laptop said how it ended, or left
}

LessonView ClassLesson::view() const {
  const bool done = finished();
  if (done) transcript_->finish();
  LessonView v = lesson_view(info_, lang_, text_, world_, *transcript_);
  v.running = !done;
  v.pending_steps = pending_steps_;
  return v;
}

std::string ClassLesson::take_transcript() {
  return lessons::finished_transcript(*recorder_, text_, world_, lang_);
}

}  // namespace dsgd::gui
