// The live transcript of a lesson (lessons/step_transcript.h) on its own, at both paces:
// free (dsgd-gui: a section once every rank reached it, a message line with its receive)
// and stepped (dsgd lesson --step: a message line as it is delivered, a receiver's output
// after it, sections as rank 0 reaches them).
#include <catch2/catch.hpp>

#include <algorithm>

#include "lessons/readme.h"
#include "lessons/step_transcript.h"

using namespace dsgd;
using lessons::LogItem;
using lessons::StepTranscript;
using lessons::TranscriptLine;
using Kind = TranscriptLine::Kind;
using Pace = StepTranscript::Pace;

namespace {

size_t count_kind(const std::vector<TranscriptLine>& lines, Kind kind) {
  return std::count_if(lines.begin(), lines.end(),
                       [&](const TranscriptLine& l) { return l.kind == kind; });
}

lessons::LessonText two_sections() {
  return lessons::parse_lesson_text(
      "# T\n\nintro\n<!-- section: a -->\nText A.\n<!-- section: b -->\nText B.\n", "t.md");
}

LogItem section(const char* id) {
  return LogItem{.kind = LogItem::Kind::section, .text = id};
}

}  // namespace

TEST_CASE("live transcript, free: a section appears once every rank reached it", "[lessons]") {
  StepTranscript t(2, two_sections(), Pace::free);
  // Rank 1 runs ahead: its section b and its line wait for rank 0.
  t.add(1, section("a"));
  CHECK(t.sections_shown() == 0);
  t.add(1, {.kind = LogItem::Kind::recv, .peer = 0, .tag = 7, .bytes = 8});
  t.add(1, {.kind = LogItem::Kind::print, .text = "got it"});
  t.add(1, section("b"));
  t.add(1, {.kind = LogItem::Kind::print, .text = "in b"});
  CHECK(t.line_count() == 0);
  t.add(0, section("a"));
  // Section a is out; rank 1's receive waits for the send it pairs with.
  std::vector<TranscriptLine> lines = t.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].kind == Kind::section);
  CHECK(lines[0].text == "Text A.");
  t.add(0, {.kind = LogItem::Kind::send, .peer = 1, .tag = 7, .bytes = 8, .preview = {1, -1}});
  lines = t.lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].kind == Kind::message);
  CHECK(lines[1].text == "rank 0 -> rank 1 · tag 7 · 8 bytes · [1, -1]");
  CHECK(lines[2].text == "got it");
  CHECK(lines[2].rank == 1);
  t.add(0, {.kind = LogItem::Kind::say, .text = "end of a"});
  CHECK(t.sections_shown() == 1);  // rank 0 is still in section a
  t.add(0, section("b"));
  lines = t.lines();
  REQUIRE(lines.size() == 6);
  CHECK(lines[3].text == "end of a");
  CHECK(lines[4].text == "Text B.");
  CHECK(lines[5].text == "in b");
  CHECK(t.sections_shown() == 2);
  CHECK(t.lines(4).size() == 2);  // from the fifth line on
  CHECK(t.lines(6).empty());
}

TEST_CASE("live transcript, free: hidden messages and a finished run", "[lessons]") {
  StepTranscript t(2, two_sections(), Pace::free);
  t.add(0, section("a"));
  t.add(0, {.kind = LogItem::Kind::send, .peer = 1, .bytes = 4, .shown = false});
  t.add(1, section("a"));
  t.add(1, {.kind = LogItem::Kind::recv, .peer = 0, .bytes = 4});
  CHECK(count_kind(t.lines(), Kind::message) == 0);  // a training step's, not shown
  // Rank 1 failed before section b; once the run is over the section still comes out.
  t.add(0, section("b"));
  CHECK(t.sections_shown() == 1);
  t.finish();
  CHECK(t.sections_shown() == 2);
}

TEST_CASE("live transcript, stepped: a message line as it is delivered, the receiver's after",
          "[lessons]") {
  StepTranscript t(2, two_sections(), Pace::stepped);
  // Rank 0 reaches section a (the lesson's own barrier let it); rank 1's copy shows nothing.
  t.add(0, section("a"));
  t.add(1, section("a"));
  REQUIRE(t.line_count() == 1);
  CHECK(t.lines()[0].text == "Text A.");
  // Two messages, received in the opposite order (lesson 2's tags): each line comes out as
  // the step gate delivers it, not as it is received.
  t.add(0, {.kind = LogItem::Kind::send, .peer = 1, .tag = 1, .bytes = 4, .preview = {10}});
  t.add(0, {.kind = LogItem::Kind::send, .peer = 1, .tag = 2, .bytes = 4, .preview = {20}});
  t.add(0, {.kind = LogItem::Kind::print, .text = "sent both"});
  CHECK(t.lines(1).at(0).text == "sent both");  // not held: rank 0 waits for nothing
  t.delivered({.source = 0, .dest = 1, .tag = 1, .count = 1, .preview = {10}}, true);
  CHECK(t.lines().back().text == "rank 0 -> rank 1 · tag 1 · 4 bytes · [10]");
  // Rank 1 receives tag 2 first, which has not been delivered: its output waits for it.
  t.add(1, {.kind = LogItem::Kind::recv, .peer = 0, .tag = 2, .bytes = 4});
  t.add(1, {.kind = LogItem::Kind::print, .text = "got 20"});
  CHECK(t.line_count() == 3);
  t.delivered({.source = 0, .dest = 1, .tag = 2, .count = 1, .preview = {20}}, true);
  std::vector<TranscriptLine> lines = t.lines(3);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].kind == Kind::message);
  CHECK(lines[0].text == "rank 0 -> rank 1 · tag 2 · 4 bytes · [20]");
  CHECK(lines[1].kind == Kind::print);
  CHECK(lines[1].rank == 1);
  CHECK(lines[1].text == "got 20");
}

TEST_CASE("live transcript, stepped: silent messages, and a finished run lets all out",
          "[lessons]") {
  StepTranscript t(2, two_sections(), Pace::stepped);
  t.add(0, {.kind = LogItem::Kind::send, .peer = 1, .bytes = 4, .shown = false});
  t.delivered({.source = 0, .dest = 1, .count = 1}, false);  // a training step's
  t.add(1, {.kind = LogItem::Kind::recv, .peer = 0, .bytes = 4});
  t.add(1, {.kind = LogItem::Kind::print, .text = "after a silent one"});
  REQUIRE(t.line_count() == 1);
  CHECK(t.lines()[0].text == "after a silent one");
  // A receive whose delivery was never reported (the run failed) holds its rank's output
  // until the run is over.
  t.add(1, {.kind = LogItem::Kind::recv, .peer = 0, .tag = 3, .bytes = 4});
  t.add(1, {.kind = LogItem::Kind::print, .text = "late"});
  CHECK(t.line_count() == 1);
  t.finish();
  REQUIRE(t.line_count() == 2);
  CHECK(t.lines()[1].text == "late");
}
