#include "core/nn/model_spec.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {

namespace {

constexpr const char* kValidModels =
    "valid forms: softmax, linear, mlp:H[,H...] (e.g. mlp:128 or mlp:256,128), each H in "
    "1..1048576, and cnn:lenet";

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

ModelSpec parse_mlp(const std::string& text, const std::string& widths) {
  ModelSpec spec{ModelSpec::Kind::mlp, {}, {}};
  size_t start = 0;
  while (true) {
    size_t comma = widths.find(',', start);
    spec.hidden.push_back(parse_width(text, widths.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return spec;
}

}  // namespace

ModelSpec ModelSpec::parse(const std::string& text) {
  std::string t = trim(text);
  if (t == "softmax") return {Kind::softmax, {}, {}};
  if (t == "linear") return {Kind::linear, {}, {}};
  if (t.rfind("mlp:", 0) == 0) return parse_mlp(text, t.substr(4));
  if (t == "cnn:lenet") return {Kind::cnn, {}, "lenet"};
  if (t == "mlp")
    throw UsageError(
        fmt::format("--model \"{}\": mlp needs its hidden layer widths; {}", text, kValidModels));
  if (t == "cnn" || t.rfind("cnn:", 0) == 0)
    throw UsageError(fmt::format(
        "--model \"{}\": the convolutional network dsgd has is cnn:lenet; {}", text, kValidModels));
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
    case Kind::cnn:
      return "cnn:" + architecture;
  }
  return "?";
}

}  // namespace dsgd
