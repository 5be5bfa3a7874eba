// Sections: [catalog] [run] [session].
#include "gui/model/lesson_session.h"

#include "sim/run_spec.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include <fmt/format.h>

#include "core/errors.h"
#include "lessons/live_lesson.h"
#include "sim/cluster.h"

namespace dsgd::gui {

// ---------------------------------------------------------------------------------------
// [catalog]
// ---------------------------------------------------------------------------------------

std::vector<LessonEntry> lesson_entries() {
  std::vector<LessonEntry> out;
  for (const lessons::LessonInfo& info : lessons::lesson_catalog()) {
    LessonEntry e{.number = info.number,
                  .nodes = info.default_nodes,
                  .min_nodes = info.min_nodes,
                  .max_nodes = info.max_nodes};
    const auto title = [&](lessons::Lang lang) {
      try {
        return lessons::load_lesson_text(info, lang).title;
      } catch (const std::exception&) {
        return fmt::format("Lesson {}", info.number);
      }
    };
    e.title_en = title(lessons::Lang::en);
    e.title_zh = title(lessons::Lang::zh);
    out.push_back(std::move(e));
  }
  return out;
}

std::string lesson_font_text() {
  std::string text = "课程语言中文打开逐条消息播放暂停节共运行结束秩";
  for (const lessons::LessonInfo& info : lessons::lesson_catalog()) {
    try {
      const lessons::LessonText t = lessons::load_lesson_text(info, lessons::Lang::zh);
      text += t.title + t.intro;
      for (const auto& [id, body] : t.sections)
        text += body;
    } catch (const std::exception&) {
    }
  }
  return text;
}

// ---------------------------------------------------------------------------------------
// [run]
// ---------------------------------------------------------------------------------------

namespace {

// A printed line starts with its rank ("[rank 2] ", lessons::rank_prefix) in `lang`.
LessonLine to_lesson_line(const lessons::TranscriptLine& line, lessons::Lang lang) {
  using Kind = lessons::TranscriptLine::Kind;
  const LessonLine::Kind kind = line.kind == Kind::section ? LessonLine::Kind::section
                                : line.kind == Kind::print ? LessonLine::Kind::print
                                : line.kind == Kind::message || line.kind == Kind::call
                                    ? LessonLine::Kind::message
                                    : LessonLine::Kind::say;
  if (kind != LessonLine::Kind::print) return {.kind = kind, .rank = line.rank, .text = line.text};
  return {
      .kind = kind, .rank = line.rank, .text = lessons::rank_prefix(line.rank, lang) + line.text};
}

}  // namespace

LessonView lesson_view(const lessons::LessonInfo& info, lessons::Lang lang,
                       const lessons::LessonText& text, int world,
                       const lessons::StepTranscript& transcript) {
  LessonView v;
  v.active = true;
  v.number = info.number;
  v.zh = lang == lessons::Lang::zh;
  v.title = text.title;
  v.intro = text.intro;
  v.world = world;
  v.sections_total = static_cast<int>(text.sections.size());
  for (const lessons::TranscriptLine& line : transcript.lines())
    v.lines.push_back(to_lesson_line(line, lang));
  v.sections_shown =
      static_cast<int>(std::count_if(v.lines.begin(), v.lines.end(), [](const LessonLine& l) {
        return l.kind == LessonLine::Kind::section;
      }));
  return v;
}

struct LessonSession::Run {
  Run(const lessons::LessonInfo& i, lessons::Lang l, lessons::LessonText t, int w)
      : info(i), lang(l), text(std::move(t)), world(w), events(control.clock(), 400000) {}

  lessons::LessonInfo info;
  lessons::Lang lang;
  lessons::LessonText text;
  int world;
  sim::SimControl control;
  EventRecorder events;  // for the views, with the network clock's time
  std::vector<LinkView> links;
  sim::ClusterOptions cluster;  // its network, described in the window's language by captions
  std::unique_ptr<lessons::LiveLesson> lesson;
};

// ---------------------------------------------------------------------------------------
// [session]
// ---------------------------------------------------------------------------------------

LessonSession::LessonSession() = default;
LessonSession::~LessonSession() {
  stop();
}

void LessonSession::start(int number, lessons::Lang lang, double speed) {
  const lessons::LessonInfo info = lessons::find_lesson(number);
  lessons::LessonText text = lessons::load_lesson_text(info, lang);
  stop();
  // The links of the GUI's default run: slow enough to watch a message travel.
  SimSettings sim;
  sim.run.cluster.nodes = info.default_nodes;
  auto run = std::make_unique<Run>(info, lang, text, info.default_nodes);
  sim::ClusterOptions cluster = cluster_options(sim);
  cluster.events = &run->events;
  cluster.control = &run->control;
  run->links = link_views(sim);
  run->cluster = cluster;
  lessons::LessonSettings settings;
  settings.lang = lang;
  run->lesson = std::make_unique<lessons::LiveLesson>(
      lessons::LiveLesson::Options{.info = info,
                                   .text = std::move(text),
                                   .settings = settings,
                                   .cluster = cluster,
                                   .pace = lessons::StepTranscript::Pace::free});
  run->control.set_speed(std::clamp(speed, 0.001, 1000.0));
  run->control.set_step_mode(true);
  pending_message_steps_ = 0;
  run_ = std::move(run);
  run_->lesson->start();
}

// A lesson has no stop button of its own: it runs to its end at full speed, which for the
// longest (training) lessons takes a few seconds.
void LessonSession::stop() {
  if (!run_) return;
  run_->control.set_step_mode(false);
  run_->control.set_speed(1000);
  run_->control.resume();
  run_->lesson->join();
  run_.reset();
  pending_message_steps_ = 0;
}

bool LessonSession::apply(const Command& c) {
  if (!run_) return false;
  sim::SimControl& control = run_->control;
  switch (c.kind) {
    case CommandKind::play:
      control.set_step_mode(false);
      control.resume();
      pending_message_steps_ = 0;
      return true;
    case CommandKind::pause:
      control.pause();
      return true;
    case CommandKind::set_speed:
      control.set_speed(std::clamp(c.value, 0.001, 1000.0));
      return true;
    case CommandKind::set_step_mode:
      control.set_step_mode(c.flag);
      if (c.flag) control.resume();
      return true;
    case CommandKind::step_message:
      if (!control.step_mode()) control.set_step_mode(true);
      control.resume();
      ++pending_message_steps_;
      return true;
    default:
      return false;
  }
}

void LessonSession::poll() {
  if (!run_ || pending_message_steps_ == 0) return;
  if (run_->lesson->finished()) {
    pending_message_steps_ = 0;
    return;
  }
  // Deliver until a message the lesson shows has gone through; silent ones (a training
  // step's) pass on the way. At most a few milliseconds per frame; the rest next frame.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(8);
  while (pending_message_steps_ > 0 && std::chrono::steady_clock::now() < until) {
    const auto delivery = run_->lesson->step(std::chrono::milliseconds(2));
    if (!delivery) return;  // every rank not blocked yet (or the run is ending): next frame
    if (delivery->shown) --pending_message_steps_;
  }
}

bool LessonSession::running() const {
  return run_ && !run_->lesson->finished();
}

LessonView LessonSession::view() const {
  if (!run_) return {};
  LessonView v =
      lesson_view(run_->info, run_->lang, run_->text, run_->world, *run_->lesson->transcript());
  v.running = !run_->lesson->finished();
  v.pending_steps = pending_message_steps_;
  v.error = run_->lesson->error();
  return v;
}

Snapshot LessonSession::snapshot(const ViewSettings& view) const {
  if (!run_) {
    Snapshot s;
    s.view = view;
    return s;
  }
  SnapshotInputs in{.world = run_->world,
                    .time_base = TimeBase::wall,
                    .now_s = run_->control.clock().now_s(),
                    .links = run_->links,
                    .algorithm = Algorithm::ring};
  Snapshot s = run_->events.snapshot(in, 60000, run_->lesson->finished());
  s.view = view;
  s.lesson = this->view();
  s.error = s.lesson.error;
  ControlState& c = s.controls;
  c.live = true;
  c.running = !run_->lesson->finished();
  c.paused = run_->control.clock().paused();
  c.step_mode = run_->control.step_mode();
  c.speed = run_->control.clock().speed();
  c.settings = view.draft;
  c.status = !s.error.empty()           ? "failed"
             : run_->lesson->finished() ? "lesson finished"
             : c.paused                 ? "paused"
             : c.step_mode              ? "step mode"
                                        : "running";
  s.title = run_->text.title;  // "Lesson 4 · Collectives", in the lesson's language
  s.network = network_caption(run_->cluster);
  return s;
}

}  // namespace dsgd::gui
