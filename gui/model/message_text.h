// A message in words: its tag ("all_reduce ring", or "tag 5" for a program's own), where it
// stands in its collective ("reduce-scatter 3/7", "reduce up, level 2/3", "halving 1/3"),
// what that step does, and its first values ("1, 4, 7, 3, ..."). The message log and the
// all_reduce demo's caption say the same, in the window's language (ui_text.h).
// Not the fold: the phase, step and chunk come from it (MessageView, message_phase.h).
#pragma once

#include <string>

#include "gui/model/snapshot.h"

namespace dsgd::gui {

// A message's step counted within its phase: the ring's reduce-scatter and all-gather each
// have R-1 steps, the tree's way up and way down D levels each, halving-doubling's halving
// and doubling log2(P) each.
struct PhasePosition {
  Phase phase = Phase::p2p;
  int index = 0;  // 1 .. count; 0 when not known
  int count = 0;
};
PhasePosition phase_position(const MessageView& m);

// "reduce-scatter 3/7", "all-gather 2/7", "reduce up, level 1/3", "broadcast down, level
// 2/3", "halving 1/2 (reduce-scatter)", "to root"; "" for a program's own message.
std::string phase_text(const MessageView& m, int world);
// phase_text with the ring's chunk: "reduce-scatter 3/7, chunk 2" (and "part 1/4" when the
// chunk travels as several messages).
std::string phase_and_chunk_text(const MessageView& m, int world);
// What a rank does with such a message, in a few words ("adds it to its own chunk"); "" for
// a program's own message.
const char* phase_hint(const MessageView& m);
// "all_reduce ring" for a collective's message, "tag 5" for a program's own.
std::string tag_column_text(const MessageView& m);
// What went wrong on the way: "lost", "resent", "resent 3x"; "" when nothing did.
std::string delivery_note(int retransmits, bool lost);
// The log's "took" cell: "1.2 ms", "1.2 ms, resent", "in flight", "lost".
std::string took_text(const MessageView& m);
// The first values the message carried: "1, 4, 7, 3, ..." ("..." when it held more); "" when
// none were recorded.
std::string preview_text(const MessageView& m);

}  // namespace dsgd::gui
