// The reserved tags of dsgd's collectives, in one table: for each tag the collective op, the
// algorithm whose messages carry it and the one label that traces, the GUI and the lesson
// transcripts show ("all_reduce ring", "all_reduce halving_doubling", "broadcast").
// Not the tag values (collectives.h, namespace collective_tag) and not user tags: a tag
// below kCollectiveTagBase belongs to the program.
#pragma once

#include <string>

#include "core/comm/collectives.h"

namespace dsgd {

struct CollectiveTag {
  int tag = 0;
  CollectiveOp op = CollectiveOp::all_reduce;
  Algorithm algorithm = Algorithm::automatic;  // automatic: the barrier's dissemination
  // The op, and for all_reduce the algorithm as --allreduce spells it; broadcast's second
  // algorithm adds its name ("broadcast ring").
  const char* label = "";
};

// The entry of a reserved tag; nullptr for a user tag or a reserved tag no collective uses.
const CollectiveTag* find_collective_tag(int tag);
// The entry whose messages `algorithm` sends for `op`; nullptr when none (native, automatic).
const CollectiveTag* find_collective_tag(CollectiveOp op, Algorithm algorithm);
// What a message with `tag` is called: its collective's label, "collective" for a reserved
// tag no collective uses, "p2p" for a user tag.
const char* tag_label(int tag);
// A tag as messages and errors show it: "tag 0"; a collective's message by its name
// ("all_reduce ring"), not by the reserved number no user wrote.
std::string tag_text(int tag);

}  // namespace dsgd
