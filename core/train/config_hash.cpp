#include "core/train/config_hash.h"

#include <string>

#include "core/fnv1a.h"

namespace dsgd {

uint64_t config_fingerprint(const TrainConfig& c) {
  Fnv1a h;
  h.text(c.model.str());
  h.u64(static_cast<uint64_t>(c.global_batch));
  h.f32(c.sgd.lr);
  h.f32(c.sgd.momentum);
  h.f32(c.sgd.dampening);
  h.f32(c.sgd.weight_decay);
  h.u64(c.sgd.nesterov);
  h.u64(static_cast<uint64_t>(c.steps));
  h.u64(static_cast<uint64_t>(c.epochs));
  h.u64(c.seed);
  h.u64(c.shuffle);
  h.text(to_string(c.allreduce));
  h.u64(static_cast<uint64_t>(c.eval_every));
  return h.value();
}

}  // namespace dsgd
