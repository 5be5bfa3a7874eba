#include "cli/classroom_lesson.h"

#include <atomic>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "cli/node_command.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "lessons/lesson.h"
#include "lessons/log_item_json.h"
#include "lessons/readme.h"
#include "lessons/runner.h"
#include "lessons/transcript.h"
#include "sim/classroom_client.h"
#include "sim/control.h"
#include "sim/monitor_sink.h"
#include "sim/node_process.h"
#include "sim/rendezvous.h"

namespace dsgd::cli {

namespace {

using lessons::LogItem;

ClassroomRankState wire_state(const sim::LocalStepState& s, int run, int rank) {
  ClassroomRankState out{.run = run,
                         .rank = rank,
                         .attached = s.attached,
                         .busy = s.busy,
                         .sent = s.sent,
                         .received = s.received,
                         .released = s.released};
  if (s.next)
    out.next = ClassroomPending{.source = s.next->source,
                                .dest = s.next->dest,
                                .tag = s.next->tag,
                                .seq = s.next->seq,
                                .count = s.next->count,
                                .model_s = s.next->model_s,
                                .net_s = s.next->net_s,
                                .preview = s.next->preview};
  return out;
}

// While the lesson runs: tells the teacher where this rank stands whenever that changes, and
// does what the teacher's window says (release a message, step or run on). Without a
// teacher the lesson runs on by itself.
class StepAgent {
 public:
  StepAgent(sim::ClassroomClient& client, sim::SimControl& control, int run, int rank)
      : client_(client), control_(control), run_(run), rank_(rank) {
    thread_ = std::thread([this] { loop(); });
  }
  ~StepAgent() {
    stop_ = true;
    thread_.join();
  }
  StepAgent(const StepAgent&) = delete;
  StepAgent& operator=(const StepAgent&) = delete;

 private:
  void loop() {
    std::optional<ClassroomRankState> told;
    for (bool last = false; !last;) {
      last = stop_.load();  // one report more once the run has ended: its final counts
      const ClassroomRankState now = wire_state(control_.local_state(), run_, rank_);
      if (now != told) client_.send(classroom_state_line(now)), told = now;
      if (const std::optional<ClassroomMessage> m =
              client_.poll(Clock::now() + std::chrono::milliseconds(2)))
        take(*m);
      else if (client_.closed() && control_.step_mode())
        control_.set_step_mode(false);
    }
  }
  void take(const ClassroomMessage& m) {
    if (m.release && m.release->run == run_)
      control_.release(m.release->source, m.release->seq, m.release->net_s);
    if (m.pace && m.pace->run == run_) control_.set_step_mode(m.pace->step);
  }

  sim::ClassroomClient& client_;
  sim::SimControl& control_;
  const int run_, rank_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// This rank's part of the lesson on the laptop's terminal, as it is recorded.
void print_item(int rank, const LogItem& item, const lessons::LessonText& text,
                lessons::Lang lang) {
  switch (item.kind) {
    case LogItem::Kind::section:  // an empty id: a group of lines ends (next_group), no text
      if (!item.text.empty()) fmt::print("\n{}\n", text.section(item.text));
      break;
    case LogItem::Kind::print:
      fmt::print("{}{}\n", lessons::rank_prefix(rank, lang), item.text);
      break;
    case LogItem::Kind::send:
      if (item.shown)
        fmt::print("{}\n", lessons::message_line(rank, item.peer, item.tag, item.bytes,
                                                 item.preview, lang));
      break;
    case LogItem::Kind::recv:
      return;
    default:
      fmt::print("{}\n", item.text);
  }
  std::fflush(stdout);
}

// What every laptop of the run must agree on: the lesson, its language and seed.
uint64_t lesson_hash(const ClassroomStart& start, const lessons::LessonSettings& settings) {
  Fnv1a h;
  h.u64(static_cast<uint64_t>(start.lesson));
  h.bytes(start.lang.data(), start.lang.size());
  h.u64(settings.seed);
  return h.value();
}

sim::NodeProcessOptions process_of(const NodeFlags& node, uint64_t run_hash) {
  return {.rank = node.rank,
          .rendezvous = sim::parse_endpoint(node.rendezvous, "the teacher's rendezvous"),
          .listen = listen_address(node.listen),
          .token = node.token,
          .run_hash = run_hash};
}

}  // namespace

void run_classroom_lesson(const NodeFlags& node, const ClassroomStart& start,
                          sim::ClassroomClient& client) {
  const lessons::LessonInfo info = lessons::find_lesson(start.lesson);
  if (start.world < info.min_nodes || start.world > info.max_nodes)
    throw UsageError(fmt::format("lesson {} runs on {} to {} ranks, not {}", info.number,
                                 info.min_nodes, info.max_nodes, start.world));
  lessons::DataCache data;
  lessons::LessonSettings settings{
      .lang = start.lang == "zh" ? lessons::Lang::zh : lessons::Lang::en, .data = &data};
  const lessons::LessonText text = lessons::load_lesson_text(info, settings.lang);
  fmt::print("{}\n\n{}\n", text.title, text.intro);
  lessons::Recorder recorder(settings.lang);
  recorder.set_live([&](int rank, const LogItem& item) {
    client.send(classroom_item_line(
        {.run = start.run, .rank = rank, .item_json = lessons::log_item_json(item)}));
    print_item(rank, item, text, settings.lang);
  });
  const sim::RunSpec& spec = *node.given_run;
  sim::ClusterOptions options{spec.cluster};
  const std::unique_ptr<sim::MonitorSink> monitor = sim::make_monitor(spec, node.name, node.token);
  EventFanout events;  // the transcript's, and the window's views
  events.add(&recorder);
  events.add(monitor.get());
  options.events = &events;
  sim::SimControl control;
  control.set_step_mode(start.step);
  options.control = &control;
  {
    StepAgent agent(client, control, start.run, start.rank);
    sim::run_node_process(process_of(node, lesson_hash(start, settings)), options,
                          [&](Communicator& comm) {
                            lessons::run_lesson_rank(comm, info, recorder, settings, false);
                          });
  }
  if (monitor) monitor->finish();
}

}  // namespace dsgd::cli
