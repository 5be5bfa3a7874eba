// Notation: n = rows in this call, L = Linear layers, layer l maps sizes[l] -> sizes[l + 1].
#include "core/nn/model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/nn/blas.h"

namespace dsgd {

// --- ModelSpec ------------------------------------------------------------------------

namespace {

constexpr const char* kValidModels =
    "valid forms: softmax, linear, mlp:H[,H...] (e.g. mlp:128 or mlp:256,128), each H in "
    "1..1048576";

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

int64_t parse_width(const std::string& text, const std::string& item) {
  std::string t = trim(item);
  bool digits = !t.empty() && t.size() <= 8 &&
                std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  int64_t h = digits ? std::stoll(t) : 0;
  if (h < 1 || h > ModelSpec::kMaxWidth)
    throw UsageError(fmt::format("--model \"{}\": \"{}\" is not a hidden layer width; {}", text,
                                 item, kValidModels));
  return h;
}

}  // namespace

ModelSpec ModelSpec::parse(const std::string& text) {
  std::string t = trim(text);
  if (t == "softmax") return {Kind::softmax, {}};
  if (t == "linear") return {Kind::linear, {}};
  if (t.rfind("mlp:", 0) == 0) {
    ModelSpec spec{Kind::mlp, {}};
    std::string rest = t.substr(4);
    size_t start = 0;
    while (true) {
      size_t comma = rest.find(',', start);
      spec.hidden.push_back(parse_width(text, rest.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return spec;
  }
  if (t == "mlp")
    throw UsageError(
        fmt::format("--model \"{}\": mlp needs its hidden layer widths; {}", text, kValidModels));
  throw UsageError(fmt::format("--model \"{}\" is not a model; {}", text, kValidModels));
}

std::string ModelSpec::str() const {
  switch (kind) {
    case Kind::softmax:
      return "softmax";
    case Kind::linear:
      return "linear";
    case Kind::mlp:
      return fmt::format("mlp:{}", fmt::join(hidden, ","));
  }
  return "?";
}

// --- Mlp: construction and initialisation ---------------------------------------------

Mlp::Mlp(std::vector<int64_t> sizes, int64_t extra_grad_slots) : sizes_(std::move(sizes)) {
  if (sizes_.size() < 2)
    throw UsageError(
        fmt::format("Mlp: needs at least input and output sizes, got {} size(s)", sizes_.size()));
  if (extra_grad_slots < 0)
    throw UsageError(fmt::format("Mlp: extra_grad_slots must be >= 0, got {}", extra_grad_slots));
  for (int64_t s : sizes_) {
    if (s < 1 || s > kMaxParams)
      throw UsageError(fmt::format("Mlp: layer sizes ({}) must each be in 1..{}",
                                   fmt::join(sizes_, ", "), kMaxParams));
  }
  int64_t offset = 0;
  for (int64_t l = 0; l + 1 < static_cast<int64_t>(sizes_.size()); ++l) {
    int64_t in = sizes_[l], out = sizes_[l + 1];
    params_.push_back({fmt::format("layers.{}.weight", l), {out, in}, offset, out * in});
    offset += out * in;
    params_.push_back({fmt::format("layers.{}.bias", l), {out}, offset, out});
    offset += out;
    if (offset > kMaxParams)
      throw UsageError(fmt::format(
          "model with layer sizes ({}) has more than {} parameters; use narrower hidden layers",
          fmt::join(sizes_, ", "), kMaxParams));
  }
  num_params_ = offset;
  values_.assign(static_cast<size_t>(num_params_), 0.0f);
  grad_buffer_.assign(static_cast<size_t>(num_params_ + extra_grad_slots), 0.0f);
  acts_.resize(sizes_.size() - 1);
}

Mlp Mlp::from_spec(const ModelSpec& spec, int64_t features, int64_t outputs,
                   int64_t extra_grad_slots) {
  std::vector<int64_t> sizes{features};
  sizes.insert(sizes.end(), spec.hidden.begin(), spec.hidden.end());
  sizes.push_back(outputs);
  return Mlp(std::move(sizes), extra_grad_slots);
}

void Mlp::zero_grad() {
  std::fill(grad_buffer_.begin(), grad_buffer_.end(), 0.0f);
}

namespace {

// xoshiro256** (Blackman & Vigna), seeded through splitmix64: the same stream everywhere.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [-1, 1) on a grid of 2^-23: exact in float, so bound * it stays in bounds.
  float symmetric() { return static_cast<float>(next() >> 40) * 0x1.0p-23f - 1.0f; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace

void Mlp::init(uint64_t seed) {
  Xoshiro256 rng(seed);
  // Parameters in params() order: layers.0.weight, layers.0.bias, layers.1.weight, ...
  for (int64_t l = 0; l < num_layers(); ++l) {
    float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sizes_[l])));
    for (int p = 0; p < 2; ++p) {
      const ParamInfo& info = params_[2 * l + p];
      float* v = values_.data() + info.offset;
      for (int64_t i = 0; i < info.numel; ++i)
        v[i] = bound * rng.symmetric();
    }
  }
}

// --- Mlp: forward and backward --------------------------------------------------------

namespace {

void grow(std::vector<float>& buf, int64_t count) {
  if (static_cast<int64_t>(buf.size()) < count) buf.resize(static_cast<size_t>(count));
}

}  // namespace

std::span<const float> Mlp::forward(const float* x, int64_t n) {
  if (n < 0) throw std::invalid_argument(fmt::format("Mlp::forward: n = {} < 0", n));
  const int64_t layers = num_layers();
  const float* in = x;  // (n, sizes[l])
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t in_dim = sizes_[l], out_dim = sizes_[l + 1];
    grow(acts_[l], n * out_dim);
    float* out = acts_[l].data();                                 // (n, out_dim)
    const float* w = values_.data() + params_[2 * l].offset;      // (out_dim, in_dim)
    const float* b = values_.data() + params_[2 * l + 1].offset;  // (out_dim)
    gemm(false, true, n, out_dim, in_dim, 1.0f, in, in_dim, w, in_dim, 0.0f, out, out_dim);
    // Bias and ReLU in one pass over the output.
    if (l + 1 < layers) {
      for (int64_t i = 0; i < n; ++i) {
        float* row = out + i * out_dim;
        for (int64_t j = 0; j < out_dim; ++j)
          row[j] = std::max(row[j] + b[j], 0.0f);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        float* row = out + i * out_dim;
        for (int64_t j = 0; j < out_dim; ++j)
          row[j] += b[j];
      }
    }
    in = out;
  }
  forward_rows_ = n;
  return {acts_[layers - 1].data(), static_cast<size_t>(n * sizes_.back())};
}

void Mlp::backward(const float* x, const float* dout, int64_t n, const LayerDone& layer_done) {
  if (n != forward_rows_)
    throw std::logic_error(fmt::format(
        "Mlp::backward: called with n = {} after forward with n = {}", n, forward_rows_));
  const int64_t layers = num_layers();
  int64_t max_hidden = 0;
  for (int64_t l = 1; l < layers; ++l)
    max_hidden = std::max(max_hidden, sizes_[l]);
  grow(delta_a_, n * max_hidden);
  grow(delta_b_, n * max_hidden);

  float* grads = grad_buffer_.data();
  // The output layer's bias gradient: column sums of dout. Lower layers get theirs in
  // the pass that applies the ReLU mask, below.
  {
    const int64_t o = sizes_.back();
    float* db = grads + params_[2 * (layers - 1) + 1].offset;  // (O)
    for (int64_t i = 0; i < n; ++i) {
      const float* row = dout + i * o;
      for (int64_t j = 0; j < o; ++j)
        db[j] += row[j];
    }
  }

  const float* g = dout;  // (n, out_dim) = dLoss/d(layer l's pre-activation output)
  for (int64_t l = layers - 1; l >= 0; --l) {
    const int64_t in_dim = sizes_[l], out_dim = sizes_[l + 1];
    const float* a_in = l == 0 ? x : acts_[l - 1].data();  // (n, in_dim)
    float* dw = grads + params_[2 * l].offset;             // (out_dim, in_dim)
    // dW += g^T a_in
    gemm(true, false, out_dim, in_dim, n, 1.0f, g, out_dim, a_in, in_dim, 1.0f, dw, in_dim);
    if (layer_done) layer_done(l);  // its bias gradient was finished by the pass above
    if (l == 0) break;              // nobody needs dLoss/dx
    // da = g W, then through the ReLU that produced a_in (a_in > 0 exactly where its
    // input was > 0), summing the result into the previous layer's bias gradient.
    float* da = (l % 2 == 0) ? delta_a_.data() : delta_b_.data();  // (n, in_dim)
    const float* w = values_.data() + params_[2 * l].offset;
    gemm(false, false, n, in_dim, out_dim, 1.0f, g, out_dim, w, in_dim, 0.0f, da, in_dim);
    float* db_prev = grads + params_[2 * (l - 1) + 1].offset;  // (in_dim)
    for (int64_t i = 0; i < n; ++i) {
      float* row = da + i * in_dim;
      const float* act = a_in + i * in_dim;
      for (int64_t j = 0; j < in_dim; ++j) {
        float v = act[j] > 0.0f ? row[j] : 0.0f;
        row[j] = v;
        db_prev[j] += v;
      }
    }
    g = da;
  }
}

}  // namespace dsgd
