// A lesson paragraph as the panel shows it: inline Markdown (**strong**, *emphasis*,
// `code`) parsed into styled spans, and the spans wrapped into lines of a given width, with
// Chinese broken between any two characters (never before a closing mark such as 。or ）,
// never after an opening one such as （) and Latin text between words. No ImGui: the view
// passes a measuring function, so tests can check where lines break.
// Not a Markdown parser for blocks: headings, lists and code blocks are view_lesson.cpp's.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dsgd::gui {

enum class SpanStyle : uint8_t { plain, strong, emphasis, code };

struct Span {
  std::string text;
  SpanStyle style = SpanStyle::plain;
};

// "a **b** `c`" -> "a ", "b" (strong), " ", "c" (code). Markers without a partner stay text.
std::vector<Span> parse_inline_markdown(std::string_view paragraph);

// One piece of a wrapped line: text of one style, placed at x (from the line's start),
// `width` wide (code: with its box's padding on both sides).
struct Placed {
  std::string text;
  SpanStyle style = SpanStyle::plain;
  float x = 0, width = 0;
};
using WrappedLine = std::vector<Placed>;

// Width of `text` drawn in `style`.
using MeasureText = std::function<float(std::string_view text, SpanStyle style)>;

// The spans as lines no wider than `width` (a piece wider than a whole line gets one of its
// own). Spaces at the start of a line are dropped. Code gets `code_pad` on each side.
std::vector<WrappedLine> wrap_spans(const std::vector<Span>& spans, float width,
                                    const MeasureText& measure, float code_pad = 0);

}  // namespace dsgd::gui
