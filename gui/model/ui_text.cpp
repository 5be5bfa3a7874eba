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
      {"failed", "失败"},
      {"ended by a fault", "因故障结束"},
      {"replaying", "回放中"},
      {"replay paused", "回放已暂停"},
      // plots
      {"log scale", "对数坐标"},
      {"vs model time", "按模型时间"},
      {"loss", "损失"},
      {"accuracy", "准确率"},
      {"test accuracy", "测试准确率"},
      {"training accuracy", "训练准确率"},
      {"earlier run", "之前的运行"},
      {"training step", "训练步"},
      {"model time", "模型时间"},
      {"waiting for the first training step...", "等待第一个训练步……"},
      {"no loss curve (replay a trace with --metrics FILE)",
       "没有损失曲线（回放轨迹时请加 --metrics FILE）"},
      {"{}: chunk colours, brightness = ranks summed; {} of {} ranks hold the full sum",
       "{}：颜色为分块，亮度为已累加的秩数；{} / {} 个秩已得到完整的和"},
      {"{}: {} of {} ranks hold the full sum", "{}：{} / {} 个秩已得到完整的和"},
      {"No ranks yet.", "还没有秩。"},
      {"rank {}", "秩 {}"},
      // timeline legend
      {"compute:", "计算："},
      {"communication:", "通信："},
      {"message", "消息"},
      {"message ends", "消息端点"},
      {"now", "当前时刻"},
      // progress
      {"step {} / {} ({} done)", "第 {} / {} 步（已完成 {}）"},
      {"{} / {} steps done", "已完成 {} / {} 步"},
      {"{} / {} rounds done", "已完成 {} / {} 轮"},
      // timeline
      {"all", "全部"},
      // controls
      {"Lessons", "课程"},
      {"Simulation", "模拟设置"},
      {"View", "显示"},
      // layout (the View section)
      {"layout", "节点排布"},
      {"auto", "自动"},
      {"ring", "环形"},
      {"star", "星形"},
      {"grid", "网格"},
      {"theme", "主题"},
      {"dark", "深色"},
      {"light", "浅色"},
      {"projector", "投影"},
      {"UI scale", "界面缩放"},
      {"Reset layout", "重置窗口布局"},
      {"every window back in its place", "把每个窗口放回原位"},
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

std::string chinese_texts() {
  std::string out;
  for (const auto& [english, chinese] : table())
    out += chinese;
  return out;
}

}  // namespace dsgd::gui
