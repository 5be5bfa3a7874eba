#include "gui/model/ui_text.h"

#include <mutex>
#include <string>
#include <iterator>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace dsgd::gui {
namespace {

bool chinese_ = false;

// English -> Simplified Chinese. Keys are the English texts exactly as the views pass them
// (without any "###id" suffix); keep them sorted by view to find one.
constexpr std::pair<std::string_view, const char*> kChinese[] = {
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
    {"ranks {}-{}", "秩 {}-{}"},
    {"watching {}: waiting for a run (--monitor)", "正在观察 {}：等待运行接入（--monitor）"},
    {"watching {}: {}", "正在观察 {}：{}"},
    {"{} connected, {} events dropped, {} refused", "已连接 {} 个，丢弃 {} 个事件，拒绝 {} 个"},
    // classroom
    {"classroom on port {}: {} joined", "课堂（端口 {}）：已加入 {} 人"},
    {"classroom on port {}: run {} on {}", "课堂（端口 {}）：第 {} 次运行，{}"},
    {"{} laptop", "{} 台笔记本"},
    {"{} laptops", "{} 台笔记本"},
    {"Students join with:", "学生用这条命令加入："},
    {"nobody has joined yet", "还没有人加入"},
    {"student", "学生"},
    {"state", "状态"},
    {"left", "已离开"},
    {"rank {}, running", "秩 {}，运行中"},
    {"rank {} of run {}: finished", "秩 {}（第 {} 次运行）：已完成"},
    {"rank {} of run {}: {}", "秩 {}（第 {} 次运行）：{}"},
    {"Start training on {}", "在 {} 上开始训练"},
    {"Start lesson {} on {}", "开始第 {} 课（{}）"},
    {"lesson {} needs {}; {} waiting", "第 {} 课需要 {}；{} 台在等待"},
    {"run {}: {}, running", "第 {} 次运行：{}，运行中"},
    {"run {}: {}, ended", "第 {} 次运行：{}，已结束"},
    {"{} refused (latest: {})", "拒绝 {} 个（最近：{}）"},
    {"these apply at Start:", "以下设置在开始时生效："},
    {"The laptops' training run", "笔记本上的训练"},
    {"go on when a laptop leaves (elastic)", "有笔记本离开时继续（弹性）"},
    {"Add {} to run {}", "把 {} 加入第 {} 次运行"},
    {"joining run {}", "正在加入第 {} 次运行"},
    {"joined run {}: finished", "加入了第 {} 次运行：已完成"},
    {"joined run {}: {}", "加入了第 {} 次运行：{}"},
    {"no student is waiting: each joins with the command shown",
     "没有学生在等待：每人用显示的命令加入"},
    {"nodes are groups of ranks (node 1: ranks {}-{})  |  {}",
     "节点为秩的分组（节点 1：秩 {}-{}）  |  {}"},
    {"A summary of many ranks: open a trace written with --trace-groups 0 to follow each "
     "rank's sums.",
     "这是多个秩的汇总：要逐个秩查看求和，请打开用 --trace-groups 0 写出的轨迹。"},
    {" ({} ranks shown as {} groups)", "（{} 个秩分成 {} 组显示）"},
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
    {"follow now", "跟随当前"},
    {"follow the cursor", "跟随光标"},
    {"older events not kept", "更早的事件未保留"},
    {"{} messages: their ends only (zoom in, or hover one, for lines)",
     "{} 条消息：只画两端（放大，或把鼠标移到某条上，才画出连线）"},
    // lesson
    {"no lessons found", "没有找到课程"},
    {"Open lesson", "打开课程"},
    {"Pick a lesson and open it: it runs on simulated nodes, one message at a time.",
     "选一课并打开: 它在模拟节点上运行, 一次一条消息。"},
    {"section", "节"},
    {"ranks", "个秩"},
    {"-- end of lesson --", "—— 本课结束 ——"},
    // controls: running
    {"Play", "播放"},
    {"Pause", "暂停"},
    {"Run again", "再运行一次"},
    {"Step message", "单步: 一条消息"},
    {"Step training step", "单步: 一个训练步"},
    {"step mode (hold every message)", "单步模式 (每条消息都等待)"},
    {"speed", "速度"},
    {"step", "步"},
    {"round", "轮"},
    {"time", "时间"},
    {"replay speed", "回放速度"},
    {"selected", "已选中"},
    {"clear", "清除"},
    // controls: settings
    {"these apply at Restart:", "以下设置在重新开始时生效:"},
    {"the network applies now:", "网络设置立即生效:"},
    {"mode", "模式"},
    {"nodes", "节点数"},
    {"algorithm", "算法"},
    {"latency", "延迟"},
    {"bandwidth", "带宽"},
    {"jitter", "抖动"},
    {"packet loss", "丢包"},
    {"model", "模型"},
    {"dataset", "数据集"},
    {"lr", "学习率"},
    {"batch", "批大小"},
    {"steps", "步数"},
    {"faults", "故障"},
    {"straggler x3", "慢节点 x3"},
    {"straggler x3 [on]", "慢节点 x3 [开]"},
    {"crash", "崩溃"},
    {"crash [on]", "崩溃 [开]"},
    {"at step", "在第几步"},
    {"Restart with these settings", "用这些设置重新开始"},
    // controls: export
    {"Save PNG", "保存 PNG"},
    {"Save PNG of one view", "保存某个视图的 PNG"},
    {"Record GIF", "录制 GIF"},
    {"Stop recording", "停止录制"},
    // controls: sections
    {"Lessons", "课程"},
    {"Simulation", "模拟设置"},
    {"View", "显示"},
    // topology
    {"No ranks yet: start a run or open a trace.", "还没有秩：开始一次运行或打开一个跟踪文件。"},
    {"No run yet: the laptops that join are listed in the controls, which start a training "
     "run or a lesson on them.",
     "还没有运行：加入的笔记本列在控制面板中，可在它们上面开始训练或一节课。"},
    {"rank", "秩"},
    {", switches inside", "，交换机在圈内"},
    {"step {}", "第 {} 步"},
    {"{}x{:.3g} slower", "{}慢 {:.3g} 倍"},
    {"crashed", "已崩溃"},
    {"links as recorded", "链路按记录"},
    {"rank 0 in the middle", "秩 0 居中"},
    {"nodes on a grid", "节点排成网格"},
    {"nodes on a circle", "节点排成一圈"},
    {"network time", "网络时间"},
    {"{} in flight", "{} 条在途"},
    {"{} in flight, drawn as {}", "{} 条在途，合并画成 {} 个"},
    {"{} in flight, {} drawn ({} to itself)", "{} 条在途，画出 {} 条（{} 条发给自己）"},
    {"{} in flight, {} drawn as {} ({} to itself)", "{} 条在途，{} 条画成 {} 个（{} 条发给自己）"},
    {", {} lost", "，{} 条丢失"},
    {"reduce", "归约"},
    {"bcast", "广播"},
    {"fold", "折叠"},
    {"unfold", "展开"},
    {"exchange", "交换"},
    {"to root", "发往根"},
    {"from root", "来自根"},
    {"tag", "标签"},
    {"lost", "丢失"},
    {"resent", "重传"},
    {"resent {}x", "重传 {} 次"},
    {"red rim: lost on the way, resent", "红边：途中丢失，已重传"},
    {"grey, crossed: lost, never received", "灰色打叉：丢失，永远收不到"},
    {"partition:", "网络分区："},
    {"links down:", "链路中断："},
    {" until {}", "，直到 {}"},
    {"(for good)", "（永久）"},
    {"tag {}, message #{}, {}", "标签 {}，第 {} 条消息，{}"},
    {"sent", "发送于"},
    {"due about", "预计到达约"},
    {"arrives", "到达于"},
    {"held by a link down until {}", "链路中断，滞留到 {}"},
    {"{}, step {} of {}", "{}，第 {} 步（共 {} 步）"},
    {"p2p", "点对点"},
    {"reduce-scatter", "归约-散射"},
    {"all-gather", "全收集"},
    {"broadcast", "广播"},
    {"unknown", "未知"},
    {"chunk {}: values of {} of {} ranks", "块 {}：含 {} 个秩的值（共 {} 个）"},
    {"carries the values of {} of {} ranks", "含 {} 个秩的值（共 {} 个）"},
    {"first values", "前几个值"},
    {"lost {} times on the way and resent", "途中丢失 {} 次，已重传"},
    {"lost: never received (a rank at either end crashed, or the run ended)",
     "丢失：永远收不到（一端的秩已崩溃，或运行已结束）"},
    {"{} messages on this link drawn as one", "这条链路上的 {} 条消息画成一个"},
    // gradients
    {"chunk colours, brightness = ranks summed", "颜色 = 块，亮度 = 已求和的秩数"},
    {"{} of {} ranks hold the full sum", "{} / {} 个秩持有完整的和"},
    {"{} of {} alive ranks hold the full sum ({} crashed)",
     "{} / {} 个存活的秩持有完整的和（{} 个已崩溃）"},
    // run descriptions (the title and the network's caption: sim::RunWords)
    {"training", "训练"},
    {"all_reduce demo", "all_reduce 演示"},
    {"replay", "回放"},
    {"{} nodes", "{} 个节点"},
    {"straggler", "慢节点"},
    {"latency {}", "延迟 {}"},
    {"latency {} a link", "每段链路延迟 {}"},
    {"bandwidth {}", "带宽 {}"},
    {"jitter {}", "抖动 {}"},
    {"loss {:g}", "丢包率 {:g}"},
    {"link {}->{}", "链路 {}->{}"},
    {"links from {}", "从秩 {} 发出的链路"},
    {"links to {}", "到秩 {} 的链路"},
    {"every link", "所有链路"},
    {"{} link overrides", "{} 处链路单独设置"},
    {"faulty nodes: {}", "故障节点：{}"},
    {"outages: {}", "中断：{}"},
    {"{:g} MB buckets", "{:g} MB 的桶"},
    {"local SGD every {} steps from step {}", "本地 SGD：每 {} 步平均一次，从第 {} 步起"},
    {"{} compression", "{} 梯度压缩"},
    {"parameter servers {}, max staleness {}", "参数服务器 {} 个，陈旧度上限 {}"},
    {"unbounded", "无"},
    {"The run ended by a fault (Esc closes this)", "运行因故障结束（按 Esc 关闭）"},
    {"Error (Esc closes this)", "错误（按 Esc 关闭）"},
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
    // messages
    {"messages", "条消息"},
    {"in flight", "在途"},
    {"(click a row to select its message)", "（点击一行即选中该消息）"},
    {"sent (ms)", "发送 (ms)"},
    {"took", "耗时"},
    {"from -> to", "源 -> 目的"},
    {"phase", "阶段"},
    {"bytes", "字节"},
    {"chunk", "块"},
    {"part", "段"},
    {"halving (reduce-scatter)", "减半（归约-散射）"},
    {"doubling (all-gather)", "加倍（全收集）"},
    {"reduce up, level", "向上归约，层"},
    {"broadcast down, level", "向下广播，层"},
    {"each rank adds the chunk it receives to its own", "每个秩把收到的块加到自己的块上"},
    {"each rank copies the finished chunk it receives", "每个秩复制收到的完整块"},
    {"partners swap halves and add: each keeps half", "伙伴交换一半并相加：各留一半"},
    {"partners swap their finished halves", "伙伴交换已完成的一半"},
    {"an extra rank hands its values to its partner", "多出的秩把值交给伙伴"},
    {"partners swap their whole buffers and add", "伙伴交换整个缓冲区并相加"},
    {"the partner hands the result back", "伙伴把结果交回"},
    {"each parent adds its children's values, up to the root", "每个父节点加上子节点的值，直到根"},
    {"the root's values go down to every rank", "根的值向下传到每个秩"},
    {"every rank sends its values to the root, which adds them", "每个秩把值发给根，由根相加"},
    {"the root sends the result to every rank", "根把结果发给每个秩"},
    {"a barrier round", "一轮屏障"},
    {"Bookmark (B)", "书签 (B)"},
    {"Remove", "删除"},
    // gradient averaging
    {"waiting for the first message", "等待第一条消息"},
    {"done, every rank holds the sum", "完成，每个秩都持有总和"},
    {"before", "之前"},
    {"after: sum", "之后：总和"},
    {"after: sum / N", "之后：总和 / N"},
    {"each rank's own vector, before the all_reduce", "all_reduce 之前每个秩自己的向量"},
    {"the sum divided by N = {}: what ReduceOp::AVG gives",
     "总和除以 N = {}：即 ReduceOp::AVG 的结果"},
    {"sums (ReduceOp::SUM): AVG divides them by N = {} at the end",
     "这些是总和 (ReduceOp::SUM)：AVG 最后再除以 N = {}"},
    {"each rank scales its gradient by 1/B first: the sum is the mean",
     "每个秩先把梯度乘以 1/B：总和就是平均值"},
    // time breakdown
    {"compute", "计算"},
    {"transfer", "传输"},
    {"waiting", "等待"},
    {"other", "其他"},
    {"alpha-beta prediction", "alpha-beta 预测"},
    {"latest", "最新"},
    {" (the latest finished)", "（最近完成的）"},
    {" (not finished)", "（未完成）"},
    {"step {}{}: the slowest rank, rank {}, took {}.", "第 {} 步{}：最慢的是秩 {}，用时 {}。"},
    {"Rank {} computed {:.1f}x as long as the median rank: the others wait for it (red).",
     "秩 {} 的计算时间是中位数的 {:.1f} 倍：其他秩在等它（红色）。"},
    {"alpha-beta prediction for {} of {}: {} = {}, with a = {} latency and B = {} (the "
     "slowest link).",
     "{}（{}）的 alpha-beta 预测：{} = {}，延迟 a = {}，带宽 B = {}（最慢的链路）。"},
    {" The step's {} collectives together: {}.", " 本步全部 {} 个集合通信：{}。"},
    {"No training step yet. Where the time goes is shown per training step; the all_reduce "
     "demo has none.",
     "还没有训练步。时间去向按训练步显示；all_reduce 演示没有训练步。"},
};

// A second entry for a key would be dropped without a word: refuse it when compiling.
constexpr bool keys_unique() {
  for (size_t i = 0; i < std::size(kChinese); ++i)
    for (size_t j = i + 1; j < std::size(kChinese); ++j)
      if (kChinese[i].first == kChinese[j].first) return false;
  return true;
}
static_assert(keys_unique(), "an English text appears twice in the translation table");

const std::unordered_map<std::string_view, const char*>& table() {
  static const std::unordered_map<std::string_view, const char*> t(std::begin(kChinese),
                                                                   std::end(kChinese));
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

std::string laptops(int n) {
  return fmt::format(fmt::runtime(tr(n == 1 ? "{} laptop" : "{} laptops")), n);
}

std::string translations_text() {
  std::string out;
  for (const auto& [english, chinese] : table())
    out += chinese;
  return out;
}

std::vector<std::string_view> translated_texts() {
  std::vector<std::string_view> out;
  for (const auto& [english, chinese] : table())
    out.push_back(english);
  return out;
}

}  // namespace dsgd::gui
