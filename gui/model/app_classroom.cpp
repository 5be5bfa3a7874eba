// GuiApp in a classroom (dsgd-gui --classroom): the class's panel, and its runs, each
// watched as it happens on the port after the classroom's.
#include <algorithm>

#include <fmt/format.h>

#include "core/errors.h"
#include "gui/model/app.h"
#include "gui/model/listen_socket.h"
#include "gui/model/ui_text.h"
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
  classroom_ = std::move(classroom);
  classroom_join_ = classroom_ ? join_command(*classroom_) : "";
}

// A training run of the controls' settings on every student waiting. The watch of the
// last run closes first: the new one listens on the same port, before any laptop starts.
void GuiApp::start_class_run(int lesson) {
  if (!classroom_) return;
  try {
    const int world = classroom_->state().waiting();
    if (world < 1) throw UsageError(tr("no student is waiting: each joins with the command shown"));
    sim::RunSpec run = view_.draft.run;
    run.cluster.nodes = world;
    run.outputs = {};
    // dsgd train's deadline, not the window's hour (which lets a teacher pause a run here): a
    // laptop that sleeps or goes away ends the run for the others within it.
    run.cluster.timeout = std::min(run.cluster.timeout, sim::RunSpec{}.cluster.timeout);
    watch_.reset();
    open_watch(std::make_unique<Watch>(
        fmt::format("{}:{}", classroom_->host(), classroom_->monitor_port()), classroom_->token()));
    classroom_->start(world, sim::run_spec_json(run), lesson, view_.chinese ? "zh" : "en");
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

ClassroomView GuiApp::classroom_view() const {
  return {.active = true, .join_command = classroom_join_, .state = classroom_->state()};
}

}  // namespace dsgd::gui
