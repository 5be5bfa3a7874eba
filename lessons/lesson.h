// A lesson: a program that runs on every rank, written against the Communicator only (so
// the same lesson runs on simulated nodes and on MPI ranks), plus its text in English and
// Simplified Chinese (lessons/NN-name/README.md, README.zh-CN.md). LessonContext is what
// the program sees: the communicator, the sections of its text, and print helpers whose
// output becomes a deterministic transcript (transcript.h). Not a launcher: the `dsgd
// lesson` command (cli/lesson_command.cpp) and LiveLesson (live_lesson.h) run a lesson.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/comm/communicator.h"
#include "core/data/dataset.h"

namespace dsgd::lessons {

class Recorder;
struct ExerciseSpec;

enum class Lang { en, zh };

// "en" -> en; "zh", "zh-CN", "cn" -> zh; UsageError otherwise.
Lang parse_lang(const std::string& text);

// Data sets loaded once per process and shared by the ranks that live in it (simulated
// nodes are threads of one process; each MPI rank has its own). Thread-safe.
class DataCache {
 public:
  // load_dataset(spec) the first time, the same object afterwards.
  const Dataset& get(const std::string& spec);

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Dataset>> sets_;
};

// Tag of the empty messages with which section() keeps the ranks in step in --step mode;
// the runner delivers them without showing them.
inline constexpr int kSectionTag = kCollectiveTagBase - 2;

// What a run of a lesson is configured with (from the command line).
struct LessonSettings {
  Lang lang = Lang::en;
  uint64_t seed = 1;
  std::string fashion_dir = "/usr/share/datasets/fashion-mnist";  // lesson 7
  DataCache* data = nullptr;  // shared by the ranks of this process; null: none
  // --step: section() waits for every rank (messages with kSectionTag), so that a section's
  // text appears after everything before it and before everything after it as it happens.
  bool sync_sections = false;
};

// "[1, -1]", "[0.5, 2, 3, 4, ... (1000 values)]": at most max_values, then the count.
std::string format_values(std::span<const float> values, size_t max_values = 6);

class LessonContext {
 public:
  LessonContext(Communicator& comm, Recorder& recorder, const LessonSettings& settings)
      : comm_(comm), recorder_(recorder), settings_(settings) {}

  Communicator& comm() { return comm_; }
  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  const LessonSettings& settings() const { return settings_; }
  Lang lang() const { return settings_.lang; }
  uint64_t seed() const { return settings_.seed; }
  // The data set of `spec` (load_dataset), loaded once per process.
  const Dataset& dataset(const std::string& spec);
  // The string for the chosen language.
  const char* tr(const char* en, const char* zh) const { return lang() == Lang::zh ? zh : en; }

  // Shows the README section `id` (an HTML comment `<!-- section: id -->` in README*.md).
  // Every rank calls it, in the same order: in the transcript everything any rank printed
  // before it comes before the section, and everything after comes after. It sends no
  // message and does not wait for the other ranks (except with settings.sync_sections).
  void section(const std::string& id);
  // Like section() without text: lines printed after it, on any rank, come after every line
  // printed before it. Every rank calls it, in the same order.
  void next_group() { section(""); }
  // One line (or several, split at '\n') shown once, from rank 0; other ranks' calls do
  // nothing. For summaries and tables.
  template <typename... Args>
  void say(fmt::format_string<Args...> f, Args&&... args) {
    if (rank() == 0) say_line(fmt::format(f, std::forward<Args>(args)...));
  }
  // One line from this rank, shown as "[rank 2] ...".
  template <typename... Args>
  void print(fmt::format_string<Args...> f, Args&&... args) {
    print_line(fmt::format(f, std::forward<Args>(args)...));
  }
  // say() and print() with the format string of the chosen language.
  template <typename... Args>
  void say_tr(const char* en, const char* zh, Args&&... args) {
    if (rank() == 0) say_line(fmt::format(fmt::runtime(tr(en, zh)), std::forward<Args>(args)...));
  }
  template <typename... Args>
  void print_tr(const char* en, const char* zh, Args&&... args) {
    print_line(fmt::format(fmt::runtime(tr(en, zh)), std::forward<Args>(args)...));
  }
  // Whether this rank's sends appear as message lines (they still order the transcript).
  // Lessons that train turn them off: a training step sends dozens of messages.
  void show_messages(bool on);

  void say_line(const std::string& text);
  void print_line(const std::string& text);
  // From rank 0: a line telling one call that rank `caller` of a demo made (demo_run.h).
  void say_call(int caller, const std::string& text);

 private:
  Communicator& comm_;
  Recorder& recorder_;
  const LessonSettings& settings_;
  DataCache own_data_;  // when settings.data is null
};

using LessonFunction = void (*)(LessonContext&);

struct LessonInfo {
  int number = 0;
  const char* dir = "";  // "02-point-to-point", under lessons/
  LessonFunction run = nullptr;
  int default_nodes = 4;
  int min_nodes = 1;
  int max_nodes = 8;
  const ExerciseSpec* exercise = nullptr;  // `dsgd lesson N --check FILE` (exercise_spec.h)
};

// Every lesson, in order.
std::vector<LessonInfo> lesson_catalog();
// The lesson numbered `number`; UsageError listing the valid numbers otherwise.
LessonInfo find_lesson(int number);
// "3, 4, 5 and 6": the numbers of the lessons with an exercise.
std::string lessons_with_exercises();

}  // namespace dsgd::lessons
