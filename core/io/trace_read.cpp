// Reading Chrome traces back: the document (shared with trace_check.cpp), the event stream
// it was written from (the GUI's replay), and merging per-rank files into one.
// Sections: [document] [events] [merge].
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/io/atomic_file.h"
#include "core/io/trace.h"
#include "core/io/trace_document.h"

namespace dsgd {
namespace td = trace_detail;
using Json = td::json;  // not `json`: other files mean nlohmann::json by it

// ---------------------------------------------------------------------------------------
// [document]
// ---------------------------------------------------------------------------------------

namespace trace_detail {

void not_a_trace(const std::string& name, const std::string& why) {
  throw DataError(fmt::format(
      "{}: not a Chrome trace: {}; give a file written by dsgd train --trace", name, why));
}

std::string read_whole(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) check_input_file(path, 2 * kGiB, "a trace");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DataError(fmt::format(
        "{}: cannot open the trace: {}; check the path (write one with dsgd train --trace FILE)",
        path, std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw DataError(fmt::format("{}: read failed", path));
  return s.str();
}

Document parse_document(std::string_view text, const std::string& name) {
  Document d;
  try {
    d.root = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for 1e999
    std::string why = e.what();
    if (const auto p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);
    not_a_trace(name, "invalid JSON: " + why);
  }
  if (d.root.is_array()) {
    d.events = &d.root;
  } else if (d.root.is_object() && d.root.contains("traceEvents") &&
             d.root["traceEvents"].is_array()) {
    d.events = &d.root["traceEvents"];
  } else {
    not_a_trace(name, "expected an object with a \"traceEvents\" array");
  }
  return d;
}

Document parse_trace(std::string_view text, const std::string& name) {
  Document d = parse_document(text, name);
  for (size_t i = 0; i < d.events->size(); ++i) {
    const Json& e = (*d.events)[i];
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string())
      not_a_trace(name, fmt::format("event {} is not an object with a \"ph\" string", i));
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (!e.contains("pid") || !e["pid"].is_number_integer())
        not_a_trace(name, fmt::format("metadata event {} has no integer pid", i));
      continue;
    }
    if (ph != "X" && ph != "B" && ph != "E" && ph != "i" && ph != "I" && ph != "s" && ph != "t" &&
        ph != "f")
      continue;  // counters, async events...: kept, not checked
    for (const char* key : {"pid", "tid"})
      if (!e.contains(key) || !e[key].is_number_integer())
        not_a_trace(name, fmt::format("event {} (ph \"{}\") has no integer {}", i, ph, key));
    if (!e.contains("ts") || !e["ts"].is_number())
      not_a_trace(name, fmt::format("event {} (ph \"{}\") has no numeric ts", i, ph));
    if (ph == "X" && (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0))
      not_a_trace(name, fmt::format("event {} (ph \"X\") has no dur >= 0", i));
  }
  return d;
}

namespace {

const Json* other_data(const Document& d, const char* key) {
  if (!d.root.is_object() || !d.root.contains("otherData")) return nullptr;
  const Json& o = d.root["otherData"];
  return o.is_object() && o.contains(key) ? &o[key] : nullptr;
}

}  // namespace

std::string time_base_of(const Document& d) {
  const Json* base = other_data(d, "time_base");
  return base && base->is_string() ? base->get<std::string>() : "wall";
}

std::string run_json_of(const Document& d) {
  const Json* run = other_data(d, "run");
  return run && run->is_object() ? run->dump() : "";
}

TraceSummary summary_of(const Document& d) {
  const Json* s = other_data(d, "summary");
  if (!s || !s->is_object()) return {};
  const auto count = [s](const char* key) {
    const auto it = s->find(key);
    return it != s->end() && it->is_number_integer() ? it->get<int>() : 0;
  };
  const int ranks = count("ranks"), groups = count("groups");
  if (ranks < 2 || groups < 1 || groups >= ranks) return {};
  return {.ranks = ranks, .groups = groups};
}

bool is_flow(const Json& e) {
  const std::string ph = e["ph"];
  return ph == "s" || ph == "t" || ph == "f";
}

bool message_end(const Json& e, MessageEnd& m, std::string* why) {
  if (e["ph"] != "X" || !e.contains("cat") || e["cat"] != kP2pCat) return false;
  const Json* args = e.contains("args") && e["args"].is_object() ? &e["args"] : nullptr;
  for (const char* key : {"src", "dst", "tag", "k"}) {
    if (!args || !args->contains(key) || !(*args)[key].is_number_integer()) {
      if (why) *why = fmt::format("has no integer args.{}", key);
      return false;
    }
  }
  if (!args->contains("dir") || ((*args)["dir"] != "send" && (*args)["dir"] != "recv")) {
    if (why) *why = "has no args.dir \"send\" or \"recv\"";
    return false;
  }
  m.pid = e["pid"];
  m.tid = e["tid"];
  m.start_ns = us_to_ns(e["ts"].get<double>());
  m.end_ns = m.start_ns + us_to_ns(e["dur"].get<double>());
  for (const char* key : {"src", "dst"}) {
    const int64_t rank = (*args)[key].get<int64_t>();
    if (rank < 0 || rank >= kMaxTraceRanks) {
      if (why)
        *why = fmt::format("names rank {} in args.{}: a trace holds ranks 0 to {}", rank, key,
                           kMaxTraceRanks - 1);
      return false;
    }
  }
  m.src = (*args)["src"];
  m.dst = (*args)["dst"];
  m.tag = (*args)["tag"];
  m.k = (*args)["k"];
  m.is_send = (*args)["dir"] == "send";
  m.abandoned = args->contains("abandoned") && (*args)["abandoned"] == true;
  return true;
}

}  // namespace trace_detail

// ---------------------------------------------------------------------------------------
// [events]
// ---------------------------------------------------------------------------------------

namespace {

constexpr const char* kWriteAgain = "write the trace again with `dsgd train --trace FILE`";

double number(const Json& obj, const char* key, double fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number()) throw DataError(fmt::format("'{}' is not a number", key));
  return it->get<double>();
}

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

// Turns dsgd's slices back into begin and end events, one traceEvents entry at a time.
class EventReader {
 public:
  void read(const Json& item);
  TraceEvents finish(const std::string& name);

 private:
  void read_note(const Json& item);
  void read_slice(const Json& item, const std::string& cat);
  void read_message(const Json& args, Event& begin, Event& end);
  void read_phase(const Json& item, const std::string& cat, const Json& args, Event& begin,
                  Event& end);
  void push(double ts_us, double dur_us, const Event& begin, const Event* end);
  const char* intern(const std::string& s);

  TraceEvents out_;
  std::vector<Keyed> keyed_;
  bool all_model_ = true;
  size_t messages_ = 0, serial_ = 0;
};

const char* EventReader::intern(const std::string& s) {
  for (const std::string& n : out_.names)
    if (n == s) return n.c_str();
  out_.names.push_back(s);
  return out_.names.back().c_str();
}

void EventReader::push(double ts_us, double dur_us, const Event& begin, const Event* end) {
  out_.world = std::max(out_.world, begin.rank + 1);
  keyed_.push_back({ts_us, 1, -dur_us, serial_++, begin});
  if (end) keyed_.push_back({ts_us + dur_us, 0, dur_us, serial_++, *end});
}

// The rank a number names, or DataError: a trace holds ranks 0 .. kMaxTraceRanks - 1.
int checked_rank(double value, const char* where) {
  if (!(value >= 0 && value < td::kMaxTraceRanks))
    throw DataError(fmt::format("rank {} in '{}': a dsgd trace holds ranks 0 to {}", value, where,
                                td::kMaxTraceRanks - 1));
  return static_cast<int>(value);
}

// A note: an instant, with the message it is about (peer, tag, seq) when it names one.
void EventReader::read_note(const Json& item) {
  const int rank = checked_rank(number(item, "pid", -1), "pid");
  const double ts = number(item, "ts", 0);
  const Json args = item.value("args", Json::object());
  if (!args.is_object()) throw DataError("'args' is not an object");
  const double peer = number(args, "peer", -1);
  push(ts, 0,
       {.kind = EventKind::note,
        .rank = rank,
        .peer = peer < 0 ? -1 : checked_rank(peer, "args.peer"),
        .tag = static_cast<int>(number(args, "tag", 0)),
        .seq = static_cast<uint64_t>(std::max(0.0, number(args, "seq", 0))),
        .wall_s = ts * 1e-6,
        .model_s = -1,
        .op = intern(item.value("name", std::string()))},
       nullptr);
}

void EventReader::read(const Json& item) {
  if (!item.is_object()) throw DataError("not an object");
  const std::string ph = item.value("ph", std::string());
  const std::string cat = item.value("cat", std::string());
  if (ph == "i" && cat == td::kNoteCat) return read_note(item);
  if (ph != "X") return;
  for (const char* known :
       {td::kP2pCat, td::kComputeCat, td::kCollectiveCat, td::kStepCat, td::kPendingCat})
    if (cat == known) return read_slice(item, cat);
}

// One "X" slice of a dsgd category: its begin event, and its end unless it is marked
// unfinished (still open when the trace was written).
void EventReader::read_slice(const Json& item, const std::string& cat) {
  const Json args = item.value("args", Json::object());
  if (!args.is_object()) throw DataError("'args' is not an object");
  const int rank = checked_rank(number(item, "pid", -1), "pid");
  const double ts = number(item, "ts", -1), dur = number(item, "dur", 0);
  if (ts < 0 && !item.contains("ts")) throw DataError("no 'ts'");
  if (dur < 0) throw DataError("negative 'dur'");
  const double model_begin = number(args, "model_s", -1);
  const double model_end = number(args, "model_end_s", model_begin);
  Event begin{.rank = rank, .wall_s = ts * 1e-6, .model_s = model_begin};
  Event end{.rank = rank, .wall_s = (ts + dur) * 1e-6, .model_s = model_end};
  if (cat == td::kP2pCat) {
    read_message(args, begin, end);
  } else if (cat == td::kPendingCat) {
    begin.kind = EventKind::recv_begin;
    begin.peer = static_cast<int>(number(args, "src", -1));
    begin.tag = static_cast<int>(number(args, "tag", 0));
    begin.op = "recv";
    return push(ts, dur, begin, nullptr);
  } else {
    read_phase(item, cat, args, begin, end);
  }
  const bool unfinished = args.value("unfinished", false);
  push(ts, dur, begin, unfinished ? nullptr : &end);
}

void EventReader::read_message(const Json& args, Event& begin, Event& end) {
  ++messages_;
  const std::string dir = args.value("dir", std::string());
  if ((dir != "send" && dir != "recv") || number(args, "src", -1) < 0 ||
      number(args, "dst", -1) < 0)
    throw DataError("p2p slice without dir/src/dst");
  const int src = checked_rank(number(args, "src", -1), "src");
  const int dst = checked_rank(number(args, "dst", -1), "dst");
  begin.tag = end.tag = static_cast<int>(number(args, "tag", 0));
  begin.bytes = end.bytes = static_cast<uint64_t>(number(args, "bytes", 0));
  begin.seq = end.seq = static_cast<uint64_t>(number(args, "k", 0));
  if (begin.model_s < 0) all_model_ = false;
  if (auto p = args.find("preview"); p != args.end() && p->is_array()) {
    for (const Json& v : *p) {
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
  out_.world = std::max({out_.world, src + 1, dst + 1});
}

void EventReader::read_phase(const Json& item, const std::string& cat, const Json& args,
                             Event& begin, Event& end) {
  if (cat == td::kStepCat) {
    begin.kind = EventKind::step_begin;
    end.kind = EventKind::step_end;
    begin.seq = end.seq = static_cast<uint64_t>(number(args, "step", 0));
    begin.op = end.op = "step";
    return;
  }
  const bool compute = cat == td::kComputeCat;
  begin.kind = compute ? EventKind::compute_begin : EventKind::collective_begin;
  end.kind = compute ? EventKind::compute_end : EventKind::collective_end;
  begin.op = end.op = intern(item.value("name", std::string()));
  begin.bytes = end.bytes = static_cast<uint64_t>(number(args, "bytes", 0));
}

TraceEvents EventReader::finish(const std::string& name) {
  if (keyed_.empty())
    throw DataError(fmt::format(
        "{}: no dsgd events in this trace (expected slices of cat p2p, compute, collective or "
        "step, as `dsgd train --trace` writes)",
        name));
  std::sort(keyed_.begin(), keyed_.end(), [](const Keyed& a, const Keyed& b) {
    return std::tie(a.ts_us, a.phase, a.order, a.serial) <
           std::tie(b.ts_us, b.phase, b.order, b.serial);
  });
  const bool model = messages_ > 0 && all_model_;
  out_.time_base = model ? TimeBase::model : TimeBase::wall;
  out_.events.reserve(keyed_.size());
  bool first = true;
  for (const Keyed& k : keyed_) {
    out_.events.push_back(k.event);
    const double t = model ? k.event.model_s : k.event.wall_s;
    if (model && t < 0) continue;
    if (first || t < out_.begin_s) out_.begin_s = t;
    if (first || t > out_.end_s) out_.end_s = t;
    first = false;
  }
  // A model-time replay: events without model time (send ends, notes) take their
  // predecessor's.
  if (model) {
    std::vector<double> last(out_.world, 0.0);
    for (Event& e : out_.events) {
      if (e.model_s < 0) e.model_s = last[e.rank];
      last[e.rank] = std::max(last[e.rank], e.model_s);
    }
  }
  return std::move(out_);
}

}  // namespace

TraceEvents read_trace_events(std::string_view text, const std::string& name) {
  const td::Document d = td::parse_document(text, name);
  EventReader reader;
  size_t index = 0;
  for (const Json& item : *d.events) {
    ++index;
    try {
      reader.read(item);
    } catch (const DataError& e) {
      throw DataError(
          fmt::format("{}: malformed trace event #{}: {}; {}", name, index, e.what(), kWriteAgain));
    } catch (const Json::exception& e) {
      throw DataError(
          fmt::format("{}: malformed trace event #{}: {}; {}", name, index, e.what(), kWriteAgain));
    }
  }
  TraceEvents out = reader.finish(name);
  out.run_json = td::run_json_of(d);
  out.summary = td::summary_of(d);
  return out;
}

TraceEvents load_trace_events(const std::string& path) {
  return read_trace_events(td::read_whole(path), path);
}

// ---------------------------------------------------------------------------------------
// [merge]
// ---------------------------------------------------------------------------------------

void merge_traces(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) throw UsageError("trace merge: give at least one input trace");
  std::map<int, std::string> owner;  // pid -> the input holding it
  std::string time_base, run_json;
  std::vector<td::MessageEnd> ends;
  std::string body;
  std::string sources;
  for (const std::string& path : inputs) {
    const td::Document d = td::parse_trace(td::read_whole(path), path);
    const std::string base = td::time_base_of(d);
    if (time_base.empty()) {
      time_base = base;
      run_json = td::run_json_of(d);
    }
    if (base != time_base)
      throw DataError(
          fmt::format("{}: its times are {} time, those of {} are {} time; merge "
                      "traces written with the same time base",
                      path, base, inputs.front(), time_base));
    std::set<int> pids;
    for (const Json& e : *d.events)
      if (e.contains("pid") && e["pid"].is_number_integer()) pids.insert(e["pid"].get<int>());
    for (int pid : pids) {
      auto [it, fresh] = owner.emplace(pid, path);
      if (!fresh)
        throw DataError(fmt::format("{}: rank {} is also in {}; give each rank's trace once", path,
                                    pid, it->second));
    }
    for (const Json& e : *d.events) {
      // Our arrows are drawn again below, across files; other flows are kept as they are.
      if (td::is_flow(e) && e.contains("cat") && e["cat"] == td::kFlowCat) continue;
      td::MessageEnd m;
      if (td::message_end(e, m, nullptr)) ends.push_back(m);
      if (!body.empty()) body += ",\n";
      body += e.dump();
    }
    sources += fmt::format("{}{}", sources.empty() ? "" : ",", Json(path).dump());
  }
  for (const td::FlowEvent& f : td::pair_messages(ends)) {
    if (!body.empty()) body += ",\n";
    body += td::flow_json(f);
  }
  std::string ranks;
  for (const auto& [pid, path] : owner)
    ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", pid);
  write_file_atomic(
      output,
      fmt::format("{{\"traceEvents\":[\n{}\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{{"
                  "\"generator\":\"dsgd {}\",\"format\":\"{}\",\"format_version\":{},"
                  "\"time_base\":{},\"ranks\":[{}],\"merged_from\":[{}]{}}}}}\n",
                  body, DSGD_VERSION, td::kFormat, td::kFormatVersion, Json(time_base).dump(),
                  ranks, sources, run_json.empty() ? "" : ",\"run\":" + run_json));
}

}  // namespace dsgd
