#include "lessons/lesson.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "lessons/transcript.h"

namespace dsgd::lessons {

Lang parse_lang(const std::string& text) {
  if (text == "en") return Lang::en;
  if (text == "zh" || text == "zh-CN" || text == "zh_CN" || text == "cn") return Lang::zh;
  throw UsageError(fmt::format("--lang {}: use en (English) or zh (简体中文)", text));
}

std::string format_values(std::span<const float> values, size_t max_values) {
  std::string s = "[";
  const size_t shown = std::min(values.size(), max_values);
  for (size_t i = 0; i < shown; ++i)
    s += fmt::format("{}{:g}", i ? ", " : "", values[i]);
  if (shown < values.size()) s += fmt::format(", ... ({} values)", values.size());
  return s + "]";
}

const Dataset& DataCache::get(const std::string& spec) {
  std::lock_guard lock(mutex_);
  auto& slot = sets_[spec];
  if (!slot) slot = std::make_unique<Dataset>(load_dataset(spec));
  return *slot;
}

const Dataset& LessonContext::dataset(const std::string& spec) {
  return (settings_.data ? *settings_.data : own_data_).get(spec);
}

void LessonContext::section(const std::string& id) {
  if (settings_.sync_sections && size() > 1) {
    // Everyone reports to rank 0, which then lets everyone go: rank 0 records the section
    // only once every rank has finished the part before it.
    std::vector<float> none;
    if (rank() == 0) {
      for (int r = 1; r < size(); ++r)
        comm_.recv(none, r, kSectionTag);
      recorder_.add(0, {.kind = LogItem::Kind::section, .text = id});
      for (int r = 1; r < size(); ++r)
        comm_.send(none, r, kSectionTag);
      return;
    }
    comm_.send(none, 0, kSectionTag);
    comm_.recv(none, 0, kSectionTag);
  }
  recorder_.add(rank(), {.kind = LogItem::Kind::section, .text = id});
}

void LessonContext::say_line(const std::string& text) {
  if (rank() == 0) recorder_.add(0, {.kind = LogItem::Kind::say, .text = text});
}

void LessonContext::say_call(int caller, const std::string& text) {
  if (rank() == 0) recorder_.add(0, {.kind = LogItem::Kind::call, .peer = caller, .text = text});
}

void LessonContext::print_line(const std::string& text) {
  recorder_.add(rank(), {.kind = LogItem::Kind::print, .text = text});
}

void LessonContext::show_messages(bool on) {
  recorder_.set_show_messages(rank(), on);
}

LessonInfo find_lesson(int number) {
  std::string valid;
  for (const LessonInfo& info : lesson_catalog()) {
    if (info.number == number) return info;
    valid += fmt::format("{}{}", valid.empty() ? "" : ", ", info.number);
  }
  throw UsageError(
      fmt::format("there is no lesson {}; the lessons are {} ('dsgd lesson list')", number, valid));
}

std::string lessons_with_exercises() {
  std::vector<int> numbers;
  for (const LessonInfo& info : lesson_catalog())
    if (info.exercise) numbers.push_back(info.number);
  std::string text;
  for (size_t i = 0; i < numbers.size(); ++i)
    text += fmt::format("{}{}", i == 0 ? "" : i + 1 == numbers.size() ? " and " : ", ", numbers[i]);
  return text;
}

}  // namespace dsgd::lessons
