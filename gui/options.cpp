#include "gui/options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/errors.h"
#include "lessons/lesson.h"
#include "sim/link_model.h"
#include "sim/scenario.h"

namespace dsgd::gui {

GuiOptions parse_gui_options(const std::vector<std::string>& args) {
  GuiOptions o;
  CLI::App app{"dsgd-gui: watch messages move, gradients average and the loss converge"};
  std::string mode = "train", algorithm = "ring", latency, bandwidth, jitter, theme = "dark",
              view = "all";
  std::vector<std::string> stragglers, crashes;
  std::string lang = "en";
  app.add_option("--scenario", o.scenario, "Cluster scenario (TOML, see assets/scenarios/)");
  app.add_option("--replay", o.replay, "Replay a Chrome trace written by `dsgd train --trace`");
  app.add_option("--metrics", o.replay_metrics, "Loss curve for the replay (metrics JSONL)");
  app.add_option("--lesson", o.lesson, "Open lesson N (dsgd lesson list) in step mode");
  app.add_option("--lang", lang, "Lesson language: en or zh (简体中文)");
  app.add_option("--mode", mode, "train | allreduce (the all_reduce demo)");
  app.add_option("--nodes", o.sim.nodes, "Simulated nodes (default 4)");
  app.add_option("--algorithm", algorithm,
                 "all_reduce algorithm: ring | naive | tree | halving_doubling");
  app.add_option("--latency", latency, "One-way link latency, e.g. 2ms");
  app.add_option("--bandwidth", bandwidth, "Link bandwidth, e.g. 1Gbit");
  app.add_option("--jitter", jitter, "Extra one-way delay, e.g. 200us");
  app.add_option("--loss", o.sim.loss, "Probability a message is lost and resent");
  app.add_option("--straggler", stragglers, "RANK:FACTOR (repeatable)");
  app.add_option("--crash", crashes, "RANK@STEP (repeatable)");
  app.add_option("--model", o.sim.model, "softmax | mlp:H[,H...] | linear");
  app.add_option("--data", o.sim.data, "Dataset spec (default synthetic)");
  app.add_option("--lr", o.sim.lr, "Learning rate");
  app.add_option("--batch", o.sim.batch, "Global batch size");
  app.add_option("--steps", o.sim.steps, "Training steps (all_reduce rounds in the demo)");
  app.add_option("--speed", o.sim.speed, "Network clock speed, 0.001 to 1000 (0.1 = slow motion)");
  app.add_flag("--step-mode", o.sim.step_mode, "Start with every message held until stepped");
  app.add_option("--view", view,
                 "all | topology | convergence | timeline | gradients | controls | lesson");
  app.add_option("--theme", theme, "dark | light | projector");
  app.add_option("--scale", o.view_settings.ui_scale, "UI scale (projector: 1.5 to 2)");
  app.add_option("--font", o.font, "Font file with CJK glyphs");
  app.add_flag("--chinese", o.view_settings.chinese, "Window titles in Simplified Chinese too");
  app.add_option("--width", o.width, "Window width");
  app.add_option("--height", o.height, "Window height");
  app.add_flag("--headless", o.headless, "Render --frames frames and write --screenshot");
  app.add_option("--frames", o.frames, "Headless: frames to render");
  app.add_option("--screenshot", o.screenshot, "Headless: PNG to write");
  app.add_option("--min-steps", o.min_steps, "Headless: wait for this many steps first");
  app.add_option("--step-messages", o.step_messages, "Headless: step this many messages first");
  app.add_option("--seek", o.seek, "Replay: cursor at this fraction of the trace (0..1), paused");
  app.add_option("--timeout", o.timeout_s, "Headless: seconds to wait for --min-steps");
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    throw HelpRequested{app.help()};
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("dsgd-gui: {}; see dsgd-gui --help", e.what()));
  }

  if (mode == "train")
    o.sim.mode = RunMode::train;
  else if (mode == "allreduce" || mode == "all_reduce")
    o.sim.mode = RunMode::allreduce_demo;
  else
    throw UsageError(fmt::format("--mode {}: use train or allreduce", mode));
  o.sim.algorithm = parse_algorithm(algorithm);
  if (auto v = parse_view(view))
    o.view = *v;
  else
    throw UsageError(fmt::format(
        "--view {}: use all, topology, convergence, timeline, gradients, controls or lesson",
        view));
  if (theme == "dark")
    o.view_settings.theme = Theme::dark;
  else if (theme == "light")
    o.view_settings.theme = Theme::light;
  else if (theme == "projector")
    o.view_settings.theme = Theme::projector;
  else
    throw UsageError(fmt::format("--theme {}: use dark, light or projector", theme));
  if (o.view_settings.theme == Theme::projector && o.view_settings.ui_scale == 1.0f)
    o.view_settings.ui_scale = 1.75f;
  if (o.view_settings.ui_scale < 0.5f || o.view_settings.ui_scale > 4.0f)
    throw UsageError("--scale: use 0.5 to 4");
  if (o.width < 200 || o.height < 200 || o.width > 8192 || o.height > 8192)
    throw UsageError("--width/--height: use 200 to 8192 pixels");
  if (o.headless && o.screenshot.empty())
    throw UsageError("--headless needs --screenshot FILE.png");
  if (o.frames < 1) throw UsageError("--frames: at least 1");
  o.lesson_zh = lessons::parse_lang(lang) == lessons::Lang::zh;
  if (o.lesson != 0) {
    if (!o.replay.empty()) throw UsageError("--lesson and --replay: choose one");
    lessons::find_lesson(o.lesson);  // UsageError naming the lessons there are
  }

  // A scenario sets the cluster; explicit flags below override it, as in `dsgd train`.
  if (!o.scenario.empty()) {
    sim::Scenario sc = sim::load_scenario(o.scenario);
    if (sc.nodes) o.sim.nodes = *sc.nodes;
    o.sim.latency_s = sc.network.link.latency_s;
    o.sim.bandwidth_Bps = sc.network.link.bandwidth_Bps;
    o.sim.jitter_s = sc.network.link.jitter_s;
    o.sim.loss = sc.network.link.loss;
    for (const auto& [rank, node] : sc.faults) {
      if (node.straggler != 1.0) o.sim.stragglers[rank] = node.straggler;
      if (node.crash_at_step) o.sim.crashes[rank] = *node.crash_at_step;
    }
    const auto slash = o.scenario.find_last_of('/');
    o.sim.scenario_name = o.scenario.substr(slash == std::string::npos ? 0 : slash + 1);
    o.sim.scenario = std::move(sc);
  }
  if (!latency.empty()) o.sim.latency_s = sim::parse_duration_s(latency, "--latency");
  if (!bandwidth.empty()) o.sim.bandwidth_Bps = sim::parse_bandwidth_Bps(bandwidth, "--bandwidth");
  if (!jitter.empty()) o.sim.jitter_s = sim::parse_duration_s(jitter, "--jitter");
  const auto number = [](const std::string& text, const std::string& flag, const char* form) {
    try {
      size_t used = 0;
      const double v = std::stod(text, &used);
      if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    throw UsageError(fmt::format("{} '{}': write {}", flag, text, form));
  };
  for (const std::string& s : stragglers) {
    const auto colon = s.find(':');
    if (colon == std::string::npos)
      throw UsageError(fmt::format("--straggler '{}': write RANK:FACTOR, e.g. 2:3", s));
    const char* form = "RANK:FACTOR, e.g. 2:3";
    o.sim.stragglers[static_cast<int>(number(s.substr(0, colon), "--straggler", form))] =
        number(s.substr(colon + 1), "--straggler", form);
  }
  for (const std::string& s : crashes) {
    const auto at = s.find('@');
    if (at == std::string::npos)
      throw UsageError(fmt::format("--crash '{}': write RANK@STEP, e.g. 1@20", s));
    const char* form = "RANK@STEP, e.g. 1@20";
    o.sim.crashes[static_cast<int>(number(s.substr(0, at), "--crash", form))] =
        static_cast<int64_t>(number(s.substr(at + 1), "--crash", form));
  }
  if (o.sim.nodes < 1 || o.sim.nodes > 256) throw UsageError("--nodes: use 1 to 256");
  if (o.sim.speed < 0.001 || o.sim.speed > 1000) throw UsageError("--speed: use 0.001 to 1000");
  return o;
}

}  // namespace dsgd::gui
