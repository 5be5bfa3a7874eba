#include "cli/lesson_command.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cli/backend.h"
#include "cli/exercise_report.h"
#include "cli/step_keys.h"
#include "core/errors.h"
#include "core/nn/blas.h"
#include "lessons/exercise.h"
#include "lessons/live_lesson.h"
#include "lessons/readme.h"
#include "lessons/runner.h"
#include "lessons/step_plan.h"
#include "lessons/transcript.h"
#include "lessons/transcript_text.h"
#include "sim/link_model.h"

namespace dsgd::cli {
namespace {

using lessons::Lang;
using lessons::LessonInfo;
using lessons::LessonText;
using lessons::LiveLesson;
using lessons::Recorder;

void put_text(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// Standard output, remembering how the text printed so far ends.
class Output {
 public:
  void put(const std::string& text) {
    if (text.empty()) return;
    put_text(text);
    tail_ += text;
    if (tail_.size() > 2) tail_.erase(0, tail_.size() - 2);
  }
  // Ends the text so far with exactly one blank line.
  void blank_line() {
    if (tail_ == "\n\n") return;
    put(tail_.ends_with("\n") ? "\n" : "\n\n");
  }

 private:
  std::string tail_ = "\n\n";  // the last two characters printed
};

int list_lessons(Lang lang) {
  const bool zh = lang == Lang::zh;
  put_text(zh ? "课程（dsgd lesson N [--step] [--lang zh]）：\n"
              : "Lessons (dsgd lesson N [--step] [--lang en|zh]):\n");
  for (const LessonInfo& info : lessons::lesson_catalog()) {
    const LessonText text = lessons::load_lesson_text(info, lang);
    const std::string ranks =
        zh ? fmt::format("{} 个秩", info.default_nodes)
           : fmt::format("{} rank{}", info.default_nodes, info.default_nodes == 1 ? "" : "s");
    put_text(fmt::format("  {:>2}  {}  ({}{})\n", info.number, text.title, ranks,
                         info.exercise ? (zh ? "，含练习 --check" : ", exercise: --check") : ""));
  }
  return kExitOk;
}

int parse_number(const std::string& which) {
  int n = 0;
  auto [ptr, ec] = std::from_chars(which.data(), which.data() + which.size(), n);
  if (ec != std::errc() || ptr != which.data() + which.size())
    throw UsageError(fmt::format(
        "lesson '{}': give a lesson number (dsgd lesson 2) or list (dsgd lesson list)", which));
  return n;
}

// A lesson's run: its own number of ranks; in --step mode, waiting for Enter must not make
// a blocked receive pass its deadline (at most an hour).
sim::RunSpec lesson_defaults(const LessonFlags& f, const LessonInfo& info) {
  sim::RunSpec d;
  d.cluster.nodes = info.default_nodes;
  if (f.step) d.cluster.timeout = std::chrono::hours(1);
  return d;
}

// A line of the live transcript as the terminal shows it.
void put_line(Output& out, const lessons::TranscriptLine& line, Lang lang) {
  using Kind = lessons::TranscriptLine::Kind;
  switch (line.kind) {
    case Kind::section:
      out.blank_line();
      out.put(line.text + "\n\n");
      break;
    case Kind::say:
      out.put(line.text + "\n");
      break;
    case Kind::print:
      out.put(lessons::rank_prefix(line.rank, lang) + line.text + "\n");
      break;
    case Kind::message:
    case Kind::call:
      out.put("  " + line.text + "\n");
      break;
  }
}

// What --step's pauses say, in the lesson's language: where the student is and the keys.
std::string step_prompt(Lang lang, const std::string& where) {
  return lang == Lang::zh ? fmt::format("—— {} · 回车：继续 · Ctrl-D：运行到结束 ——", where)
                          : fmt::format("-- {} · Enter: go on · Ctrl-D: run to the end --", where);
}

// Which of how many: "message 3 of 4" ("第 3 条消息（共 4 条）"), or "message 3 (count
// unknown)" when the plan has no count (the run ahead failed or is not done) or a smaller one.
struct Counted {
  const char* en;       // "message"
  const char* zh;       // "条消息"
  const char* zh_unit;  // "条"
};
std::string nth(const Counted& what, int k, std::optional<int> total, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (total && k <= *total)
    return zh ? fmt::format("第 {} {}（共 {} {}）", k, what.zh, *total, what.zh_unit)
              : fmt::format("{} {} of {}", what.en, k, *total);
  return zh ? fmt::format("第 {} {}（总数未知）", k, what.zh)
            : fmt::format("{} {} (count unknown)", what.en, k);
}

// What the step prompts count: the plan's figures, asked for at the first pause that needs
// them (the run ahead has had the student's reading time; at most 30 s more).
class StepCounter {
 public:
  explicit StepCounter(lessons::StepPlan& plan) : plan_(plan) {}
  std::optional<int> parts() { return get(&lessons::Recorder::Pauses::parts); }
  std::optional<int> messages() { return get(&lessons::Recorder::Pauses::messages); }
  std::optional<int> calls() { return get(&lessons::Recorder::Pauses::calls); }

 private:
  std::optional<int> get(int lessons::Recorder::Pauses::*field) {
    if (!asked_) {
      pauses_ = plan_.pauses(std::chrono::seconds(30));
      asked_ = true;
    }
    if (!pauses_) return std::nullopt;
    return (*pauses_).*field;
  }
  lessons::StepPlan& plan_;
  bool asked_ = false;
  std::optional<lessons::Recorder::Pauses> pauses_;
};

// --step: the output as it happens, each message as it is delivered; a pause (StepKeys)
// before each message the lesson shows, once every rank waits and what led to it is
// printed (a part's text, a question), before each call of a demo it tells (demo_run.h),
// and before each part after the first, so that a lesson whose messages are not shown
// (those that train) still goes a part at a time. Each pause says which of how many.
void step_through(LiveLesson& lesson, StepCounter& count, Output& out, StepKeys& keys, Lang lang) {
  const bool zh = lang == Lang::zh;
  size_t printed = 0, paused_at = 0;  // lines printed, and at the last pause
  int sections = 0, shown = 0, calls = 0;
  const auto pause = [&](const std::string& where) {
    keys.pause(step_prompt(lang, where));
    paused_at = printed;
  };
  auto print_new = [&] {
    for (const lessons::TranscriptLine& line : lesson.transcript()->lines(printed)) {
      // Before a part after the first; not again right after a pause.
      if (line.kind == lessons::TranscriptLine::Kind::section && sections++ > 0 &&
          printed != paused_at) {
        const std::string k = nth({"part", "部分", "部分"}, sections, count.parts(), lang);
        pause(zh ? "下一部分：" + k : "next: " + k);
      }
      if (line.kind == lessons::TranscriptLine::Kind::call) {
        const std::string k = nth({"call", "个调用", "个"}, ++calls, count.calls(), lang);
        pause(zh ? fmt::format("下一步：{}，秩 {}", k, line.rank)
                 : fmt::format("next: {}, rank {}", k, line.rank));
      }
      put_line(out, line, lang);
      ++printed;
    }
  };
  while (!lesson.finished()) {
    const auto next = lesson.peek(std::chrono::milliseconds(50));
    print_new();
    if (!next) continue;
    if (next->shown) {
      const sim::StepInfo& m = next->message;
      const std::string k = nth({"message", "条消息", "条"}, ++shown, count.messages(), lang);
      pause(zh ? fmt::format("下一条：{}，秩 {} -> 秩 {}", k, m.source, m.dest)
               : fmt::format("next: {}, rank {} -> rank {}", k, m.source, m.dest));
    }
    // The message just announced: every rank still waits, so it is the one delivered.
    while (!lesson.step(std::chrono::milliseconds(50)) && !lesson.finished()) {
    }
  }
  lesson.join();
  print_new();
}

void refuse_phantom(const sim::RunSpec& spec) {
  if (spec.phantom)
    throw UsageError(
        "--payload phantom: a lesson shows the values its messages carry; drop --payload");
}

// SimGrid's ranks, every message held by `gate` until a step lets it through.
LiveLesson::Runner stepped_on_simgrid(const sim::RunSpec& spec, sim::StepGate& gate) {
  return [&spec, &gate](const sim::ClusterOptions& options, const sim::NodeFunction& fn) {
    SimgridRun run = simgrid_run(spec);
    run.step = &gate;
    run_on_backend("simgrid", options, fn, {}, run);
  };
}

// Simulated nodes, or SimGrid's ranks stepped (their messages held by `gate`). The lesson
// runs in a thread of its own while this thread prints: in --auto mode the merged transcript
// as each section completes, in --step mode the output as it happens and each message as
// the step gate delivers it.
void run_live(const LessonFlags& f, const LessonInfo& info, const LessonText& text,
              const lessons::LessonSettings& settings) {
  const sim::RunSpec spec = sim::build_run_spec(f.run, lesson_defaults(f, info));
  refuse_phantom(spec);
  sim::ClusterOptions options{spec.cluster};
  const int world = options.nodes;
  if (world < info.min_nodes || world > info.max_nodes)
    throw UsageError(fmt::format("--nodes {}: lesson {} runs on {} to {} ranks", world, info.number,
                                 info.min_nodes, info.max_nodes));
  sim::StepGate gate;
  const bool simgrid = f.run.backend == "simgrid";
  LiveLesson lesson(
      {.info = info,
       .text = text,
       .settings = settings,
       .cluster = options,
       .pace = f.step ? std::optional(lessons::StepTranscript::Pace::stepped) : std::nullopt,
       .run = simgrid ? stepped_on_simgrid(spec, gate) : nullptr,
       .stepper = simgrid ? &gate : nullptr});
  auto section_text = [&](const std::string& id) { return text.section(id); };
  Output out;
  out.put(lessons::transcript_header(text, world, settings.lang, f.step));
  if (f.step) {
    LessonFlags unstepped = f;  // the run ahead keeps the usual deadlines
    unstepped.step = false;
    lessons::StepPlan plan(
        {.info = info,
         .text = text,
         .settings = settings,
         .cluster = sim::build_run_spec(f.run, lesson_defaults(unstepped, info)).cluster});
    StepCounter count(plan);
    StepKeys keys(std::cin);  // nothing of the stepped run runs before the first key
    keys.pause(step_prompt(settings.lang, settings.lang == Lang::zh ? "开始" : "start"));
    lesson.start();
    step_through(lesson, count, out, keys, settings.lang);
  } else {
    lesson.start();
    while (!lesson.finished()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      out.put(lesson.recorder().take_ready(world, false, section_text));
    }
    lesson.join();
    out.put(lesson.recorder().take_ready(world, true, section_text));
  }
  if (lesson.failure()) std::rethrow_exception(lesson.failure());
  out.blank_line();
  out.put(lessons::transcript_footer(lesson.recorder(), world, settings.lang));
}

// MPI ranks or SimGrid actors: each rank records its own log, rank 0 gathers them and
// prints the transcript at the end (the same text as on simulated nodes). In an MPI job that
// also runs other programs (an mpi4py peer), which send no log, each of dsgd's ranks prints
// its own part.
void run_on_ranks(const LessonFlags& f, const LessonInfo& info, const LessonText& text,
                  const lessons::LessonSettings& settings) {
  const sim::RunSpec spec = sim::build_run_spec(f.run, lesson_defaults(f, info));
  refuse_phantom(spec);
  sim::ClusterOptions options{spec.cluster};
  Recorder recorder(settings.lang);
  options.events = &recorder;
  lessons::DataCache data;
  lessons::LessonSettings s = settings;
  s.data = &data;
  int world = 0;
  bool shared = false;
  const bool mpi = f.run.backend == "mpi";
  const bool rank0 = run_on_backend(
      f.run.backend, options,
      [&](Communicator& comm) { lessons::run_lesson_rank(comm, info, recorder, s, !shared); },
      {.nodes = options.nodes,
       .check_world =
           [&](int size) {
             world = size;
             if (size < info.min_nodes || size > info.max_nodes)
               throw UsageError(fmt::format("{} {}: lesson {} runs on {} to {} ranks",
                                            mpi ? "mpirun -np" : "--nodes", size, info.number,
                                            info.min_nodes, info.max_nodes));
           },
       .own_ranks = [&](int, int count) { shared = count < world; }},
      simgrid_run(spec));
  if (!rank0 && !shared) return;
  put_text(lessons::finished_transcript(recorder, text, world, settings.lang));
}

}  // namespace

void add_lesson_command(CLI::App& app, LessonFlags& f) {
  CLI::App* cmd = app.add_subcommand(
      "lesson", "Lessons: from send/recv to synchronous SGD (dsgd lesson list, dsgd lesson 2)");
  cmd->add_option("lesson", f.which, "list, or the number of the lesson to run")->required();
  cmd->add_option("--lang", f.lang, "en (English) or zh (简体中文)")->capture_default_str();
  auto* step = cmd->add_flag("--step", f.step,
                             "Wait for Enter at every message shown and every part (simulated "
                             "nodes or SimGrid; at the end of input, run on)");
  auto* auto_run = cmd->add_flag("--auto", f.auto_run,
                                 "Run through without pausing, printing the same message lines "
                                 "(the default)");
  step->excludes(auto_run);
  cmd->add_option("--check", f.check,
                  "Check your solution of the lesson's exercise (a C++ file), or grade a "
                  "folder of them into a CSV table");
  cmd->add_flag("--json", f.json, "With --check: the results as JSON");
  cmd->add_option("--check-memory", f.check_memory,
                  "With --check: the memory each case may use (default 4G; 0: no limit)");
  cmd->add_option("--check-ranks", f.check_ranks,
                  "With --check: run the cases on up to this many ranks (default 8), for a "
                  "quicker first check")
      ->check(sim::integer_at_least(1, "the most ranks a case runs on"));
  cmd->add_option("--seed", f.seed, "Seed of the lesson's data and models")
      ->capture_default_str()
      ->check(sim::integer_at_least(0, "the seed of the lesson's data and models"));
  sim::add_run_flags(*cmd, f.run, sim::kBackendFlag | sim::kClusterFlags, sim::RunSpec{});
}

int run_lesson(const LessonFlags& f) {
  lessons::LessonSettings settings;
  settings.lang = lessons::parse_lang(f.lang);
  settings.seed = f.seed;
  if (f.which == "list") return list_lessons(settings.lang);
  const LessonInfo info = lessons::find_lesson(parse_number(f.which));

  if (!f.check.empty()) {
    if (!info.exercise)
      throw UsageError(fmt::format(
          "lesson {} has no exercise to check; lessons {} have one (dsgd lesson 5 --check FILE)",
          info.number, lessons::lessons_with_exercises()));
    return check_exercise(*info.exercise, f.check,
                          {.json = f.json,
                           .memory_bytes = sim::parse_size_bytes(f.check_memory, "--check-memory"),
                           .max_ranks = f.check_ranks,
                           .lang = settings.lang});
  }
  if (f.json) throw UsageError("--json goes with --check (dsgd lesson 5 --check FILE --json)");

  set_blas_threads(1);  // every rank is a thread already
  const LessonText text = lessons::load_lesson_text(info, settings.lang);
  if (f.run.backend == "mpi" && f.step)
    throw UsageError(
        "--step holds messages in the network dsgd simulates; with --backend mpi the network "
        "is real: use --auto, or --backend sim --step (or simgrid)");
  if (f.run.backend == "sim" || f.step)
    run_live(f, info, text, settings);
  else
    run_on_ranks(f, info, text, settings);
  return kExitOk;
}

}  // namespace dsgd::cli
