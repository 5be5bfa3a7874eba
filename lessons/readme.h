// The text of a lesson: README.md (English) or README.zh-CN.md (Simplified Chinese) in the
// lesson's directory, split into sections. A section starts at a line
// `<!-- section: ID -->` (invisible when the file is read on the web) and runs to the next
// one; the `# ` title line and the text before the first section form the introduction.
// The program shows a section with LessonContext::section(ID). Not a Markdown renderer:
// the terminal shows the Markdown as written, minus the section markers.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lessons/lesson.h"

namespace dsgd::lessons {

struct LessonText {
  std::string path;  // the file it came from
  Lang lang = Lang::en;
  std::string title;  // the `# ` line, without the '#'
  std::string intro;  // text between the title and the first section
  std::vector<std::pair<std::string, std::string>> sections;  // (id, text) in file order

  // The text of section `id`, or a line saying that the README lacks it.
  std::string section(const std::string& id) const;
  bool has_section(const std::string& id) const;
};

// Where the lesson directories are: data_dir()/lessons (core/io/data_dir.h).
std::string lessons_dir();
// "README.md" or "README.zh-CN.md".
const char* readme_name(Lang lang);
// Parses `text` (the contents of `path`). DataError for a file without a `# ` title.
LessonText parse_lesson_text(const std::string& text, const std::string& path);
// Reads and parses lessons_dir()/info.dir/readme_name(lang). DataError when it is missing.
LessonText load_lesson_text(const LessonInfo& info, Lang lang);

}  // namespace dsgd::lessons
