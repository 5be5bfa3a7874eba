// The fold and unfold that halving-doubling and recursive doubling share
// (halving_doubling_schedule.h): ranks 0..2E-1 pair up, the even one hands its buffer to the
// odd one above it and sits out the exchanges, and gets the result back at the end.
#pragma once

#include <span>

#include "core/comm/communicator.h"
#include "core/comm/halving_doubling_schedule.h"
#include "core/comm/reduce_op.h"

namespace dsgd {

// Step 1. A rank that sits out sends its buffer, receives the result into it and returns
// false: it is done. Its odd partner reduces that buffer into `data` (received into the
// communicator's scratch). Every other rank returns true at once.
bool fold_in(Communicator& comm, const HalvingDoubling& h, std::span<float> data, int tag,
             Reduction op);

// The last step, on the core ranks: an odd rank below 2E sends the result to the rank it
// folded in.
void unfold(Communicator& comm, const HalvingDoubling& h, std::span<const float> data, int tag);

}  // namespace dsgd
