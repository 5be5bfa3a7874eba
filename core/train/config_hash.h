// The training configuration's fields that change the numbers, as the flags that set them
// ("--lr", "0.1"), and their fingerprint, so ranks that are separate processes can check at
// start-up (core/mpi/preflight.h, dsgd node's rendezvous) that each was given the same
// flags, and name the first that differs. Not a serialisation to read back.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/train/trainer.h"

namespace dsgd {

// Flag and value of every TrainConfig field that changes the numbers (model, batch, SGD
// options, steps, epochs, seed, shuffling, all-reduce algorithm, evaluation schedule), in a
// fixed order; floats written so that they read back to the same bits.
using ConfigFields = std::vector<std::pair<std::string, std::string>>;
ConfigFields config_fields(const TrainConfig& config);
// FNV-1a 64 over config_fields.
uint64_t config_fingerprint(const TrainConfig& config);
// "--lr 0.05 on rank 2, 0.1 on rank 0": the first field that differs, or "" when none does.
std::string first_difference(const ConfigFields& theirs, int their_rank, const ConfigFields& ours,
                             int our_rank);

}  // namespace dsgd
