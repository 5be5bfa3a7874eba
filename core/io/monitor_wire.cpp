#include "core/io/monitor_wire.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/io/trace_detail.h"

namespace dsgd {

using nlohmann::json;

namespace {

constexpr int kLastKind = static_cast<int>(EventKind::note);

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

// The interned copy of `op`, so that an event's op outlives the line it came in.
const char* intern(const std::string& op, std::deque<std::string>& names) {
  const auto it = std::find(names.rbegin(), names.rend(), op);
  if (it != names.rend()) return it->c_str();
  return names.emplace_back(op).c_str();
}

MonitorRecord parse_hello(const json& j) {
  if (j.value("dsgd_monitor", 0) != kMonitorVersion)
    throw DataError(fmt::format("a monitor stream of version {}, this dsgd reads {}",
                                j.value("dsgd_monitor", 0), kMonitorVersion));
  MonitorRecord r{.kind = MonitorRecord::Kind::hello};
  r.hello.name = j.value("name", std::string());
  r.hello.token = j.value("token", std::string());
  r.hello.world = j.value("world", 0);
  if (const auto run = j.find("run"); run != j.end() && run->is_object())
    r.hello.run_json = run->dump();
  if (r.hello.world < 0) throw DataError("a hello with a negative world");
  return r;
}

MonitorRecord parse_event(const json& a, std::deque<std::string>& names) {
  if (a.size() < 9 || !a[0].is_number_integer() || !a[8].is_string())
    throw DataError(
        "an event record needs 9 fields: kind, rank, peer, tag, bytes, seq, wall_s, "
        "model_s, op");
  const int kind = a[0].get<int>();
  if (kind < 0 || kind > kLastKind) throw DataError(fmt::format("no event kind {}", kind));
  MonitorRecord r{.kind = MonitorRecord::Kind::event};
  Event& e = r.event;
  e.kind = static_cast<EventKind>(kind);
  e.rank = a[1].get<int>();
  e.peer = a[2].get<int>();
  e.tag = a[3].get<int>();
  e.bytes = a[4].get<uint64_t>();
  e.seq = a[5].get<uint64_t>();
  e.wall_s = a[6].is_number() ? a[6].get<double>() : 0.0;
  e.model_s = a[7].is_number() ? a[7].get<double>() : -1.0;
  e.op = intern(a[8].get<std::string>(), names);
  if (a.size() > 9 && a[9].is_array())
    for (const json& v : a[9])
      if (e.preview_count < 4 && v.is_number()) e.preview[e.preview_count++] = v.get<float>();
  if (e.rank < 0 || e.rank >= kMaxMonitorRanks || e.peer >= kMaxMonitorRanks)
    throw DataError(fmt::format("an event of rank {} (peer {}): ranks are 0 to {}", e.rank, e.peer,
                                kMaxMonitorRanks - 1));
  return r;
}

}  // namespace

std::optional<int> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const int port = std::stoi(std::string(text));
  return port <= 65535 ? std::optional(port) : std::nullopt;
}

std::pair<std::string, std::string> split_monitor_endpoint(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  const std::string port = colon == std::string::npos ? "" : endpoint.substr(colon + 1);
  if (colon == 0 || parse_port(port).value_or(0) == 0)
    throw UsageError(fmt::format(
        "--monitor {}: give the observer as HOST:PORT, e.g. 127.0.0.1:29600 (where dsgd-gui "
        "--watch 29600 listens)",
        endpoint));
  return {endpoint.substr(0, colon), port};
}

std::string monitor_hello_line(const MonitorHello& h) {
  json j{
      {"dsgd_monitor", kMonitorVersion}, {"name", h.name}, {"token", h.token}, {"world", h.world}};
  if (!h.run_json.empty()) j["run"] = json::parse(h.run_json);
  return j.dump() + "\n";
}

void append_monitor_event(std::string& out, const Event& e) {
  auto to = std::back_inserter(out);
  fmt::format_to(to, "[{},{},{},{},{},{},{},{},{},[", static_cast<int>(e.kind), e.rank, e.peer,
                 e.tag, e.bytes, e.seq, number(e.wall_s), number(e.model_s),
                 trace_detail::json_quote(e.op));
  for (int i = 0; i < e.preview_count && i < 4; ++i)
    fmt::format_to(to, "{}{}", i ? "," : "", number(e.preview[i]));
  out += "]]\n";
}

std::string monitor_event_line(const Event& e) {
  std::string out;
  append_monitor_event(out, e);
  return out;
}

std::string monitor_clock_line(double clock_s, double rtt_s) {
  return fmt::format("{{\"clock\":{},\"rtt\":{}}}\n", number(clock_s), number(rtt_s));
}

std::string monitor_gap_line(uint64_t dropped) {
  return fmt::format("{{\"dropped\":{}}}\n", dropped);
}

MonitorRecord parse_monitor_line(std::string_view line, std::deque<std::string>& names) {
  try {
    const json j = json::parse(line);
    if (j.is_array()) return parse_event(j, names);
    if (j.is_object() && j.contains("dropped"))
      return {.kind = MonitorRecord::Kind::gap, .dropped = j["dropped"].get<uint64_t>()};
    if (j.is_object() && j.contains("dsgd_monitor")) return parse_hello(j);
    if (j.is_object() && j.contains("clock"))
      return {.kind = MonitorRecord::Kind::clock,
              .clock_s = j["clock"].get<double>(),
              .rtt_s = std::max(0.0, j.value("rtt", 0.0))};
    throw DataError("neither a hello, an event, a gap nor a clock");
  } catch (const json::exception& e) {
    throw DataError(fmt::format("not a dsgd monitor line: {}", e.what()));
  }
}

}  // namespace dsgd
