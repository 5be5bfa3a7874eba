// The window's words in its language: English, or Simplified Chinese (`--lang zh`, or the
// View settings' check box). Views write every label, button and status in English and pass
// it through tr(); the translations are one table (ui_text.cpp). A label without a
// translation shows in English, so a new label never goes missing, only untranslated.
// Not the lessons' text: lessons/ keeps its own in both languages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dsgd::gui {

// The language tr() answers in. Set by the dashboard at the start of every frame from
// ViewSettings::chinese; the GUI thread is the only user.
void set_ui_chinese(bool chinese);
bool ui_chinese();

// `english` in the window's language. An ImGui ID after "###" (or "##") is kept as it is,
// so a button keeps its identity when the language changes. The result lives as long as
// the program (a literal, or the table's own copy).
const char* tr(const char* english);

// A count of students' laptops in the window's language: "1 laptop", "3 laptops".
std::string laptops(int n);

// Every Chinese text of the table, run together: the font must have their glyphs.
std::string translations_text();

// Every English text the table translates (for tests: each has a Chinese entry that differs).
std::vector<std::string_view> translated_texts();

}  // namespace dsgd::gui
