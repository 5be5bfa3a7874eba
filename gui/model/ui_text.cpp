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
      // timeline
      {"all", "全部"},
      // controls
      {"Lessons", "课程"},
      {"Simulation", "模拟设置"},
      {"View", "显示"},
      // messages
      {"messages", "条消息"},
      {"in flight", "在途"},
      {"(click a row to select its message)", "（点击一行即选中该消息）"},
      {"sent (ms)", "发送 (ms)"},
      {"took", "耗时"},
      {"from -> to", "源 -> 目的"},
      {"tag", "标签"},
      {"phase", "阶段"},
      {"bytes", "字节"},
      {"first values", "前几个值"},
      {"chunk", "块"},
      {"part", "段"},
      {"p2p", "点对点"},
      {"reduce-scatter", "归约散射"},
      {"all-gather", "全收集"},
      {"fold", "折叠"},
      {"unfold", "展开"},
      {"reduce", "归约"},
      {"broadcast", "广播"},
      {"to root", "发往根"},
      {"from root", "来自根"},
      {"round", "轮"},
      {"unknown", "未知"},
      {"halving (reduce-scatter)", "减半（归约散射）"},
      {"doubling (all-gather)", "加倍（全收集）"},
      {"reduce up, level", "向上归约，层"},
      {"broadcast down, level", "向下广播，层"},
      {"each rank adds the chunk it receives to its own", "每个进程把收到的块加到自己的块上"},
      {"each rank copies the finished chunk it receives", "每个进程复制收到的完整块"},
      {"partners swap halves and add: each keeps half", "伙伴交换一半并相加：各留一半"},
      {"partners swap their finished halves", "伙伴交换已完成的一半"},
      {"an extra rank hands its values to its partner", "多出的进程把值交给伙伴"},
      {"the partner hands the result back", "伙伴把结果交回"},
      {"each parent adds its children's values, up to the root",
       "每个父节点加上子节点的值，直到根"},
      {"the root's values go down to every rank", "根的值向下传到每个进程"},
      {"every rank sends its values to the root, which adds them", "每个进程把值发给根，由根相加"},
      {"the root sends the result to every rank", "根把结果发给每个进程"},
      {"a barrier round", "一轮屏障"},
      {"Bookmark (B)", "书签 (B)"},
      {"Remove", "删除"},
      // gradient averaging
      {"waiting for the first message", "等待第一条消息"},
      {"done, every rank holds the sum", "完成，每个进程都持有总和"},
      {"now", "现在"},
      {"before", "之前"},
      {"after: sum", "之后：总和"},
      {"after: sum / N", "之后：总和 / N"},
      {"each rank's own vector, before the all_reduce", "all_reduce 之前每个进程自己的向量"},
      {"the sum divided by N = {}: what ReduceOp::AVG gives",
       "总和除以 N = {}：即 ReduceOp::AVG 的结果"},
      {"sums (ReduceOp::SUM): AVG divides them by N = {} at the end",
       "这些是总和 (ReduceOp::SUM)：AVG 最后再除以 N = {}"},
      {"each rank scales its gradient by 1/B first: the sum is the mean",
       "每个进程先把梯度乘以 1/B：总和就是平均值"},
      {"step", "步"},
      {"loss", "损失"},
      // time breakdown
      {"compute", "计算"},
      {"transfer", "传输"},
      {"waiting", "等待"},
      {"other", "其他"},
      {"alpha-beta prediction", "alpha-beta 预测"},
      {"latest", "最新"},
      {"rank", "进程"},
      {" (the latest finished)", "（最近完成的）"},
      {" (not finished)", "（未完成）"},
      {"step {}{}: the slowest rank, rank {}, took {}.", "第 {} 步{}：最慢的是进程 {}，用时 {}。"},
      {"Rank {} computed {:.1f}x as long as the median rank: the others wait for it (red).",
       "进程 {} 的计算时间是中位数的 {:.1f} 倍：其他进程在等它（红色）。"},
      {"alpha-beta prediction for {} of {}: {} = {}, with a = {} latency and B = {} (the "
       "slowest link).",
       "{}（{}）的 alpha-beta 预测：{} = {}，延迟 a = {}，带宽 B = {}（最慢的链路）。"},
      {" The step's {} collectives together: {}.", " 本步全部 {} 个集合通信：{}。"},
      {"No training step yet. Where the time goes is shown per training step; the all_reduce "
       "demo has none.",
       "还没有训练步。时间去向按训练步显示；all_reduce 演示没有训练步。"},
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
