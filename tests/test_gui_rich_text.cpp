// Lesson paragraphs (gui/model/rich_text.h): inline Markdown becomes styled spans, never raw
// ** or backticks; lines wrap between Latin words and between any two Chinese characters,
// but never put a closing mark at the start of a line or an opening one at its end.
#include <catch2/catch.hpp>

#include <string>

#include "gui/model/rich_text.h"

using namespace dsgd::gui;

namespace {

// One unit per Latin character, two per Chinese one (a monospaced CJK font's proportions).
float width_of(std::string_view t, SpanStyle) {
  float w = 0;
  for (unsigned char c : t)
    if (c < 0x80)
      w += 1;
    else if (c >= 0xC0)
      w += 2;
  return w;
}

std::string text_of(const WrappedLine& line) {
  std::string s;
  for (const Placed& p : line)
    s += p.text;
  return s;
}

}  // namespace

TEST_CASE("rich text: strong, emphasis and code become spans without their markers", "[gui]") {
  const auto spans = parse_inline_markdown("call **send** with `tag=0`, *then* recv");
  REQUIRE(spans.size() == 7);
  CHECK(spans[0].text == "call ");
  CHECK(spans[1].text == "send");
  CHECK(spans[1].style == SpanStyle::strong);
  CHECK(spans[3].text == "tag=0");
  CHECK(spans[3].style == SpanStyle::code);
  CHECK(spans[4].text == ", ");
  CHECK(spans[5].style == SpanStyle::emphasis);
  CHECK(spans[6].text == " recv");
  // A marker without its partner is text.
  const auto lone = parse_inline_markdown("2 * 3 is `six");
  REQUIRE(lone.size() == 1);
  CHECK(lone[0].text == "2 * 3 is `six");
}

TEST_CASE("rich text: Latin wraps between words, dropping the space at a line's start", "[gui]") {
  const auto lines =
      wrap_spans(parse_inline_markdown("every rank sends **its** chunk"), 12, width_of);
  REQUIRE(lines.size() == 3);
  CHECK(text_of(lines[0]) == "every rank ");
  CHECK(text_of(lines[1]) == "sends its ");
  CHECK(text_of(lines[2]) == "chunk");
  CHECK(lines[1][1].style == SpanStyle::strong);
  CHECK(lines[1][1].x == 6);
}

TEST_CASE("rich text: Chinese wraps between characters, never before 。 or after （", "[gui]") {
  // Eight units wide: four Chinese characters a line.
  auto lines = wrap_spans(parse_inline_markdown("每个秩发送数据"), 8, width_of);
  REQUIRE(lines.size() == 2);
  CHECK(text_of(lines[0]) == "每个秩发");
  CHECK(text_of(lines[1]) == "送数据");
  lines = wrap_spans(parse_inline_markdown("一二三四。"), 8, width_of);
  REQUIRE(lines.size() == 2);
  CHECK(text_of(lines[0]) == "一二三");  // not 一二三四 with 。 starting the next line
  CHECK(text_of(lines[1]) == "四。");
  lines = wrap_spans(parse_inline_markdown("一二三（四五"), 8, width_of);
  REQUIRE(lines.size() == 2);
  CHECK(text_of(lines[0]) == "一二三");  // （ stays with 四
  CHECK(text_of(lines[1]) == "（四五");
}

TEST_CASE("rich text: code gets its box's padding once, however many words it has", "[gui]") {
  const auto lines = wrap_spans(parse_inline_markdown("a `b c d` e"), 100, width_of, 0.5f);
  REQUIRE(lines.size() == 1);
  REQUIRE(lines[0].size() == 3);
  CHECK(lines[0][1].text == "b c d");
  CHECK(lines[0][1].x == 2);
  CHECK(lines[0][1].width == 6);  // 5 characters and 0.5 on each side
  CHECK(lines[0][2].x == 8);
}
