// load_dataset: splits the spec string and dispatches to one loader per kind
// (synthetic.cpp, csv.cpp, idx.cpp); also the fingerprint and the shared split helpers.
#include "core/data/dataset.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/data/loaders.h"
#include "core/errors.h"
#include "core/fnv1a.h"

namespace dsgd {
namespace {

std::vector<std::string> split_paths(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.emplace_back(s.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

[[noreturn]] void bad_spec(const std::string& spec, const std::string& why) {
  throw UsageError(fmt::format("data spec '{}': {}; use one of {}", spec, why, kDataSpecHelp));
}

void hash_split(Fnv1a& h, const Split& s) {
  h.u64(s.x.shape().size());
  for (int64_t d : s.x.shape())
    h.u64(static_cast<uint64_t>(d));
  h.floats(s.x.data(), static_cast<size_t>(s.x.numel()));
  h.u64(s.labels.size());
  for (int32_t l : s.labels)
    h.u32(static_cast<uint32_t>(l));
  h.u64(s.targets.size());
  h.floats(s.targets.data(), s.targets.size());
}

}  // namespace

Dataset load_dataset(const std::string& spec, const DataOptions& options) {
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  bool has_arg = colon != std::string::npos;
  std::string arg = has_arg ? spec.substr(colon + 1) : std::string();

  if (kind == "synthetic") return data::load_synthetic(arg, spec, options.task);
  if (kind == "fashion-mnist" || kind == "idx") {
    if (options.task != Task::classification)
      throw UsageError(
          fmt::format("data spec '{}': {} holds class labels, not regression targets; use "
                      "synthetic or csv:PATH for regression",
                      spec, kind));
  }
  if (kind == "fashion-mnist") {
    if (has_arg && arg.empty()) bad_spec(spec, "no directory after 'fashion-mnist:'");
    return data::load_fashion_mnist(has_arg ? arg : "/usr/share/datasets/fashion-mnist");
  }
  if (kind == "csv" || kind == "idx") {
    std::vector<std::string> paths = split_paths(arg);
    bool empty_path = std::any_of(paths.begin(), paths.end(), [](auto& p) { return p.empty(); });
    if (!has_arg || empty_path) bad_spec(spec, fmt::format("'{}' needs file paths", kind));
    if (kind == "csv") {
      if (paths.size() > 2)
        bad_spec(spec, fmt::format("csv takes 1 or 2 paths, got {}", paths.size()));
      return data::load_csv(paths, options.task);
    }
    if (paths.size() != 2 && paths.size() != 4)
      bad_spec(spec, fmt::format("idx takes 2 or 4 paths, got {}", paths.size()));
    return data::load_idx(paths);
  }
  bad_spec(spec, fmt::format("unknown dataset '{}'", kind));
}

uint64_t dataset_fingerprint(const Dataset& dataset) {
  Fnv1a h;
  h.u64(dataset.task == Task::classification ? 0 : 1);
  h.u64(static_cast<uint64_t>(dataset.features));
  h.u64(static_cast<uint64_t>(dataset.classes));
  hash_split(h, dataset.train);
  hash_split(h, dataset.test);
  return h.value();
}

namespace data {

void hold_out_every_10th(const Split& all, Split& train, Split& test) {
  int64_t n = all.size();
  int64_t d = all.x.shape().size() == 2 ? all.x.dim(1) : 0;
  int64_t n_test = n / 10;
  train.x = Tensor({n - n_test, d});
  test.x = Tensor({n_test, d});
  train.labels.clear(), test.labels.clear(), train.targets.clear(), test.targets.clear();
  int64_t tr = 0, te = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool held_out = i % 10 == 9;
    Split& dst = held_out ? test : train;
    int64_t row = held_out ? te++ : tr++;
    std::memcpy(dst.x.data() + row * d, all.x.data() + i * d, sizeof(float) * d);
    if (!all.labels.empty()) dst.labels.push_back(all.labels[i]);
    if (!all.targets.empty()) dst.targets.push_back(all.targets[i]);
  }
}

int64_t count_classes(const Split& train, const Split& test) {
  int32_t max_label = -1;
  for (int32_t l : train.labels)
    max_label = std::max(max_label, l);
  for (int32_t l : test.labels)
    max_label = std::max(max_label, l);
  return max_label + 1;
}

}  // namespace data
}  // namespace dsgd
