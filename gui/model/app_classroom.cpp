// GuiApp in a classroom (dsgd-gui --classroom): the class's panel, and its runs, each
// watched as it happens on the port after the classroom's.
#include <algorithm>

#include <fmt/format.h>

#include "core/errors.h"
#include "gui/model/app.h"
#include "gui/model/listen_socket.h"
#include "gui/model/ui_text.h"
#include "lessons/lesson.h"
#include "sim/run_spec.h"

namespace dsgd::gui {

namespace {

// What a student types: this machine's first address others can reach when the class
// listens on every address. Made once (getifaddrs), not each frame.
std::string join_command(const Classroom& classroom) {
  std::string host = classroom.host();
  if (host == "0.0.0.0") {
    const std::vector<std::string> addresses = machine_addresses();
    host = addresses.empty() ? "127.0.0.1" : addresses.front();
  }
  return fmt::format("dsgd node --rendezvous {}:{} --token {} --name NAME", host, classroom.port(),
                     classroom.token());
}

}  // namespace

void GuiApp::open_classroom(std::unique_ptr<Classroom> classroom) {
  if (session_) session_->stop();
  if (lesson_) lesson_->stop();
  replay_.reset();
  error_.clear();
  class_lesson_.reset();
  classroom_ = std::move(classroom);
  classroom_join_ = classroom_ ? join_command(*classroom_) : "";
}

// A run on every student waiting (a lesson: as many as it runs on), of the controls'
// settings: a training run, or lesson `lesson` on their links, stepped from here. The watch
// of the last run closes first: the new one listens on the same port, before any laptop
// starts.
void GuiApp::start_class_run(int lesson, bool chinese) {
  if (!classroom_) return;
  try {
    int world = classroom_->state().waiting();
    if (world < 1) throw UsageError(tr("no student is waiting: each joins with the command shown"));
    std::optional<lessons::LessonInfo> info;
    if (lesson != 0) {
      info = lessons::find_lesson(lesson);
      if (world < info->min_nodes)
        throw UsageError(fmt::format(fmt::runtime(tr("lesson {} needs {}; {} waiting")), lesson,
                                     laptops(info->min_nodes), world));
      world = std::min(world, info->max_nodes);
    }
    sim::RunSpec run = view_.draft.run;
    run.cluster.nodes = world;
    run.outputs = {};
    // Training: dsgd train's deadline, not the window's hour (which lets a teacher pause a
    // run here): a laptop that sleeps or goes away ends the run for the others within it. A
    // lesson waits for the teacher's steps, as `dsgd lesson --step` waits for Enter: an hour.
    run.cluster.timeout = info ? std::chrono::milliseconds(std::chrono::hours(1))
                               : std::min(run.cluster.timeout, sim::RunSpec{}.cluster.timeout);
    watch_.reset();
    class_lesson_.reset();
    open_watch(std::make_unique<Watch>(
        fmt::format("{}:{}", classroom_->host(), classroom_->monitor_port()), classroom_->token()));
    const lessons::Lang lang = chinese ? lessons::Lang::zh : lessons::Lang::en;
    if (info)  // listening for the laptops' lines before they start
      class_lesson_ = std::make_unique<ClassLesson>(*classroom_, *info, lang, world,
                                                    classroom_->state().run + 1, true);
    classroom_->start({.world = world,
                       .spec_json = sim::run_spec_json(run),
                       .lesson = lesson,
                       .lang = chinese ? "zh" : "en",
                       .step = info.has_value(),
                       .elastic = run.elastic.policy != sim::ElasticPolicy::none});
  } catch (const std::exception& e) {
    class_lesson_.reset();
    error_ = e.what();
  }
}

void GuiApp::add_to_class_run() {
  if (!classroom_) return;
  try {
    classroom_->add_to_run();
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

// The laptops' lesson in the lesson panel, stepped from it as a local one is; a laptop whose
// rank failed says why.
void GuiApp::show_class_lesson(Snapshot& s) const {
  const ClassLesson& l = *class_lesson_;
  s.lesson = l.view();
  for (const Student& st : classroom_->state().students)
    if (st.run == l.run() && !st.running && !st.outcome.empty() && st.outcome != "finished") {
      s.lesson.error = fmt::format("{}: {}", st.name, st.outcome);
      break;
    }
  ControlState& c = s.controls;
  c.step_mode = l.step_mode();
  c.running = s.lesson.running;
  c.status = !s.lesson.error.empty() ? "failed"
             : !s.lesson.running     ? "lesson finished"
             : c.step_mode           ? "step mode"
                                     : "running";
}

ClassroomView GuiApp::classroom_view() const {
  return {.active = true, .join_command = classroom_join_, .state = classroom_->state()};
}

}  // namespace dsgd::gui
