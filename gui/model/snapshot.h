// Snapshot: everything one frame draws, as plain read-only values, built from a list of
// Events (a live run's EventBuffer copy or a replayed trace) through the event fold
// (core/event_fold.h, which the trace writer uses too) plus what the source knows about
// itself (settings, links, loss curves, status). Draw functions read it and push Commands;
// they never reach the simulation. Building one is O(events).
// Not a model of the run's state: it is rebuilt every frame and thrown away.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/comm/message_phase.h"
#include "core/events.h"
#include "core/io/trace.h"
#include "gui/model/classroom.h"
#include "gui/model/layout.h"
#include "gui/model/settings.h"
#include "sim/network.h"

namespace dsgd::gui {

// One point-to-point message: the k-th send src -> dst with `tag` (pairs with the k-th
// receive at dst from src with that tag). Times are in the snapshot's time base.
// Where it stands in its collective comes from the fold (message_phase.h).
struct MessageView {
  int src = 0, dst = 0, tag = 0;
  uint64_t k = 0, bytes = 0;
  const char* op = "p2p";  // its collective's label ("all_reduce ring"), or "p2p"; static
  Phase phase = Phase::p2p;
  int step = -1, steps = 0;              // its step in its collective, when known
  int phase_step = -1, phase_steps = 0;  // its step within its phase, when known
  double send_s = 0;
  double depart_s = 0;    // leaves the sender: send_s, or when the outage holding its link ends
  double arrive_s = 0;    // the receive's completion, or an estimate (see estimated)
  bool estimated = true;  // no receive seen (yet): arrive_s = depart_s + latency + bytes / bw
                          // + retransmits * RTO
  bool arrived = false;   // received at or before the snapshot's now_s
  bool lost = false;      // overdue, never received: a rank at either end crashed, or the
                          // events are complete (SnapshotInputs::complete)
  int retransmits = 0;    // times the network lost it and sent it again
  int chunk = -1;         // ring all_reduce (all_gather, reduce_scatter): its chunk, else -1
  int segment = -1, segments = 0;  // ring all_reduce: which of the chunk's messages
  int contributions = 0;           // how many ranks' values it carries (0: not known)
  uint8_t preview_count = 0;
  float preview[4] = {};
};

enum class Lane : uint8_t { compute, comm };

struct SliceView {
  int rank = 0;
  Lane lane = Lane::compute;
  const char* name = "";  // points into the event source (static, or the replay's pool)
  // What it is drawn as: a collective's messages' label ("all_reduce tree"), which names its
  // algorithm and colours it as its messages are; otherwise (and before a message) `name`
  const char* label = "";
  double begin_s = 0, end_s = 0;
  bool open = false;   // not ended by now_s (end_s = now_s)
  uint64_t bytes = 0;  // a collective's payload (as its begin gave it); 0 for compute
};

// One rank's training step (the trainer's step_begin .. step_end), for where its time went.
struct StepView {
  int rank = 0;
  int64_t step = 0;  // its number (1 = the first)
  double begin_s = 0, end_s = 0;
  bool open = false;  // not ended by now_s (end_s = now_s)
};

struct RankView {
  int64_t step = 0;        // the last training step it began
  double straggler = 1.0;  // compute slow-down factor (1 = normal)
  bool crashed = false;
  bool computing = false;  // inside a compute phase at now_s
  bool in_collective = false;
  double last_event_s = 0;
};

// A directed link's parameters, for labels and for estimating arrivals.
struct LinkView {
  double latency_s = 0;
  double bandwidth_Bps = 0;  // 0 = unlimited
  bool slow = false;         // clearly slower than the typical link
};

struct CurvePoint {
  int64_t step = 0;
  double model_s = 0, wall_s = 0;
  double loss = 0;
  double train_accuracy = -1, test_accuracy = -1;  // -1: not measured
};

struct Curve {
  std::string label;
  std::vector<CurvePoint> points;
};

// Gradient averaging: per rank, how many ranks' values each part of its buffer holds (1..R)
// in its latest all_reduce, and in the all_reduce demo the values themselves. The ring's
// parts are its R chunks; the other algorithms show the whole buffer as one part.
struct GradientView {
  const char* label = "all_reduce";             // the algorithm that ran: "all_reduce tree", ...
  bool ring = false;                            // chunk bookkeeping follows the ring algorithm
  int chunks = 0;                               // = world for the ring, 1 otherwise
  std::vector<std::vector<int>> contributions;  // [rank][chunk]
  int elements = 0;                             // demo only: floats per rank
  std::vector<std::vector<float>> values;       // demo only: [rank][element]
  std::vector<int> element_chunk;               // demo only: the chunk of each element
  int alive = 0;                                // ranks not crashed
  int holding_sum = 0;  // of them, those whose every part holds all ranks' values
};

struct ControlState {
  bool live = false;      // a simulated run (false: a replayed trace or nothing)
  bool watching = false;  // runs elsewhere, as they stream (watch.h): nothing to steer here
  bool running = false;
  bool paused = false;
  bool step_mode = false;
  double speed = 1.0;
  int64_t step = 0, total_steps = 0;
  std::string status;  // "running", "finished", "rank 1 crashed: ..."
  SimSettings settings;
};

// The classroom panel (dsgd-gui --classroom): how students join, who has, and their runs.
struct ClassroomView {
  bool active = false;
  std::string join_command;  // what a student types: "dsgd node --rendezvous ... --token ..."
  ClassroomState state;
};

// One line of a lesson's transcript in the lesson panel.
struct LessonLine {
  enum class Kind : uint8_t { section, say, print, message };
  Kind kind = Kind::say;
  int rank = 0;  // print, message: the rank (the sender for a message)
  // section: its README text; message: "rank 0 -> rank 1 · tag 0 · ..."; print: "[rank 2] ..."
  std::string text;
};

// A lesson of the catalog, for the picker.
struct LessonEntry {
  int number = 0;
  std::string title_en, title_zh;
  int nodes = 4;                     // the ranks it runs on by default
  int min_nodes = 1, max_nodes = 8;  // and may run on
};

// The lesson panel: the lesson chosen, its text so far and the run's state.
struct LessonView {
  bool active = false;  // a lesson is loaded (its run may have finished)
  int number = 0;
  bool zh = false;
  std::string title, intro;
  int world = 0;
  int sections_total = 0, sections_shown = 0;
  std::vector<LessonLine> lines;
  bool running = false;
  int pending_steps = 0;
  std::string error;
  std::vector<LessonEntry> catalog;  // every lesson (also when none is active)
};

// What the window is exporting, for the Controls' "View" section: filled in by the window
// (exporter.h), not built from events.
struct ExportView {
  bool recording = false;   // a GIF is being recorded
  std::string message;      // where the last file went or goes, or why it could not be written
  std::vector<View> views;  // the views on screen, each of which can be saved alone
};

struct Snapshot {
  std::string title;
  std::string error;  // shown in the window (a malformed trace, a failed run)
  // The error is how the run's own simulated faults ended it (a crash, a partition past the
  // deadline: exit code 3 in dsgd), not bad input: a headless screenshot of it succeeds.
  bool error_is_fault = false;
  std::string network;  // the run's network as described ("latency 2 ms, bandwidth ...")
  int world = 0;
  // Who runs each rank, when the ranks are processes of their own watched from here
  // (watch.h: a name per sender, shown by the topology); empty otherwise.
  std::vector<std::string> rank_names;
  // A summarised trace's: each of the world's lanes is a group of ranks (lane_label.h).
  TraceSummary summary;
  TimeBase time_base = TimeBase::wall;  // live runs: wall_s carries the network clock
  double now_s = 0;                     // the time cursor
  double begin_s = 0, end_s = 0;        // the span of all events (live: from the run's start)
  double events_from_s = -1;            // live: older events were dropped before this; -1: none
  std::vector<RankView> ranks;
  std::vector<LinkView> links;        // world * world, [src * world + dst]
  std::vector<MessageView> messages;  // every message sent by now_s, in send order
  std::vector<int> in_flight;         // indices into messages: sent, not yet arrived, not lost
  std::vector<int> lost;              // indices into messages: lost (MessageView::lost)
  std::vector<SliceView> slices;      // compute and collective phases begun by now_s
  // `dsgd compare`'s runs (--compare) first, then earlier runs, the current one last.
  std::vector<Curve> curves;
  size_t compared_curves = 0;  // how many of curves are compared runs
  GradientView gradients;
  ControlState controls;
  ViewSettings view;
  Algorithm algorithm = Algorithm::ring;
  LessonView lesson;
  ClassroomView classroom;
  std::vector<StepView> steps;  // training steps begun by now_s, per rank, in no set order
  ExportView exporting;

  // The network's outages at now_s: the directed links held, when the last of those
  // outages ends (1e300: never), and the groups of ranks they split the cluster into
  // (a partition: empty while every rank can still reach every other).
  std::vector<std::pair<int, int>> links_down;
  double links_down_until_s = 0;
  std::vector<std::vector<int>> partition;

  const LinkView& link(int src, int dst) const { return links[src * world + dst]; }
};

// What the source adds to the events.
struct SnapshotInputs {
  int world = 0;  // 0: the highest rank seen + 1
  TimeBase time_base = TimeBase::wall;
  double now_s = -1;                 // < 0: the last event's time
  std::vector<LinkView> links;       // empty: ideal links
  std::vector<double> stragglers;    // per rank (empty: all 1)
  std::vector<int64_t> crash_steps;  // per rank, 0 = never (empty: none)
  std::vector<double> crash_s;       // per rank, network time it crashes, 0 = never (empty: none)
  std::vector<sim::Outage> outages;  // the run's links down and partitions (network time)
  double rto_s = 0;                  // the retransmission timeout, for arrival estimates
  // The events are the whole run (a replay, a live run that ended): a message with no
  // receive among them by its estimated arrival never arrives.
  bool complete = false;
  // The all_reduce asked for: the gradients follow it until messages show the one that ran.
  Algorithm algorithm = Algorithm::ring;
  int demo_elements = 0;  // > 0: fill GradientView::values (all_reduce demo)
};

// Builds the snapshot's event-derived parts (world, times, ranks, links, messages,
// in_flight, slices, gradients). Events must be in order per rank (any interleaving of
// ranks); events after now_s are ignored except receives that complete a message sent by
// then (its arrival time is known in a replay).
Snapshot build_snapshot(const std::vector<Event>& events, const SnapshotInputs& inputs);

// How long a message of `bytes` takes on the link src -> dst: latency + bytes / bandwidth
// (0 for ideal links, or ranks outside the snapshot).
double transfer_estimate_s(const Snapshot& s, int src, int dst, uint64_t bytes);

// The directed links `outages` hold at `t`, sorted.
std::vector<std::pair<int, int>> links_down_at(const std::vector<sim::Outage>& outages, double t);
// The groups of ranks 0..world-1 that can still talk when `down` links are held (two ranks
// are joined while a link between them is up in either direction), each sorted, ordered by
// their smallest rank; empty when they form one group.
std::vector<std::vector<int>> partition_groups(int world,
                                               const std::vector<std::pair<int, int>>& down);

// Marks links clearly slower than the median (latency 2x higher or bandwidth 2x lower).
void mark_slow_links(std::vector<LinkView>& links);

}  // namespace dsgd::gui
