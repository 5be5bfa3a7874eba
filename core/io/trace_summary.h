// Summarised traces, for runs of more ranks than a window can show one lane each: G lanes
// stand for G groups of consecutive ranks (on dsgd's topologies a rack's or a leaf switch's
// ranks are consecutive). A group's lane holds its ranks' steps, compute and
// collectives, each from the earliest begin to the latest end among them, so a straggler
// stretches its group. Messages between two ranks of one group are left out; those from
// one group to another within one collective (one per tag between collectives outside
// them) become one message, sent when the first of them was sent, arriving when the last
// arrived, carrying all their bytes, followed on the sender's lane by a note that counts
// them (kBundleNote). The trace writer writes one past kMaxTraceLanes ranks
// (ChromeTraceWriter::set_lane_groups, `--trace-groups`), `dsgd trace summarize` makes one
// of a full trace, and the GUI summarises a full trace of more ranks as it opens it.
#pragma once

#include <string>
#include <vector>

#include "core/events.h"
#include "core/io/trace.h"

namespace dsgd {

// The most ranks a trace is shown with a lane each; a larger one is summarised into
// kSummaryGroups groups.
inline constexpr int kMaxTraceLanes = 64;
inline constexpr int kSummaryGroups = 32;

// The groups a trace of `ranks` ranks is written with when `requested` were asked for
// (-1: the default, kSummaryGroups above kMaxTraceLanes ranks); 0: a lane per rank.
int summary_groups_for(int requested, int ranks);

// The group of `rank` when `ranks` ranks are split into `groups` groups of consecutive
// ranks (sizes differ by at most one), and a group's first rank and its count of ranks.
int summary_group(int rank, int ranks, int groups);
int summary_group_first(int group, int ranks, int groups);
int summary_group_size(int group, int ranks, int groups);

// What a summary made of the messages: those between groups, the messages standing for
// them, and those inside a group (left out).
struct SummaryCounts {
  uint64_t between = 0, joined = 0, inside = 0;
};

// `events` of ranks 0 to world - 1 (a run's, or a trace read back) summarised into `groups`
// lanes, as above. Each rank's events are taken in the order of their wall_s, which must be
// causal: a message received after it was sent (a run's steady clock is; a trace read back
// has its file's times there, which are). Ops point where the input's do. UsageError when
// `groups` is not between 1 and world - 1.
std::vector<Event> summarize_events(const std::vector<Event>& events, int world, int groups,
                                    SummaryCounts* counts = nullptr);

// The summarised trace document: summarize_events written with in's time base and run
// description, and otherData "summary": {"ranks": in.world, "groups": groups}.
std::string summarized_trace_json(const TraceEvents& in, int groups,
                                  SummaryCounts* counts = nullptr);

}  // namespace dsgd
