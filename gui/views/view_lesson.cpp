// The lesson panel: pick a lesson and a language, step its messages, and read its text
// section by section with the lines the ranks printed and the messages they exchanged (the
// transcript `dsgd lesson N --step` prints in the terminal). The packets themselves move in
// the topology view.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/rich_text.h"
#include "gui/views/legend.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

// The colour of a span: strong in the headings' colour, code dimmer on a shaded box,
// emphasis in the message colour (ImGui has one font: no bold or italic).
Rgba span_colour(SpanStyle style, const Palette& pal) {
  switch (style) {
    case SpanStyle::strong:
      return pal.cursor;
    case SpanStyle::emphasis:
      return pal.link_ring;
    case SpanStyle::code:
    case SpanStyle::plain:
      break;
  }
  return pal.text;
}

// A paragraph with its inline Markdown rendered (rich_text.h), wrapped to the panel's width,
// Chinese between any two characters. Drawn straight into the window's draw list, one item
// for the whole paragraph; nothing is drawn while it is scrolled out of sight.
void draw_paragraph(const std::string& text, const Palette& pal) {
  const float pad = ImGui::GetFontSize() * 0.2f;
  const MeasureText measure = [](std::string_view t, SpanStyle) {
    return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x;
  };
  const std::vector<WrappedLine> lines =
      wrap_spans(parse_inline_markdown(text), ImGui::GetContentRegionAvail().x, measure, pad);
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 size(ImGui::GetContentRegionAvail().x, line_h * lines.size());
  if (ImGui::IsRectVisible(size)) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (size_t i = 0; i < lines.size(); ++i)
      for (const Placed& p : lines[i]) {
        const ImVec2 at(top.x + p.x, top.y + line_h * i);
        if (p.style == SpanStyle::code) {
          dl->AddRectFilled(at, {at.x + p.width, at.y + ImGui::GetFontSize()}, pal.grid, pad);
          dl->AddText({at.x + pad, at.y}, pal.text, p.text.c_str());
        } else {
          dl->AddText(at, span_colour(p.style, pal), p.text.c_str());
        }
      }
  }
  ImGui::Dummy(size);
}

// Markdown as the panel shows it: the lines of a paragraph joined (the files wrap at ~90
// columns; the panel wraps to its own width), headings, list items, tables and code kept
// on lines of their own. Chinese lines join without a space.
void draw_markdown(const std::string& text, const Palette& pal) {
  std::string paragraph;
  bool code = false;
  const auto flush = [&] {
    if (!paragraph.empty()) draw_paragraph(paragraph, pal);
    paragraph.clear();
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("```")) {
      flush();
      code = !code;
      continue;
    }
    if (code) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.dim_text));
      ImGui::TextUnformatted(line.c_str());
      ImGui::PopStyleColor();
      continue;
    }
    if (line.empty()) {
      flush();
      ImGui::Spacing();
      continue;
    }
    if (line.starts_with("#")) {
      flush();
      const size_t skip = line.find_first_not_of("# ");
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.cursor));
      ImGui::TextWrapped("%s", skip == std::string::npos ? "" : line.c_str() + skip);
      ImGui::PopStyleColor();
      continue;
    }
    if (line.starts_with("- ") || line.starts_with("* ") || line.starts_with("|") ||
        line.starts_with("    ") || (line.size() > 2 && std::isdigit(line[0]) && line[1] == '.')) {
      flush();
      paragraph = line;
      continue;
    }
    if (!paragraph.empty()) {
      // A space between Latin words; none between Chinese characters (UTF-8 lead bytes).
      const bool cjk = static_cast<unsigned char>(paragraph.back()) >= 0x80 &&
                       static_cast<unsigned char>(line.front()) >= 0x80;
      if (!cjk) paragraph += ' ';
    }
    paragraph += line;
  }
  flush();
}

}  // namespace

void draw_lesson_picker(const Snapshot& s, Commands& commands) {
  const LessonView& l = s.lesson;
  if (l.catalog.empty()) {
    ImGui::TextUnformatted(tr("no lessons found"));
    return;
  }
  ViewSettings v = s.view;
  const auto current = std::find_if(l.catalog.begin(), l.catalog.end(), [&](const LessonEntry& e) {
    return e.number == v.lesson_pick;
  });
  const LessonEntry& pick = current == l.catalog.end() ? l.catalog.front() : *current;
  bool changed = false;
  // A title too long for the combo shows its number there and its name wrapped below it.
  const std::string& picked = v.lesson_zh ? pick.title_zh : pick.title_en;
  const size_t dot = picked.find(" · ");
  const float arrow = ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().FramePadding.x;
  const bool split = dot != std::string::npos && ImGui::CalcTextSize(picked.c_str()).x >
                                                     ImGui::GetContentRegionAvail().x - arrow;
  ImGui::SetNextItemWidth(-1);
  const bool open_combo =
      ImGui::BeginCombo("##lesson", split ? picked.substr(0, dot).c_str() : picked.c_str());
  if (open_combo) {
    for (const LessonEntry& e : l.catalog) {
      const std::string& title = v.lesson_zh ? e.title_zh : e.title_en;
      if (ImGui::Selectable(title.c_str(), e.number == pick.number)) {
        v.lesson_pick = e.number;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  if (split) ImGui::TextWrapped("%s", picked.substr(dot + std::string_view(" · ").size()).c_str());
  int lang = v.lesson_zh ? 1 : 0;
  changed |= ImGui::RadioButton("English", &lang, 0);
  same_line_if_fits(check_box_width("中文"));
  changed |= ImGui::RadioButton("中文", &lang, 1);
  v.lesson_zh = lang == 1;
  if (s.classroom.active) {  // on the students' laptops, as many as the lesson runs on
    const ClassroomState& c = s.classroom.state;
    const int taken = std::min(c.waiting(), pick.max_nodes);
    ImGui::BeginDisabled(taken < pick.min_nodes || c.running());
    const std::string start =
        fmt::format(fmt::runtime(tr("Start lesson {} on {}###start_class_lesson")), pick.number,
                    laptops(taken));
    if (ImGui::Button(start.c_str(), ImVec2(-1, 0)))
      commands.push(
          Command{.kind = CommandKind::start_class_run, .flag = v.lesson_zh, .index = pick.number});
    ImGui::EndDisabled();
  } else {
    const char* open = tr("Open lesson");
    same_line_if_fits(button_width(open));  // on a line of its own when the panel is narrow
    if (ImGui::Button(open))
      commands.push(
          Command{.kind = CommandKind::start_lesson, .flag = v.lesson_zh, .index = pick.number});
  }
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
}

void draw_lesson(const Snapshot& s, Commands& commands) {
  const LessonView& l = s.lesson;
  const Palette pal = palette_for(s.view.theme);
  if (!s.classroom.active) draw_lesson_picker(s, commands);  // the class's is in its panel
  if (!l.active) {
    ImGui::TextWrapped(
        "%s", tr("Pick a lesson and open it: it runs on simulated nodes, one message at a time."));
    return;
  }
  ImGui::Separator();
  const ControlState& c = s.controls;
  if (ImGui::Button(tr("Step message"))) commands.push(CommandKind::step_message);
  const bool held = c.paused || c.step_mode;
  const char* play = tr(held ? "Play###play" : "Pause###play");
  same_line_if_fits(button_width(play));
  if (ImGui::Button(play)) commands.push(held ? CommandKind::play : CommandKind::pause);
  const char* status = tr(c.status.c_str());
  same_line_if_fits(ImGui::CalcTextSize(status).x);
  ImGui::TextUnformatted(status);
  const float done =
      l.sections_total > 0 ? static_cast<float>(l.sections_shown) / l.sections_total : 0;
  ImGui::ProgressBar(done, ImVec2(-1, 0),
                     fmt::format("{} {} / {} · {} {}", tr("section"), l.sections_shown,
                                 l.sections_total, l.world, tr("ranks"))
                         .c_str());

  // The transcript: intro, then each section's text followed by what the ranks did in it.
  ImGui::BeginChild("lesson_text", ImVec2(0, 0), false);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.cursor));
  ImGui::TextWrapped("%s", l.title.c_str());
  ImGui::PopStyleColor();
  draw_markdown(l.intro, pal);
  for (const LessonLine& line : l.lines) {
    switch (line.kind) {
      case LessonLine::Kind::section:
        ImGui::Separator();
        draw_markdown(line.text, pal);
        break;
      case LessonLine::Kind::say:
        draw_paragraph(line.text, pal);
        break;
      case LessonLine::Kind::print:
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.dim_text));
        ImGui::TextWrapped("%s", line.text.c_str());
        ImGui::PopStyleColor();
        break;
      case LessonLine::Kind::message:
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.link_ring));
        ImGui::TextWrapped("  %s", line.text.c_str());
        ImGui::PopStyleColor();
        break;
    }
  }
  if (!l.running) ImGui::TextUnformatted(tr("-- end of lesson --"));
  // Follow the newest line unless the reader scrolled up.
  if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 1) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

}  // namespace dsgd::gui
