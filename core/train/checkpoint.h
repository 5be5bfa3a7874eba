// Checkpoints of a training run: parameters, SGD momentum, step, data position and the
// configuration that decides the numbers, in one .npz written atomically, so a stopped run
// resumes bit for bit. A directory keeps the last few, named so they sort by step.
// Not a scheduler: train() says when (TrainHooks::on_checkpoint); the caller writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/train/trainer.h"

namespace dsgd {

// What must be equal for a resumed run to continue with the same numbers: the model, the
// data (by content), the batch, SGD, seed and shuffling, the all-reduce, its buckets and the
// world size (the last three fix the order of the gradient sums). --steps, --epochs and
// --eval-every are not in it: a run may be resumed to train longer.
struct CheckpointConfig {
  std::string model;       // ModelSpec::str()
  std::string data;        // Dataset::name, for messages only
  uint64_t data_hash = 0;  // dataset_fingerprint()
  int64_t batch = 0;
  float lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  uint64_t seed = 0;
  bool shuffle = true;
  std::string allreduce;  // to_string(Algorithm)
  int world = 1;
  // TrainConfig's buckets; both 0 without them (and in checkpoints written before buckets
  // existed, whose hash is unchanged: the hash counts them only when there are buckets).
  int64_t bucket_bytes = 0, first_bucket_bytes = 0;

  uint64_t hash() const;  // FNV-1a 64 over every field but `data`
};

CheckpointConfig checkpoint_config(const TrainConfig& config, const Dataset& data, int world);

struct Checkpoint {
  CheckpointConfig config;
  TrainState state;
};

// The file name of the checkpoint after `step` updates: "ckpt-0000000040.npz".
std::string checkpoint_file_name(int64_t step);

// Writes path atomically (temporary file, fsync, rename): `layers.{i}.weight|bias` as
// --save writes them, `optimizer.momentum_buffer` (P) when there is one, and
// `checkpoint.json` (step, epoch, loss, the sampler's position, the configuration, its
// hash and a checksum of the tensors). DataError when it cannot be written.
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint);

// Reads and verifies a checkpoint: every entry present, the JSON well formed, the tensors'
// checksum right. DataError naming the file and what is wrong for anything else (a
// truncated or damaged file, an .npz that is not a checkpoint).
Checkpoint read_checkpoint(const std::string& path);

// UsageError unless `saved` (read from `path`) equals `run`: one line naming what differs
// (the first field, with both values), the file, and what to do.
void check_same_config(const CheckpointConfig& saved, const CheckpointConfig& run,
                       const std::string& path);

// The checkpoint files in `dir` (paths), oldest first. Other files are ignored.
std::vector<std::string> list_checkpoints(const std::string& dir);

// Writes the checkpoint as dir/checkpoint_file_name(step), then removes all but the
// newest `keep` checkpoints of dir. Returns the path written.
std::string save_checkpoint(const std::string& dir, const Checkpoint& checkpoint, int keep);

struct FoundCheckpoint {
  std::string path;
  Checkpoint checkpoint;
  std::vector<std::string> skipped;  // newer files that were damaged, one line each
};
// The newest intact checkpoint of dir. DataError when there is none (an empty directory,
// or every file damaged: the message lists why).
FoundCheckpoint find_latest_checkpoint(const std::string& dir);

}  // namespace dsgd
