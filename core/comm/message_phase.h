// Which part of its collective a message is: for the m-th message a rank sends in one
// collective, the phase (reduce-scatter, all-gather, fold, ...), its step, and for the ring
// the chunk, the segment and how many ranks' values it carries. Derived from the schedules
// the algorithms run (ring_schedule.h, halving_doubling_schedule.h, the binomial trees of
// broadcast_binomial.cpp and reduce_binomial.cpp, the chain of broadcast_chain.cpp). Not a record
// of what happened: the event fold (core/event_fold.h) counts the messages and asks here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/comm/collective_tags.h"

namespace dsgd {

enum class Phase : uint8_t {
  p2p,             // a user message
  reduce_scatter,  // ring, ring reduce_scatter, halving-doubling's halving steps
  all_gather,      // ring, ring all_gather, halving-doubling's doubling steps
  fold,            // halving-doubling: an extra rank hands its buffer to its partner
  unfold,          // halving-doubling: the partner hands the result back
  exchange,        // recursive doubling: partners swap whole buffers and add
  reduce,          // binomial tree towards the root (tree all_reduce, reduce)
  broadcast,       // from the root: binomial tree (tree all_reduce, broadcast), or chain
  to_root,         // naive all_reduce, gather
  from_root,       // naive all_reduce, scatter
  round,           // the dissemination barrier
  unknown,         // a reserved tag past its collective's schedule
};

// "p2p", "reduce-scatter", "all-gather", "fold", "unfold", "exchange", "reduce", "broadcast",
// "to root",
// "from root", "round", "unknown".
const char* to_string(Phase phase);

struct MessagePhase {
  const CollectiveTag* collective = nullptr;  // nullptr: a user message
  Phase phase = Phase::p2p;
  int step = -1;  // in [0, steps) of its collective, counted over all its phases; -1 unknown
  int steps = 0;
  // Its step within its phase ("reduce-scatter, 2 of 3"): in [0, phase_steps), or -1.
  int phase_step = -1, phase_steps = 0;
  int chunk = -1;  // ring all_reduce: the chunk it carries (ring all_gather, reduce_scatter: row)
  // ring all_reduce: which of the chunk's messages; chain broadcast: of the buffer's
  int segment = -1, segments = 0;
  int contributions = 0;  // how many ranks' values it carries; 0 when not known

  // The collective's label ("all_reduce ring"), or tag_label's for a tag without one.
  const char* label(int tag) const { return collective ? collective->label : tag_label(tag); }
};

// The phase of the m-th message (m >= 0) `src` sends to `dst` with `tag` in one collective
// of `count` floats (all_reduce's or broadcast's buffer; 0 when unknown: one segment per
// ring chunk) on `world` ranks. A user tag gives Phase::p2p.
MessagePhase message_phase(int tag, int world, int src, int dst, int m, size_t count);

}  // namespace dsgd
