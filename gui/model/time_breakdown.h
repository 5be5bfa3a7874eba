// Where a training step's time went, rank by rank: computing (forward/backward, update), its
// own messages on the wire (transfer: a message it sends or receives is within the link's
// latency + bytes / bandwidth of its send), waiting (in a collective with none of its messages
// on the wire: a peer is not ready yet, which is how a straggler shows on the others, or a
// message waits for its receiver), and the rest of the step
// (evaluation, bookkeeping). Against it, the alpha-beta prediction of the step's collectives
// (core/comm/cost_model.h) on the run's slowest link. From the snapshot's steps, slices and
// messages (the event fold's); not a profiler: times are in the snapshot's time base.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gui/model/snapshot.h"

namespace dsgd::gui {

struct RankTime {
  double compute_s = 0, transfer_s = 0, waiting_s = 0, other_s = 0;
  bool seen = false;  // the rank began this step (its slices are in the snapshot)
  double total_s() const { return compute_s + transfer_s + waiting_s + other_s; }
};

struct StepTime {
  int64_t step = 0;             // 0: no step to show
  bool complete = false;        // every rank ended it by now_s
  std::vector<RankTime> ranks;  // [rank]
  // The alpha-beta time of the step's collectives (those of the rank that ran the most) ...
  double predicted_s = 0;
  int collectives = 0;
  // ... and of the largest one alone (the gradients' all_reduce).
  const char* collective = "";  // its label ("all_reduce ring"), "" if none
  std::string formula;          // its cost formula ("2(R-1) * (a + S/R/B)")
  uint64_t bytes = 0;           // its payload
  double collective_predicted_s = 0;
  double alpha_s = 0, bandwidth_Bps = 0;  // the link the prediction assumed (0: unlimited)
};

// The training steps some rank began by now_s, ascending.
std::vector<int64_t> breakdown_steps(const Snapshot& s);
// The newest step every rank has ended (0: none yet).
int64_t latest_complete_step(const Snapshot& s);
// Where step `step` went (ranks that did not begin it have seen = false).
StepTime step_time(const Snapshot& s, int64_t step);

// The rank whose step took longest, and the one that computed clearly longer than the others
// (at least 1.5 times the median rank's compute, and longer by a tenth of the step or more):
// the straggler the others wait for.
struct StepSummary {
  int slowest = -1;
  int straggler = -1;          // -1: none
  double compute_ratio = 1.0;  // the straggler's compute / the median rank's
};
StepSummary summarize(const StepTime& t);

}  // namespace dsgd::gui
