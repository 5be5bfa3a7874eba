#include "lessons/transcript_text.h"

#include <fmt/format.h>

namespace dsgd::lessons {

std::string transcript_header(const LessonText& text, int world, Lang lang, bool step) {
  std::string s = fmt::format("# {}\n", text.title);
  s += lang == Lang::zh ? fmt::format("{} 个秩 (rank)", world)
                        : fmt::format("{} rank{}", world, world == 1 ? "" : "s");
  if (step)
    s += lang == Lang::zh ? " · --step：每次暂停时按回车键继续（Ctrl-D：运行到结束）"
                          : " · --step: press Enter at each pause to go on (Ctrl-D: run to the "
                            "end)";
  s += "\n\n";
  if (!text.intro.empty()) s += text.intro + "\n";
  return s;
}

std::string transcript_footer(const Recorder& recorder, int world, Lang lang) {
  auto [messages, bytes] = recorder.totals(world);
  return lang == Lang::zh ? fmt::format("—— 本课结束：共 {} 条消息，{} 字节 ——\n", messages, bytes)
                          : fmt::format("-- end of lesson: {} message{}, {} bytes --\n", messages,
                                        messages == 1 ? "" : "s", bytes);
}

std::string finished_transcript(Recorder& recorder, const LessonText& text, int world, Lang lang) {
  std::string s = transcript_header(text, world, lang, false);
  s += recorder.take_ready(world, true, [&](const std::string& id) { return text.section(id); });
  if (!s.ends_with("\n\n")) s += s.ends_with('\n') ? "\n" : "\n\n";
  return s + transcript_footer(recorder, world, lang);
}

}  // namespace dsgd::lessons
