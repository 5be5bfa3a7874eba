#include "gui/model/trace_replay.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/comm/collective_tags.h"
#include "core/errors.h"
#include "core/io/input_file.h"

namespace dsgd::gui {

using nlohmann::json;

Replay::Replay(TraceEvents trace, std::string name)
    : trace_(std::move(trace)), name_(std::move(name)) {
  if (trace_.world > kMaxReplayRanks)
    throw DataError(fmt::format(
        "{}: {} ranks; dsgd-gui shows at most {} (dsgd trace check reads it, Perfetto shows it)",
        name_, trace_.world, kMaxReplayRanks));
  for (const Event& e : trace_.events) {
    const CollectiveTag* c = find_collective_tag(e.tag);
    if (e.kind == EventKind::send_begin && c && c->op == CollectiveOp::all_reduce) {
      all_reduce_algorithm_ = c->algorithm;
      break;
    }
  }
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
