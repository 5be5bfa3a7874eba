#include "core/train/comm_hook.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/train/powersgd_hook.h"

namespace dsgd {
namespace {

constexpr const char* kValidCompress =
    "use none, fp16, bf16, powersgd:R (R >= 1, the rank) or topk:RATIO (0 < RATIO <= 1)";

[[noreturn]] void bad_compress(const std::string& text, const std::string& why) {
  throw UsageError(fmt::format("--compress \"{}\": {}; {}", text, why, kValidCompress));
}

template <class T>
T parse_number(const std::string& text, const std::string& value) {
  T out{};
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty())
    bad_compress(text, fmt::format("\"{}\" is not a number", value));
  return out;
}

}  // namespace

CompressSpec CompressSpec::parse(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (text == "none") return {};
  if ((kind == "fp16" || kind == "bf16") && colon == std::string::npos)
    return {.kind = kind == "fp16" ? Kind::fp16 : Kind::bf16};
  if (kind == "powersgd") {
    const int64_t rank = colon == std::string::npos ? 1 : parse_number<int64_t>(text, arg);
    if (rank < 1 || rank > 1024) bad_compress(text, "the rank must be 1 to 1024");
    return {.kind = Kind::powersgd, .rank = rank};
  }
  if (kind == "topk") {
    if (colon == std::string::npos) bad_compress(text, "topk needs the ratio of values to send");
    const double ratio = parse_number<double>(text, arg);
    if (!(ratio > 0 && ratio <= 1)) bad_compress(text, "the ratio must be above 0 and at most 1");
    return {.kind = Kind::topk, .ratio = ratio};
  }
  bad_compress(text, "not a compression hook");
}

std::string CompressSpec::str() const {
  switch (kind) {
    case Kind::none:
      return "none";
    case Kind::fp16:
      return "fp16";
    case Kind::bf16:
      return "bf16";
    case Kind::powersgd:
      return fmt::format("powersgd:{}", rank);
    case Kind::topk:
      return fmt::format("topk:{}", ratio);
  }
  return "";
}

std::vector<HookBucket> hook_buckets(const Model& model,
                                     const std::vector<GradientBucket>& buckets) {
  std::vector<GradientBucket> all = buckets;
  if (all.empty()) {
    GradientBucket whole{.begin = 0, .end = model.num_params()};
    for (int i = static_cast<int>(model.params().size()) - 1; i >= 0; --i)
      whole.params.push_back(i);
    all.push_back(whole);
  }
  std::vector<HookBucket> out;
  for (const GradientBucket& b : all) {
    HookBucket h{.index = static_cast<int>(out.size())};
    for (int i : b.params) {
      const ParamInfo& p = model.params()[size_t(i)];
      const int64_t rows = p.shape.empty() ? 1 : p.shape[0];
      h.tensors.push_back(
          {.name = p.name, .offset = p.offset - b.begin, .rows = rows, .cols = p.numel / rows});
      h.size += p.numel;
    }
    out.push_back(std::move(h));
  }
  return out;
}

std::unique_ptr<CommHook> make_comm_hook(const CommHookOptions& o) {
  switch (o.spec.kind) {
    case CompressSpec::Kind::none:
      return nullptr;
    case CompressSpec::Kind::fp16:
      return make_float16_hook(WireFormat::f16, o.algorithm);
    case CompressSpec::Kind::bf16:
      return make_float16_hook(WireFormat::bf16, o.algorithm);
    case CompressSpec::Kind::powersgd:
      return std::make_unique<PowerSgdHook>(PowerSgdOptions{.rank = o.spec.rank,
                                                            .start_iter = o.powersgd_start,
                                                            .seed = o.seed,
                                                            .algorithm = o.algorithm,
                                                            .initial_q = o.initial_q});
    case CompressSpec::Kind::topk:
      return make_topk_hook(o.spec.ratio, o.algorithm);
  }
  return nullptr;
}

}  // namespace dsgd
