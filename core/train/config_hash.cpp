#include "core/train/config_hash.h"

#include <bit>
#include <string>

namespace dsgd {
namespace {

class Fnv1a {
 public:
  void byte(uint8_t b) {
    h_ ^= b;
    h_ *= 0x100000001b3ull;
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void f32(float v) { u64(std::bit_cast<uint32_t>(v)); }
  void text(const std::string& s) {
    u64(s.size());
    for (char c : s)
      byte(static_cast<uint8_t>(c));
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace

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
