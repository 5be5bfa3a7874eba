#include "gui/model/ui_text.h"

#include <mutex>
#include <string>
#include <unordered_map>

namespace dsgd::gui {
namespace {

bool chinese_ = false;

// English -> Simplified Chinese. Keys are the English texts exactly as the views pass them
// (without any "###id" suffix); keep them sorted by view to find one.
const std::unordered_map<std::string_view, const char*>& table() {
  static const std::unordered_map<std::string_view, const char*> t{
      // status
      {"status", "状态"},
      {"not started", "未开始"},
      {"running", "运行中"},
      {"paused", "已暂停"},
      {"step mode", "单步模式"},
      {"finished", "已结束"},
      {"lesson finished", "本课结束"},
      {"failed", "失败"},
      {"ended by a fault", "因故障结束"},
      {"replaying", "回放中"},
      {"replay paused", "回放已暂停"},
      // plots
      {"log scale", "对数坐标"},
      {"vs model time", "按模型时间"},
      // timeline
      {"all", "全部"},
      {"follow now", "跟随当前"},
      {"follow the cursor", "跟随光标"},
      {"model time", "模型时间"},
      {"network time", "网络时间"},
      {"older events not kept", "更早的事件未保留"},
      // controls
      {"Lessons", "课程"},
      {"Simulation", "模拟设置"},
      {"View", "显示"},
  };
  return t;
}

}  // namespace

void set_ui_chinese(bool chinese) {
  chinese_ = chinese;
}
bool ui_chinese() {
  return chinese_;
}

const char* tr(const char* english) {
  if (!chinese_) return english;
  const std::string_view text(english);
  const size_t id = text.find("##");
  const auto it = table().find(text.substr(0, id));
  if (it == table().end()) return english;
  if (id == std::string_view::npos) return it->second;
  // Translation + the ID suffix, made once per label and kept.
  static std::mutex mutex;
  static std::unordered_map<std::string_view, std::string> with_id;
  std::lock_guard lock(mutex);
  auto [entry, fresh] = with_id.try_emplace(text);
  if (fresh) entry->second = std::string(it->second) + std::string(text.substr(id));
  return entry->second.c_str();
}

std::vector<std::string_view> translated_texts() {
  std::vector<std::string_view> out;
  for (const auto& [english, chinese] : table())
    out.push_back(english);
  return out;
}

}  // namespace dsgd::gui
