// The observer stream's wire format (`--monitor HOST:PORT`): what a run sends to an observer
// (`dsgd-gui --watch PORT`), one JSON text per line. First a hello, then the same event records
// the trace is drawn from, and, after events were dropped (a slow or absent observer: never a
// stall), a gap that counts them; before the first events, and once a second, the sender's
// clock:
//   {"dsgd_monitor":1,"name":"alice","token":"...","world":4,"run":{...}}
//   {"clock":12.5,"rtt":0.0004}
//   [kind, rank, peer, tag, bytes, seq, wall_s, model_s, "op", [preview...]]
//   {"dropped":120}
// The run only writes: nothing an observer sends is read.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <optional>
#include <string_view>
#include <utility>

#include "core/events.h"

namespace dsgd {

inline constexpr int kMonitorVersion = 1;
// The longest line an observer reads; a longer one is not a dsgd monitor stream.
inline constexpr size_t kMaxMonitorLine = 1 << 20;
// Ranks an event may name (as many as a SimGrid run has).
inline constexpr int kMaxMonitorRanks = 65536;

struct MonitorHello {
  std::string name;      // who sends: `dsgd node --name`, or the host's name
  std::string token;     // the job token, for an observer that asks for one
  int world = 0;         // ranks in the run
  std::string run_json;  // the run description (sim/run_spec.h), serialized; may be empty
};

// A TCP port number, 0 to 65535; nullopt for anything else ("", "http", "99999").
std::optional<int> parse_port(std::string_view text);

// "HOST:PORT" split in two; UsageError naming --monitor when it is not one.
std::pair<std::string, std::string> split_monitor_endpoint(const std::string& endpoint);

std::string monitor_hello_line(const MonitorHello& hello);
std::string monitor_event_line(const Event& event);
void append_monitor_event(std::string& out, const Event& event);  // the same, onto `out`
std::string monitor_gap_line(uint64_t dropped);
// The sender's clock now, on its events' wall_s clock, and the connection's round trip as the
// sender's TCP stack measured it: an observer on another machine places the sender's events
// on its own clock with them (as NTP does: offset = arrival - clock - rtt / 2).
std::string monitor_clock_line(double clock_s, double rtt_s);

// One line read back. Events' ops point into `names`, which must outlive them.
struct MonitorRecord {
  enum class Kind { hello, event, gap, clock } kind = Kind::event;
  MonitorHello hello;
  Event event;
  uint64_t dropped = 0;
  double clock_s = 0, rtt_s = 0;
};
// DataError saying what is wrong for a line that is none of the three.
MonitorRecord parse_monitor_line(std::string_view line, std::deque<std::string>& names);

}  // namespace dsgd
