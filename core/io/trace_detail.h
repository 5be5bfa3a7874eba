// Internals shared by trace.cpp (writing), trace_read.cpp (events, merge) and
// trace_check.cpp: the categories dsgd writes, how sends are paired with receives and how
// flow arrows and times are spelled in the JSON.
// Not part of the public API: include core/io/trace.h instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dsgd::trace_detail {

inline constexpr const char* kFormat = "dsgd-trace";
inline constexpr int kFormatVersion = 1;
// The ranks a trace may name (pids, message ends): readers refuse more, so that a rank of
// 2147483647 in a hand-edited file is an error, not a world of two billion.
inline constexpr int kMaxTraceRanks = 4096;
// Categories ("cat") of what trace_json writes, and what the reader looks for.
inline constexpr const char* kP2pCat = "p2p";                // send and receive slices
inline constexpr const char* kStepCat = "step";              // training steps
inline constexpr const char* kComputeCat = "compute";        // forward_backward, update
inline constexpr const char* kCollectiveCat = "collective";  // all_reduce, broadcast, ...
inline constexpr const char* kPendingCat = "pending";        // a receive never completed
inline constexpr const char* kNoteCat = "note";              // instants ("i")
inline constexpr const char* kFlowCat = "message";           // flow arrows
inline constexpr int kComputeTid = 0;
inline constexpr int kCommTid = 1;

// One end of a point-to-point message, as a slice on lane (pid, tid).
struct MessageEnd {
  int pid = 0, tid = 0;
  int64_t start_ns = 0, end_ns = 0;
  int src = 0, dst = 0, tag = 0;
  uint64_t k = 0;  // ordinal among the messages src -> dst with this tag
  bool is_send = false;
  bool abandoned = false;  // never received: its round of an elastic run ended first
};

struct FlowEvent {
  uint64_t id = 0;
  bool start = false;  // "s" at the send, else "f" at the receive
  int pid = 0, tid = 0;
  int64_t ts_ns = 0;
};

// Pairs the k-th send src -> dst (tag t) with the k-th receive at dst from src (tag t) and
// returns two flow events per pair, ids 1, 2, ... in the order of the sends. The arrow
// leaves just inside the send slice and lands just inside the receive slice, so viewers
// bind it to those slices (bp "e": the enclosing slice).
std::vector<FlowEvent> pair_messages(const std::vector<MessageEnd>& ends);

// ns as microseconds with exactly three decimals ("-12.345"): exact, no rounding.
std::string format_us(int64_t ns);
// Microseconds (as read from JSON) to whole ns.
int64_t us_to_ns(double us);
std::string flow_json(const FlowEvent& flow);
// s as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace dsgd::trace_detail
