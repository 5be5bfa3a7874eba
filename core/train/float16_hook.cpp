// torch's fp16_compress_hook and bf16_compress_hook: bucket.buffer().to(float16).div_(world),
// all_reduce in float16, copied back into the float32 gradients. Each rank's values are
// rounded to 16 bits twice, as torch's are (the cast, then the division), and every partial
// sum once (reduce_op.h).
#include <vector>

#include "core/train/comm_hook.h"

namespace dsgd {
namespace {

class Float16Hook : public CommHook {
 public:
  Float16Hook(WireFormat wire, Algorithm algorithm) : wire_(wire), algorithm_(algorithm) {}

  std::vector<HookCollective> collectives(const HookBucket& bucket, int) const override {
    return {{CollectiveOp::all_reduce, packed_size(size_t(bucket.size), wire_) * sizeof(float)}};
  }

  void reduce(Communicator& comm, const HookBucket& bucket, std::span<float> values) override {
    const float n = float(comm.size());
    packed_.resize(packed_size(values.size(), wire_));
    for (float& v : values)  // the rank's mean gradient: torch's bucket.buffer()
      v *= n;
    pack(values, packed_, wire_);  // .to(torch.float16)
    unpack(packed_, values, wire_);
    for (float& v : values)  // .div_(world_size), rounded to 16 bits again by the pack
      v /= n;
    pack(values, packed_, wire_);
    all_reduce(comm, packed_, {ReduceOp::SUM, wire_}, {.algorithm = algorithm_});
    unpack(packed_, values, wire_);
    stats_.before += double(values.size());
    stats_.after += double(values.size()) / 2;
  }

 private:
  WireFormat wire_;
  Algorithm algorithm_;
  std::vector<float> packed_;
};

}  // namespace

std::unique_ptr<CommHook> make_float16_hook(WireFormat wire, Algorithm algorithm) {
  return std::make_unique<Float16Hook>(wire, algorithm);
}

}  // namespace dsgd
