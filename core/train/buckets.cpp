#include "core/train/buckets.h"

#include <fmt/format.h>

namespace dsgd {

std::vector<GradientBucket> assign_buckets(const Model& model, int64_t first_bytes,
                                           int64_t cap_bytes, int64_t extra) {
  const std::vector<ParamInfo>& params = model.params();
  std::vector<GradientBucket> buckets;
  GradientBucket current{.begin = model.num_params(), .end = model.num_params() + extra};
  int64_t bytes = 0;
  for (int i = static_cast<int>(params.size()) - 1; i >= 0; --i) {
    current.params.push_back(i);
    current.begin = params[i].offset;
    current.lowest_layer = i / 2;  // weight and bias of layer l are params 2l and 2l + 1
    bytes += params[i].numel * static_cast<int64_t>(sizeof(float));
    if (bytes >= bucket_limit(buckets.size(), first_bytes, cap_bytes)) {
      buckets.push_back(std::move(current));
      current = {.begin = buckets.back().begin, .end = buckets.back().begin};
      bytes = 0;
    }
  }
  if (!current.params.empty()) buckets.push_back(std::move(current));
  return buckets;
}

int64_t bucket_cap_bytes(double mb) {
  return static_cast<int64_t>(mb * 1024 * 1024);
}

std::string bucket_mb_text(int64_t bytes) {
  return fmt::format("{:.3g}", double(bytes) / (1024 * 1024));
}

std::string describe_buckets(const std::vector<GradientBucket>& buckets) {
  std::vector<double> bytes;
  for (const GradientBucket& b : buckets)
    bytes.push_back(double(b.end - b.begin) * sizeof(float));
  return describe_bucket_bytes(bytes);
}

std::string describe_bucket_bytes(const std::vector<double>& bucket_bytes) {
  auto text = [](double bytes) {
    return bytes >= 1024 * 1024 ? fmt::format("{:.3g} MB", bytes / (1024 * 1024))
                                : fmt::format("{:.3g} KB", bytes / 1024);
  };
  std::string sizes;
  for (size_t i = 0; i < bucket_bytes.size();) {
    size_t same = 1;  // a run of buckets that print alike: "23 x 48.1 MB"
    while (i + same < bucket_bytes.size() && text(bucket_bytes[i + same]) == text(bucket_bytes[i]))
      ++same;
    if (!sizes.empty()) sizes += " + ";
    sizes += same > 2 ? fmt::format("{} x {}", same, text(bucket_bytes[i])) : text(bucket_bytes[i]);
    if (same == 2) sizes += " + " + text(bucket_bytes[i]);
    i += same;
  }
  return fmt::format("{} bucket{}: {}", bucket_bytes.size(), bucket_bytes.size() == 1 ? "" : "s",
                     sizes);
}

}  // namespace dsgd
