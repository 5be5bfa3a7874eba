#include "lessons/readme.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/data_dir.h"

namespace dsgd::lessons {
namespace {

// Drops blank lines at both ends.
std::string trim_blank_lines(const std::string& text) {
  size_t begin = 0;
  while (true) {
    const size_t nl = text.find('\n', begin);
    if (nl == std::string::npos) break;
    if (text.find_first_not_of(" \t\r", begin) < nl) break;
    begin = nl + 1;
  }
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos || end < begin) return "";
  return text.substr(begin, end + 1 - begin);
}

// "<!-- section: ID -->" -> ID, or "" for any other line.
std::string section_marker(const std::string& line) {
  constexpr std::string_view open = "<!-- section:", close = "-->";
  if (line.rfind(open, 0) != 0) return "";
  const size_t stop = line.find(close, open.size());
  if (stop == std::string::npos) return "";
  std::string id = line.substr(open.size(), stop - open.size());
  const size_t a = id.find_first_not_of(' '), b = id.find_last_not_of(' ');
  return a == std::string::npos ? "" : id.substr(a, b + 1 - a);
}

}  // namespace

std::string LessonText::section(const std::string& id) const {
  for (const auto& [key, text] : sections)
    if (key == id) return text;
  return fmt::format("[section '{}' is missing from {}]", id, path);
}

bool LessonText::has_section(const std::string& id) const {
  for (const auto& [key, text] : sections)
    if (key == id) return true;
  return false;
}

std::string lessons_dir() {
  return (data_dir() / "lessons").string();
}

const char* readme_name(Lang lang) {
  return lang == Lang::zh ? "README.zh-CN.md" : "README.md";
}

LessonText parse_lesson_text(const std::string& text, const std::string& path) {
  LessonText out;
  out.path = path;
  std::istringstream in(text);
  std::string line, current;
  std::string* target = &current;
  bool titled = false;
  auto close = [&] { *target = trim_blank_lines(*target); };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!titled) {
      if (line.rfind("# ", 0) == 0) {
        out.title = line.substr(2);
        titled = true;
        target = &out.intro;
      }
      continue;
    }
    const std::string id = section_marker(line);
    if (!id.empty()) {
      close();
      out.sections.emplace_back(id, "");
      target = &out.sections.back().second;
      continue;
    }
    *target += line;
    *target += '\n';
  }
  if (!titled) throw DataError(fmt::format("{}: a lesson text starts with a '# Title' line", path));
  close();
  return out;
}

LessonText load_lesson_text(const LessonInfo& info, Lang lang) {
  const std::string path = fmt::format("{}/{}/{}", lessons_dir(), info.dir, readme_name(lang));
  std::ifstream in(path);
  if (!in)
    throw DataError(
        fmt::format("{}: cannot read the text of lesson {}; install dsgd again (cmake --install "
                    "build/default --prefix DIR)",
                    path, info.number));
  std::stringstream s;
  s << in.rdbuf();
  LessonText text = parse_lesson_text(s.str(), path);
  text.lang = lang;
  return text;
}

}  // namespace dsgd::lessons
