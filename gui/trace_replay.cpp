#include "gui/trace_replay.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace dsgd::gui {
namespace {

using nlohmann::json;

constexpr const char* kWriteAgain = "write the trace again with `dsgd train --trace FILE`";

// An event with the sort key that puts it back in causal order on its rank: by time; at one
// instant ends before begins, an enclosing slice's begin before its children's and its end
// after theirs.
struct Keyed {
  double ts_us;
  int phase;      // 0 end, 1 begin
  double order;   // begins: -duration (outer first); ends: duration (inner first)
  size_t serial;  // file order, for a stable result
  Event event;
};

double number(const json& obj, const char* key, double fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number()) throw DataError(fmt::format("'{}' is not a number", key));
  return it->get<double>();
}

}  // namespace

const char* Replay::intern(const std::string& s) {
  for (const std::string& n : names_)
    if (n == s) return n.c_str();
  names_.push_back(s);
  return names_.back().c_str();
}

Replay Replay::parse(std::string_view text, const std::string& name) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw DataError(fmt::format(
        "{}: not a Chrome trace: not JSON ({}); write one with `dsgd train --trace FILE`", name,
        e.what()));
  }
  const json* list = nullptr;
  if (doc.is_array())
    list = &doc;
  else if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array())
    list = &doc["traceEvents"];
  if (!list)
    throw DataError(fmt::format(
        "{}: not a Chrome trace: expected an object with a \"traceEvents\" array; write one "
        "with `dsgd train --trace FILE`",
        name));

  Replay out;
  out.name_ = name;
  std::vector<Keyed> keyed;
  bool all_model = true;
  size_t p2p = 0, serial = 0, index = 0;
  for (const json& item : *list) {
    ++index;
    try {
      if (!item.is_object()) throw DataError("not an object");
      if (item.value("ph", std::string()) != "X") continue;
      const std::string cat = item.value("cat", std::string());
      if (cat != "p2p" && cat != "compute" && cat != "collective" && cat != "step") continue;
      const json args = item.value("args", json::object());
      if (!args.is_object()) throw DataError("'args' is not an object");
      const int rank = static_cast<int>(number(item, "pid", -1));
      const double ts = number(item, "ts", -1), dur = number(item, "dur", 0);
      if (rank < 0 || rank >= 65536) throw DataError(fmt::format("bad pid {}", rank));
      if (ts < 0 && !item.contains("ts")) throw DataError("no 'ts'");
      if (dur < 0) throw DataError("negative 'dur'");
      const double model_begin = number(args, "model_s", -1);
      const double model_end = number(args, "model_end_s", model_begin);
      Event begin{.rank = rank, .wall_s = ts * 1e-6, .model_s = model_begin};
      Event end{.rank = rank, .wall_s = (ts + dur) * 1e-6, .model_s = model_end};
      if (cat == "p2p") {
        ++p2p;
        const std::string dir = args.value("dir", std::string());
        const int src = static_cast<int>(number(args, "src", -1));
        const int dst = static_cast<int>(number(args, "dst", -1));
        if ((dir != "send" && dir != "recv") || src < 0 || dst < 0)
          throw DataError("p2p slice without dir/src/dst");
        begin.tag = end.tag = static_cast<int>(number(args, "tag", 0));
        begin.bytes = end.bytes = static_cast<uint64_t>(number(args, "bytes", 0));
        begin.seq = end.seq = static_cast<uint64_t>(number(args, "k", 0));
        if (model_begin < 0) all_model = false;
        if (auto p = args.find("preview"); p != args.end() && p->is_array()) {
          for (const json& v : *p) {
            if (begin.preview_count >= 4) break;
            if (!v.is_number()) continue;
            begin.preview[begin.preview_count++] = v.get<float>();
          }
          end.preview = begin.preview;
          end.preview_count = begin.preview_count;
        }
        const bool send = dir == "send";
        begin.kind = send ? EventKind::send_begin : EventKind::recv_begin;
        end.kind = send ? EventKind::send_end : EventKind::recv_end;
        begin.peer = end.peer = send ? dst : src;
        begin.op = end.op = send ? "send" : "recv";
        if (send) end.model_s = -1;  // the send's buffer release has no model time
        out.world_ = std::max({out.world_, src + 1, dst + 1});
      } else {
        const std::string label = item.value("name", std::string());
        if (cat == "step") {
          begin.kind = EventKind::step_begin;
          end.kind = EventKind::step_end;
          begin.seq = end.seq = static_cast<uint64_t>(number(args, "step", 0));
          begin.op = end.op = "step";
        } else {
          const bool compute = cat == "compute";
          begin.kind = compute ? EventKind::compute_begin : EventKind::collective_begin;
          end.kind = compute ? EventKind::compute_end : EventKind::collective_end;
          begin.op = end.op = out.intern(label);
          begin.bytes = end.bytes = static_cast<uint64_t>(number(args, "bytes", 0));
        }
      }
      out.world_ = std::max(out.world_, rank + 1);
      keyed.push_back({ts, 1, -dur, serial++, begin});
      keyed.push_back({ts + dur, 0, dur, serial++, end});
    } catch (const DataError& e) {
      throw DataError(
          fmt::format("{}: malformed trace event #{}: {}; {}", name, index, e.what(), kWriteAgain));
    } catch (const json::exception& e) {
      throw DataError(
          fmt::format("{}: malformed trace event #{}: {}; {}", name, index, e.what(), kWriteAgain));
    }
  }
  if (keyed.empty())
    throw DataError(fmt::format(
        "{}: no dsgd events in this trace (expected slices of cat p2p, compute, collective or "
        "step, as `dsgd train --trace` writes)",
        name));
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    return std::tie(a.ts_us, a.phase, a.order, a.serial) <
           std::tie(b.ts_us, b.phase, b.order, b.serial);
  });
  out.time_base_ = (p2p > 0 && all_model) ? TimeBase::model : TimeBase::wall;
  out.events_.reserve(keyed.size());
  bool first = true;
  for (const Keyed& k : keyed) {
    out.events_.push_back(k.event);
    const Event& e = k.event;
    const double t = out.time_base_ == TimeBase::model ? e.model_s : e.wall_s;
    if (out.time_base_ == TimeBase::model && t < 0) continue;
    if (first || t < out.begin_s_) out.begin_s_ = t;
    if (first || t > out.end_s_) out.end_s_ = t;
    first = false;
  }
  // A model-time replay: events without model time (send ends) take their predecessor's.
  if (out.time_base_ == TimeBase::model) {
    std::vector<double> last(out.world_, 0.0);
    for (Event& e : out.events_) {
      if (e.model_s < 0) e.model_s = last[e.rank];
      last[e.rank] = std::max(last[e.rank], e.model_s);
    }
  }
  return out;
}

Replay Replay::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw DataError(
        fmt::format("{}: cannot open the trace; check the path (write one with "
                    "`dsgd train --trace FILE`)",
                    path));
  std::stringstream buffer;
  buffer << f.rdbuf();
  return parse(buffer.str(), path);
}

Curve load_metrics_curve(const std::string& path) {
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
