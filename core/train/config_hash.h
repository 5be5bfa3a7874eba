// A fingerprint of the training configuration, so MPI ranks can check at start-up
// (core/mpi/preflight.h) that each was given the same flags. Not a serialisation: equal
// configurations give equal hashes on every platform, nothing can be read back.
#pragma once

#include <cstdint>

#include "core/train/trainer.h"

namespace dsgd {

// FNV-1a 64 over every TrainConfig field that changes the numbers (model, batch, SGD
// options, steps, epochs, seed, shuffling, all-reduce algorithm, evaluation schedule),
// floats by their bit patterns, integers little-endian.
uint64_t config_fingerprint(const TrainConfig& config);

}  // namespace dsgd
