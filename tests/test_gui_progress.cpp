// The progress bar's words (gui/model/progress.h): the ranks' labels say "step 87" for the
// step they have begun while the session counts 86 steps done; the bar names both, so the
// two never contradict each other (the issue saw "step 86/300" beside "step 87"). And every
// translated format string keeps its English's placeholders.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "gui/model/progress.h"
#include "gui/model/ui_text.h"

using namespace dsgd::gui;

namespace {

Snapshot training(std::vector<int64_t> begun, int64_t done, int64_t total) {
  Snapshot s;
  s.world = static_cast<int>(begun.size());
  for (int64_t step : begun)
    s.ranks.push_back({.step = step});
  s.controls.step = done;
  s.controls.total_steps = total;
  return s;
}

struct Chinese {
  Chinese() { set_ui_chinese(true); }
  ~Chinese() { set_ui_chinese(false); }
};

}  // namespace

TEST_CASE("the progress bar names the step the ranks show and the steps done", "[gui]") {
  CHECK(progress_label(training({87, 87, 86, 87}, 86, 300)) == "step 87 / 300 (86 done)");
  CHECK(progress_label(training({300, 300}, 300, 300)) == "300 / 300 steps done");
  CHECK(progress_label(training({0, 0}, 0, 300)) == "0 / 300 steps done");
  Snapshot demo = training({0, 0}, 12, 20);
  demo.controls.settings.mode = RunMode::allreduce_demo;
  CHECK(progress_label(demo) == "12 / 20 rounds done");
  Chinese zh;
  CHECK(progress_label(training({87, 86}, 86, 300)) == "第 87 / 300 步（已完成 86）");
}

TEST_CASE("ui_text: a translated format string has the placeholders of its English", "[gui]") {
  Chinese zh;
  for (std::string_view english : translated_texts()) {
    const std::string text(english);
    const std::string chinese = tr(text.c_str());
    const auto count = [](const std::string& s) {
      size_t n = 0;
      for (size_t at = s.find("{}"); at != std::string::npos; at = s.find("{}", at + 2))
        ++n;
      return n;
    };
    INFO(text << " -> " << chinese);
    CHECK(count(chinese) == count(text));
  }
}
