// The synthetic dataset: a seeded mixture of Gaussian blobs, no files needed.
// D = features, C = classes, K = blobs per class, L = informative dimensions.
//
// Recipe (all draws from data::Rng, so the bytes are the same everywhere):
//   stream 0: A (D, L) = Gram-Schmidt of a normal matrix (orthonormal columns);
//             centres (C, K, L) ~ N(0, 1); teacher w (D) ~ N(0, 1/D), b ~ N(0, 1).
//   stream 1 (train) / 2 (test), per sample: y ~ U[0, C), k ~ U[0, K),
//             x = A centre[y][k] + noise * N(0, I_D), stored as float32;
//             regression: target = x.w + b + noise * N(0, 1).
// Blobs spread in L = 8 dimensions but three per class make each class non-convex, so
// a linear model cannot separate them; the other D - L directions carry only noise.
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/data/loaders.h"
#include "core/data/rng.h"
#include "core/errors.h"

namespace dsgd::data {
namespace {

constexpr int64_t kBlobsPerClass = 3;
constexpr int64_t kInformativeDims = 8;
constexpr int64_t kMaxSamples = 100'000'000;
constexpr int64_t kMaxFeatures = 1'000'000;
constexpr int64_t kMaxClasses = 65536;
constexpr int64_t kMaxValues = int64_t{1} << 31;  // 8 GiB of float32 features
constexpr const char* kKeys = "train, test, features, classes, noise, seed";

struct SyntheticParams {
  int64_t train = 8192;
  int64_t test = 2048;
  int64_t features = 32;
  int64_t classes = 10;
  double noise = 0.3;
  uint64_t seed = 1;
};

[[noreturn]] void bad_value(const std::string& spec, std::string_view key, std::string_view value,
                            std::string_view expected) {
  throw UsageError(
      fmt::format("data spec '{}': {}='{}' is not valid; expected {}", spec, key, value, expected));
}

template <typename T>
bool parse_whole(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

void parse_int(const std::string& spec, std::string_view key, std::string_view value, int64_t lo,
               int64_t hi, int64_t& out) {
  int64_t v = 0;
  if (!parse_whole(value, v) || v < lo || v > hi)
    bad_value(spec, key, value, fmt::format("an integer in [{}, {}]", lo, hi));
  out = v;
}

SyntheticParams parse_params(std::string_view options, const std::string& spec) {
  SyntheticParams p;
  if (options.empty()) return p;
  size_t start = 0;
  while (start <= options.size()) {
    size_t comma = options.find(',', start);
    std::string_view item =
        options.substr(start, comma == std::string_view::npos ? comma : comma - start);
    start = comma == std::string_view::npos ? options.size() + 1 : comma + 1;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    if (eq == std::string_view::npos)
      throw UsageError(fmt::format("data spec '{}': '{}' is not key=value; valid keys are {}", spec,
                                   item, kKeys));
    std::string_view value = item.substr(eq + 1);
    if (key == "train") {
      parse_int(spec, key, value, 1, kMaxSamples, p.train);
    } else if (key == "test") {
      parse_int(spec, key, value, 1, kMaxSamples, p.test);
    } else if (key == "features") {
      parse_int(spec, key, value, 1, kMaxFeatures, p.features);
    } else if (key == "classes") {
      parse_int(spec, key, value, 2, kMaxClasses, p.classes);
    } else if (key == "noise") {
      double v = 0;
      if (!parse_whole(value, v) || !std::isfinite(v) || v < 0)
        bad_value(spec, key, value, "a finite number >= 0");
      p.noise = v;
    } else if (key == "seed") {
      uint64_t v = 0;
      if (!parse_whole(value, v)) bad_value(spec, key, value, "an integer >= 0");
      p.seed = v;
    } else {
      throw UsageError(
          fmt::format("data spec '{}': unknown key '{}'; valid keys are {}", spec, key, kKeys));
    }
  }
  if ((p.train + p.test) * p.features > kMaxValues)
    throw UsageError(fmt::format(
        "data spec '{}': (train + test) * features = {} values is too large (at most {}); "
        "use fewer samples or features",
        spec, (p.train + p.test) * p.features, kMaxValues));
  return p;
}

// The parts of the generator shared by both splits (stream 0).
struct Generator {
  int64_t d = 0, l = 0, c = 0;
  std::vector<double> basis;    // (D, L) orthonormal columns
  std::vector<double> centres;  // (C, K, L)
  std::vector<double> teacher;  // (D)
  double bias = 0;
};

Generator make_generator(const SyntheticParams& p) {
  Generator g;
  g.d = p.features;
  g.l = std::min(p.features, kInformativeDims);
  g.c = p.classes;
  Rng rng(p.seed, 0);
  g.basis.resize(static_cast<size_t>(g.d * g.l));
  for (double& v : g.basis)
    v = rng.normal();
  // Modified Gram-Schmidt on the columns; a normal matrix is full rank with probability 1.
  for (int64_t j = 0; j < g.l; ++j) {
    for (int64_t k = 0; k < j; ++k) {
      double dot = 0;
      for (int64_t i = 0; i < g.d; ++i)
        dot += g.basis[i * g.l + j] * g.basis[i * g.l + k];
      for (int64_t i = 0; i < g.d; ++i)
        g.basis[i * g.l + j] -= dot * g.basis[i * g.l + k];
    }
    double norm = 0;
    for (int64_t i = 0; i < g.d; ++i)
      norm += g.basis[i * g.l + j] * g.basis[i * g.l + j];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < g.d; ++i)
      g.basis[i * g.l + j] /= norm;
  }
  g.centres.resize(static_cast<size_t>(g.c * kBlobsPerClass * g.l));
  for (double& v : g.centres)
    v = rng.normal();
  g.teacher.resize(static_cast<size_t>(g.d));
  double scale = 1.0 / std::sqrt(static_cast<double>(g.d));
  for (double& v : g.teacher)
    v = rng.normal() * scale;
  g.bias = rng.normal();
  return g;
}

Split make_split(const Generator& g, int64_t n, double noise, Task task, uint64_t seed,
                 uint64_t stream) {
  Rng rng(seed, stream);
  Split s;
  s.x = Tensor({n, g.d});
  if (task == Task::classification)
    s.labels.resize(static_cast<size_t>(n));
  else
    s.targets.resize(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    auto y = static_cast<int64_t>(rng.uniform_index(static_cast<uint64_t>(g.c)));
    auto k = static_cast<int64_t>(rng.uniform_index(kBlobsPerClass));
    const double* centre = &g.centres[(y * kBlobsPerClass + k) * g.l];
    float* row = s.x.data() + r * g.d;
    for (int64_t i = 0; i < g.d; ++i) {
      double v = 0;
      for (int64_t j = 0; j < g.l; ++j)
        v += g.basis[i * g.l + j] * centre[j];
      row[i] = static_cast<float>(v + noise * rng.normal());
    }
    if (task == Task::classification) {
      s.labels[r] = static_cast<int32_t>(y);
    } else {
      double t = g.bias;
      for (int64_t i = 0; i < g.d; ++i)
        t += static_cast<double>(row[i]) * g.teacher[i];
      s.targets[r] = static_cast<float>(t + noise * rng.normal());
    }
  }
  return s;
}

}  // namespace

Dataset load_synthetic(std::string_view options, const std::string& spec, Task task) {
  SyntheticParams p = parse_params(options, spec);
  Generator g = make_generator(p);
  Dataset ds;
  ds.name = options.empty() ? "synthetic" : spec;
  ds.task = task;
  ds.features = p.features;
  ds.classes = task == Task::classification ? p.classes : 1;
  // Separate streams: changing `train` leaves the test split unchanged, and vice versa.
  ds.train = make_split(g, p.train, p.noise, task, p.seed, 1);
  ds.test = make_split(g, p.test, p.noise, task, p.seed, 2);
  return ds;
}

}  // namespace dsgd::data
