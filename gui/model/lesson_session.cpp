// Sections: [catalog] [transcript] [run thread] [session].
#include "gui/model/lesson_session.h"

#include "sim/run_spec.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include <fmt/format.h>

#include "core/errors.h"
#include "lessons/runner.h"
#include "sim/cluster.h"

namespace dsgd::gui {

using lessons::LogItem;

// ---------------------------------------------------------------------------------------
// [catalog]
// ---------------------------------------------------------------------------------------

std::vector<LessonEntry> lesson_entries() {
  std::vector<LessonEntry> out;
  for (const lessons::LessonInfo& info : lessons::lesson_catalog()) {
    LessonEntry e{.number = info.number, .nodes = info.default_nodes};
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
// [transcript]
// ---------------------------------------------------------------------------------------

LessonTranscript::LessonTranscript(int world, lessons::LessonText text)
    : world_(world), text_(std::move(text)), queues_(world), reached_(world, 0) {}

void LessonTranscript::add(int rank, const LogItem& item) {
  if (rank < 0 || rank >= world_) return;
  std::lock_guard lock(mutex_);
  queues_[rank].push_back(item);
  drain_locked();
}

void LessonTranscript::finish() {
  std::lock_guard lock(mutex_);
  finished_ = true;
  drain_locked();
}

std::vector<LessonLine> LessonTranscript::lines() const {
  std::lock_guard lock(mutex_);
  return lines_;
}

size_t LessonTranscript::line_count() const {
  std::lock_guard lock(mutex_);
  return lines_.size();
}

int LessonTranscript::sections_shown() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(std::count_if(lines_.begin(), lines_.end(), [](const LessonLine& l) {
    return l.kind == LessonLine::Kind::section;
  }));
}

// Section k is a barrier: a rank's items after its k-th section come out only once every
// rank has reached section k (a finished run's ranks with nothing left count as past every
// section); a receive comes out after its send, as the message line.
void LessonTranscript::drain_locked() {
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < world_; ++r) {
      auto& q = queues_[r];
      while (!q.empty() && reached_[r] <= shown_sections_) {
        LogItem& item = q.front();
        if (item.kind == LogItem::Kind::section) {
          if (static_cast<int>(section_ids_.size()) == reached_[r])
            section_ids_.push_back(item.text);
          ++reached_[r];
        } else if (item.kind == LogItem::Kind::recv && item.peer != r) {
          auto it = sent_.find({item.peer, r, item.tag});
          if (it == sent_.end() || it->second.empty()) break;  // its send comes out first
          const Sent sent = std::move(it->second.front());
          it->second.pop_front();
          if (sent.shown)
            lines_.push_back(
                {.kind = LessonLine::Kind::message,
                 .rank = item.peer,
                 .text = lessons::message_line(item.peer, r, item.tag, sent.bytes, sent.preview)});
        } else {
          emit_locked(r, item);
        }
        q.pop_front();
        progress = true;
      }
    }
    // The next section comes out once every rank has reached it.
    const int next = shown_sections_;
    if (next >= static_cast<int>(section_ids_.size())) continue;
    bool all = true;
    for (int r = 0; r < world_; ++r)
      all &= reached_[r] > next || (finished_ && queues_[r].empty());
    if (!all) continue;
    const std::string& id = section_ids_[next];
    if (!id.empty())
      lines_.push_back({.kind = LessonLine::Kind::section, .text = text_.section(id)});
    ++shown_sections_;
    progress = true;
  }
}

void LessonTranscript::emit_locked(int rank, const LogItem& item) {
  switch (item.kind) {
    case LogItem::Kind::say:
      lines_.push_back({.kind = LessonLine::Kind::say, .rank = rank, .text = item.text});
      break;
    case LogItem::Kind::print:
      lines_.push_back({.kind = LessonLine::Kind::print, .rank = rank, .text = item.text});
      break;
    case LogItem::Kind::send:
      sent_[{rank, item.peer, item.tag}].push_back(
          {.shown = item.shown, .bytes = item.bytes, .preview = item.preview});
      break;
    default:  // a rank's receive from itself shows nothing
      break;
  }
}

// ---------------------------------------------------------------------------------------
// [run thread]
// ---------------------------------------------------------------------------------------

struct LessonSession::Run {
  Run(const lessons::LessonInfo& i, lessons::Lang l, lessons::LessonText t, int w)
      : info(i),
        lang(l),
        text(t),
        world(w),
        events(control.clock(), 400000),
        transcript(w, std::move(t)) {}

  lessons::LessonInfo info;
  lessons::Lang lang;
  lessons::LessonText text;
  int world;
  sim::SimControl control;
  EventRecorder events;  // for the views, with the network clock's time
  lessons::Recorder recorder;
  EventFanout fanout;
  LessonTranscript transcript;
  lessons::DataCache data;
  lessons::LessonSettings settings;
  std::vector<LinkView> links;
  sim::ClusterOptions options;
  std::atomic<bool> finished{false};
  mutable std::mutex mutex;  // error
  std::string error;
  std::thread thread;

  void body() {
    try {
      sim::run_cluster(options, [&](Communicator& comm) {
        lessons::run_lesson_rank(comm, info, recorder, settings, false);
      });
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      error = e.what();
    }
    transcript.finish();
    finished = true;
  }
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
  run->options = cluster_options(sim);
  run->links = link_views(sim);
  run->fanout.add(&run->recorder);
  run->fanout.add(&run->events);
  run->options.events = &run->fanout;
  run->options.control = &run->control;
  run->settings.lang = lang;
  run->settings.data = &run->data;
  run->recorder.set_live(
      [t = &run->transcript](int rank, const LogItem& item) { t->add(rank, item); });
  run->control.set_speed(std::clamp(speed, 0.001, 1000.0));
  run->control.set_step_mode(true);
  pending_message_steps_ = 0;
  run_ = std::move(run);
  run_->thread = std::thread([r = run_.get()] { r->body(); });
}

// A lesson has no stop button of its own: it runs to its end at full speed, which for the
// longest (training) lessons takes a few seconds.
void LessonSession::stop() {
  if (!run_) return;
  run_->control.set_step_mode(false);
  run_->control.set_speed(1000);
  run_->control.resume();
  if (run_->thread.joinable()) run_->thread.join();
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
  if (run_->finished) {
    pending_message_steps_ = 0;
    return;
  }
  // Deliver until a message the lesson shows has gone through; silent ones (a training
  // step's) pass on the way. At most a few milliseconds per frame; the rest next frame.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(8);
  while (pending_message_steps_ > 0 && std::chrono::steady_clock::now() < until) {
    const auto m = run_->control.step(std::chrono::milliseconds(2));
    if (!m) return;  // every rank not blocked yet (or the run is ending): next frame
    if (m->tag == lessons::kSectionTag) continue;
    if (run_->recorder.shows_messages(m->source)) --pending_message_steps_;
  }
}

bool LessonSession::running() const {
  return run_ && !run_->finished;
}

LessonView LessonSession::view() const {
  LessonView v;
  if (!run_) return v;
  v.active = true;
  v.number = run_->info.number;
  v.zh = run_->lang == lessons::Lang::zh;
  v.title = run_->text.title;
  v.intro = run_->text.intro;
  v.world = run_->world;
  v.sections_total = static_cast<int>(run_->text.sections.size());
  v.lines = run_->transcript.lines();
  v.sections_shown =
      static_cast<int>(std::count_if(v.lines.begin(), v.lines.end(), [](const LessonLine& l) {
        return l.kind == LessonLine::Kind::section;
      }));
  v.running = !run_->finished;
  v.pending_steps = pending_message_steps_;
  std::lock_guard lock(run_->mutex);
  v.error = run_->error;
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
  Snapshot s = build_snapshot(run_->events.tail(60000), in);
  s.view = view;
  s.lesson = this->view();
  s.error = s.lesson.error;
  ControlState& c = s.controls;
  c.live = true;
  c.running = !run_->finished;
  c.paused = run_->control.clock().paused();
  c.step_mode = run_->control.step_mode();
  c.speed = run_->control.clock().speed();
  c.settings = view.draft;
  const bool zh = s.lesson.zh;
  c.status = !s.error.empty() ? "failed"
             : run_->finished ? (zh ? "本课结束 (finished)" : "lesson finished")
             : c.paused       ? "paused"
             : c.step_mode    ? (zh ? "逐条消息 (step mode)" : "step mode")
                              : "running";
  s.title = fmt::format("lesson {} - {}", run_->info.number, run_->text.title);
  s.network = sim::describe_network(run_->options);
  return s;
}

}  // namespace dsgd::gui
