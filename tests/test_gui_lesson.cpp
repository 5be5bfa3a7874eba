// The lesson panel's logic without OpenGL: a lesson run inside the GUI (the same program
// `dsgd lesson 2` runs) advancing section by section as its messages are stepped one at a
// time. The transcript it shows is tested on its own in test_step_transcript.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>

#include "core/errors.h"
#include "gui/model/app.h"
#include "gui/model/lesson_session.h"
#include "gui/model/options.h"
#include "lessons/readme.h"
#include "wait_until.h"

using namespace dsgd;
using namespace dsgd::gui;
using test::wait_for;

namespace {

using Kind = LessonLine::Kind;

size_t count_kind(const std::vector<LessonLine>& lines, Kind kind) {
  return std::count_if(lines.begin(), lines.end(),
                       [&](const LessonLine& l) { return l.kind == kind; });
}

// The messages `dsgd lesson` counts in the footer of a golden transcript
// ("-- end of lesson: 58 messages, 356 bytes --"); 0 if the file has no footer.
size_t golden_message_count(const std::string& name) {
  std::ifstream in(std::string(DSGD_SOURCE_DIR) + "/tests/golden/lessons/" + name);
  const std::regex footer(R"(^-- end of lesson: (\d+) messages)");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, footer)) return std::stoul(m[1]);
  return 0;
}

}  // namespace

TEST_CASE("a lesson in the GUI advances section by section as messages are stepped",
          "[gui][lessons]") {
  // Lesson 2 on 2 ranks sends 4 messages. The sections reached after 0, 1, 2, 3, 4 stepped messages
  // follow from the program: rank 1 receives the first message before the second section; asks for
  // tag 2 before tag 1 (so the second message, tag 1, alone lets nothing move); then sends to rank
  // 0.
  const lessons::LessonText text =
      lessons::load_lesson_text(lessons::find_lesson(2), lessons::Lang::en);
  GuiApp app;
  app.start_lesson(2, false);
  LessonSession* lesson = app.lesson();
  REQUIRE(lesson != nullptr);
  Snapshot s = app.snapshot();
  REQUIRE(s.error.empty());
  CHECK(s.lesson.active);
  CHECK(s.lesson.world == 2);
  CHECK(s.lesson.catalog.size() == dsgd::lessons::lesson_catalog().size());
  CHECK(s.controls.step_mode);
  CHECK(s.lesson.sections_total == static_cast<int>(text.sections.size()));

  // Every message is held: the first section shows, and nothing after it.
  REQUIRE(wait_for([&] { return app.snapshot().lesson.sections_shown >= 1; }));
  s = app.snapshot();
  CHECK(s.lesson.sections_shown == 1);
  CHECK(count_kind(s.lesson.lines, Kind::message) == 0);
  CHECK(s.lesson.lines.front().text == text.sections[0].second);
  // The held message waits on its link in the topology view.
  CHECK(wait_for([&] { return !app.snapshot().in_flight.empty(); }));

  const int expected_sections[] = {2, 2, 3, static_cast<int>(text.sections.size())};
  const size_t expected_messages[] = {1, 1, 3, 4};
  for (int step = 0; step < 4; ++step) {
    INFO("step " << step + 1);
    Commands commands;
    commands.push(CommandKind::step_message);
    app.apply(commands);
    REQUIRE(wait_for([&] {
      Commands none;
      app.apply(none);  // polls the lesson, as each frame does
      return lesson->pending_steps() == 0;
    }));
    REQUIRE(wait_for([&] {
      const LessonView v = app.snapshot().lesson;
      return v.sections_shown >= expected_sections[step] &&
             count_kind(v.lines, Kind::message) >= expected_messages[step];
    }));
    s = app.snapshot();
    CHECK(s.lesson.sections_shown == expected_sections[step]);
    CHECK(count_kind(s.lesson.lines, Kind::message) == expected_messages[step]);
  }
  REQUIRE(wait_for([&] { return !lesson->running(); }));
  s = app.snapshot();
  CHECK(s.error.empty());
  // The sections in the README's order, with the lesson's own lines between them.
  std::vector<std::string> sections;
  for (const LessonLine& l : s.lesson.lines)
    if (l.kind == Kind::section) sections.push_back(l.text);
  REQUIRE(sections.size() == text.sections.size());
  for (size_t i = 0; i < sections.size(); ++i)
    CHECK(sections[i] == text.sections[i].second);
  const auto has = [&](const std::string& line) {
    return std::any_of(s.lesson.lines.begin(), s.lesson.lines.end(),
                       [&](const LessonLine& l) { return l.text == line; });
  };
  CHECK(has("rank 0 -> rank 1 · tag 0 · 8 bytes · [1, -1]"));
  CHECK(has("[rank 1] Rank 1 has data [1, -1]"));
  CHECK(has("rank 1 -> rank 0 · tag 0 · 4 bytes · [1]"));
  CHECK(has("[rank 0] collected [0, 1]"));
  CHECK(s.in_flight.empty());

  // Play runs a lesson through without stepping; leaving it for training stops it.
  Commands commands;
  commands.push(Command{.kind = CommandKind::start_lesson, .flag = true, .index = 4});
  commands.push(CommandKind::play);
  app.apply(commands);
  REQUIRE(app.lesson() != nullptr);
  REQUIRE(wait_for([&] { return !app.lesson()->running(); }));
  s = app.snapshot();
  CHECK(s.error.empty());
  CHECK(s.lesson.zh);
  CHECK(s.lesson.sections_shown == s.lesson.sections_total);
  CHECK(count_kind(s.lesson.lines, Kind::message) == golden_message_count("04.txt"));
}

TEST_CASE("dsgd-gui --lesson options", "[gui][lessons]") {
  GuiOptions o = parse_gui_options({"--lesson", "4", "--lang", "zh"});
  CHECK(o.lesson == 4);
  CHECK(o.lesson_zh);
  CHECK_THROWS_AS(parse_gui_options({"--lesson", "42"}), UsageError);
  CHECK_THROWS_AS(parse_gui_options({"--lesson", "2", "--lang", "fr"}), UsageError);
  CHECK(parse_gui_options({"--view", "lesson"}).view == View::lesson);
}
