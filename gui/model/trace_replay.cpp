#include "gui/model/trace_replay.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/comm/collective_tags.h"
#include "core/errors.h"
#include "core/io/trace_summary.h"
#include "core/io/input_file.h"

namespace dsgd::gui {

using nlohmann::json;

Replay::Replay(TraceEvents trace, std::string name)
    : trace_(std::move(trace)), name_(std::move(name)) {
  if (trace_.summary.ranks == 0 && trace_.world > kMaxTraceLanes) summarize();
  for (const Event& e : trace_.events) {
    const CollectiveTag* c = find_collective_tag(e.tag);
    if (e.kind == EventKind::send_begin && c && c->op == CollectiveOp::all_reduce) {
      all_reduce_algorithm_ = c->algorithm;
      break;
    }
  }
}

// In place, in the order the snapshot takes them (by time, as read).
void Replay::summarize() {
  std::vector<Event> events = summarize_events(trace_.events, trace_.world, kSummaryGroups);
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.wall_s < b.wall_s; });
  trace_.events = std::move(events);
  trace_.summary = {.ranks = trace_.world, .groups = kSummaryGroups};
  trace_.world = kSummaryGroups;
}

Replay Replay::parse(std::string_view text, const std::string& name) {
  return Replay(read_trace_events(text, name), name);
}

Replay Replay::load(const std::string& path) {
  return Replay(load_trace_events(path), path);
}

Curve load_metrics_curve(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) check_input_file(path, kGiB, "a metrics file");
  std::ifstream f(path);
  if (!f)
    throw DataError(
        fmt::format("{}: cannot open the metrics file; check the path (write one with `dsgd train "
                    "--metrics FILE`)",
                    path));
  Curve curve{.label = path};
  std::string line;
  int number_of_line = 0;
  while (std::getline(f, line)) {
    ++number_of_line;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const json j = json::parse(line);
      CurvePoint p;
      p.step = j.at("step").get<int64_t>();
      p.loss = j.at("loss").get<double>();
      p.wall_s = j.value("wall_s", 0.0);
      p.model_s = j.value("model_s", p.wall_s);
      p.train_accuracy = j.value("train_accuracy", -1.0);
      p.test_accuracy = j.value("test_accuracy", -1.0);
      curve.points.push_back(p);
    } catch (const json::exception& e) {
      throw DataError(fmt::format(
          "{}:{}: not a metrics line: {}; give the JSONL file that `dsgd train --metrics` wrote",
          path, number_of_line, e.what()));
    }
  }
  return curve;
}

}  // namespace dsgd::gui
