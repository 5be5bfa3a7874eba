// Sections: [parse] [break points] [wrap].
#include "gui/model/rich_text.h"

#include <cstdint>

namespace dsgd::gui {
namespace {

// ---------------------------------------------------------------------------------------
// [parse]
// ---------------------------------------------------------------------------------------

struct Marker {
  std::string_view text;
  SpanStyle style;
};
constexpr Marker kMarkers[] = {
    {"**", SpanStyle::strong}, {"`", SpanStyle::code}, {"*", SpanStyle::emphasis}};

void append(std::vector<Span>& spans, std::string_view text, SpanStyle style) {
  if (text.empty()) return;
  if (!spans.empty() && spans.back().style == style)
    spans.back().text += text;
  else
    spans.push_back({std::string(text), style});
}

// ---------------------------------------------------------------------------------------
// [break points]
// ---------------------------------------------------------------------------------------

// The code point at s[i] (UTF-8) and its length in bytes.
std::pair<char32_t, size_t> decode(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  if (i + n > s.size()) return {b, 1};
  char32_t c = n == 1 ? b : b & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k)
    c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return {c, n};
}

bool is_cjk(char32_t c) {
  return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x3000 && c <= 0x303F);
}

// Marks no line may start with, and marks no line may end with (kinsoku shori).
bool closes(char32_t c) {
  static constexpr std::u32string_view kClosing = U"，。、；：？！）」』》〉】”’…%,.;:?!)]";
  return kClosing.find(c) != std::u32string_view::npos;
}
bool opens(char32_t c) {
  static constexpr std::u32string_view kOpening = U"（「『《〈【“‘([";
  return kOpening.find(c) != std::u32string_view::npos;
}

// The pieces a line may break between: a Latin word with the spaces after it, or one
// Chinese character (with the closing marks after it and the opening marks before it).
std::vector<std::string_view> pieces(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0, i = 0;
  char32_t prev = 0;
  while (i < text.size()) {
    const auto [c, n] = decode(text, i);
    // Not after an opening mark, not before a closing one.
    const bool breakable_before = i > start && !opens(prev) && !closes(c) && c != ' ' &&
                                  (is_cjk(c) || is_cjk(prev) || prev == ' ');
    if (breakable_before) {
      out.push_back(text.substr(start, i - start));
      start = i;
    }
    prev = c;
    i += n;
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

}  // namespace

std::vector<Span> parse_inline_markdown(std::string_view p) {
  std::vector<Span> spans;
  size_t plain_from = 0, i = 0;
  while (i < p.size()) {
    bool matched = false;
    for (const Marker& m : kMarkers) {
      if (p.substr(i, m.text.size()) != m.text) continue;
      const size_t close = p.find(m.text, i + m.text.size());
      if (close == std::string_view::npos || close == i + m.text.size()) break;
      append(spans, p.substr(plain_from, i - plain_from), SpanStyle::plain);
      append(spans, p.substr(i + m.text.size(), close - i - m.text.size()), m.style);
      i = plain_from = close + m.text.size();
      matched = true;
      break;
    }
    if (!matched) ++i;
  }
  append(spans, p.substr(plain_from), SpanStyle::plain);
  return spans;
}

// ---------------------------------------------------------------------------------------
// [wrap]
// ---------------------------------------------------------------------------------------

std::vector<WrappedLine> wrap_spans(const std::vector<Span>& spans, float width,
                                    const MeasureText& measure, float code_pad) {
  std::vector<WrappedLine> lines(1);
  float x = 0;
  for (const Span& span : spans) {
    const float pad = span.style == SpanStyle::code ? code_pad : 0;
    bool span_begun = false;  // on this line
    for (std::string_view piece : pieces(span.text)) {
      // The piece's trailing spaces do not count against the line's width.
      const std::string_view ink = piece.substr(0, piece.find_last_not_of(' ') + 1);
      const float box = span_begun ? pad : 2 * pad;  // the box's sides, once per line
      if (x > 0 && x + measure(ink, span.style) + box > width) {
        lines.emplace_back();
        x = 0;
        span_begun = false;
      }
      if (x == 0) piece.remove_prefix(std::min(piece.find_first_not_of(' '), piece.size()));
      if (piece.empty()) continue;
      WrappedLine& line = lines.back();
      const float w = measure(piece, span.style);
      if (span_begun) {
        line.back().text += piece;
        line.back().width += w;
        x += w;
      } else {
        line.push_back({std::string(piece), span.style, x, w + 2 * pad});
        x += w + 2 * pad;
        span_begun = true;
      }
    }
  }
  return lines;
}

}  // namespace dsgd::gui
