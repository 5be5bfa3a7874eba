// Parsing ASTRA-sim 1.0's text workload. Index: LineReader (lines, skipping blanks and
// comments, with their numbers for errors), fields and numbers, the header (parallelism, layer
// count), one layer line, the whole file.
#include "core/workload/astra_workload.h"

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/input_file.h"

namespace dsgd {
namespace {

constexpr double kSecondsPerCycle = 1e-9;  // 1 GHz, as ASTRA-sim's analytical backend counts
constexpr uint64_t kMaxFileBytes = 64 * kMiB;
constexpr int64_t kMaxLayers = int64_t{1} << 20;
// 1 TiB, or 18 minutes of cycles: bigger is a typo, and the sums of 2^20 layers stay in range.
constexpr int64_t kMaxValue = int64_t{1} << 40;
constexpr size_t kLayerFields = 12;
constexpr size_t kLayerFieldsWithMemory = 14;  // + memory read and write bytes, ignored

class LineReader {
 public:
  LineReader(std::istream& in, const std::string& file) : in_(in), file_(file) {}

  // The next line that is neither blank nor a '#' comment, split at whitespace; false at the
  // end of the input.
  bool next(std::vector<std::string>& fields) {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_no_;
      fields.clear();
      std::istringstream words(line);
      for (std::string word; words >> word;)
        fields.push_back(word);
      if (!fields.empty() && fields[0][0] != '#') return true;
    }
    if (in_.bad()) fail(line_no_ + 1, "the read failed; check the file");
    return false;
  }

  int line_no() const { return line_no_; }

  [[noreturn]] void fail(int line_no, const std::string& what) const {
    throw DataError(fmt::format("{}:{}: {}", file_, line_no, what));
  }
  [[noreturn]] void fail(const std::string& what) const { fail(line_no_, what); }

 private:
  std::istream& in_;
  const std::string& file_;
  int line_no_ = 0;
};

// A whole number in 0..kMaxValue; `what` names the field ("forward compute cycles").
int64_t parse_count(const LineReader& reader, const std::string& text, const std::string& what) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && ptr == end && value > kMaxValue))
    reader.fail(fmt::format("{} {} is more than {}; check the field", what, text, kMaxValue));
  if (ec != std::errc() || ptr != end)
    reader.fail(
        fmt::format("{} \"{}\" is not a whole number; ASTRA-sim 1.0 gives cycles and "
                    "bytes as integers",
                    what, text));
  if (value < 0) reader.fail(fmt::format("{} {} is negative; give 0 or more", what, text));
  return value;
}

bool is_integer(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

// Line 1, the parallelism, and line 2, the number of layers.
int64_t parse_header(LineReader& reader) {
  std::vector<std::string> fields;
  if (!reader.next(fields))
    reader.fail(1,
                "empty file; an ASTRA-sim 1.0 workload starts with its parallelism (DATA) "
                "and its number of layers");
  if (fields[0] != "DATA")
    reader.fail(
        fmt::format("parallelism {} is not modelled: dsgd runs DATA (data-parallel) "
                    "workloads; convert the file, or use a built-in model",
                    fields[0]));
  const int parallelism_line = reader.line_no();
  if (!reader.next(fields))
    reader.fail(parallelism_line,
                "no number of layers after the parallelism; add it on the "
                "next line");
  if (fields.size() != 1)
    reader.fail(
        fmt::format("{} fields where the number of layers should be alone; give one "
                    "number",
                    fields.size()));
  const int64_t layers = parse_count(reader, fields[0], "number of layers");
  if (layers < 1 || layers > kMaxLayers)
    reader.fail(fmt::format("number of layers {} is not in 1..{}; give the number of layer lines",
                            layers, kMaxLayers));
  return layers;
}

// Forward and input-grad passes: data-parallel layers do not communicate there.
void check_no_comm(const LineReader& reader, const std::string& pass, const std::string& type,
                   int64_t bytes) {
  if (type == "NONE" || bytes == 0) return;
  reader.fail(
      fmt::format("{} communication {} of {} bytes: dsgd's data-parallel layers "
                  "communicate only after weight-grad; set it to NONE 0, or use a "
                  "built-in model",
                  pass, type, bytes));
}

WorkloadLayer parse_layer(const LineReader& reader, const std::vector<std::string>& f) {
  if (f.size() != kLayerFields && f.size() != kLayerFieldsWithMemory)
    reader.fail(fmt::format(
        "{} fields; a layer has {} (name, reserved -1, then forward, input-grad and weight-grad "
        "each as compute cycles, comm type, comm bytes, then the update delay) or {} (with "
        "memory read and write bytes)",
        f.size(), kLayerFields, kLayerFieldsWithMemory));
  WorkloadLayer layer;
  layer.name = f[0];
  // Reserved: -1 in ASTRA-sim 1.0's files; ASTRA-sim 2's converter reads it as "trainable".
  if (!is_integer(f[1]))
    reader.fail(fmt::format("reserved field \"{}\" is not a whole number; write -1", f[1]));
  layer.forward_s = kSecondsPerCycle * parse_count(reader, f[2], "forward compute cycles");
  check_no_comm(reader, "forward", f[3], parse_count(reader, f[4], "forward comm bytes"));
  layer.input_grad_s = kSecondsPerCycle * parse_count(reader, f[5], "input-grad compute cycles");
  check_no_comm(reader, "input-grad", f[6], parse_count(reader, f[7], "input-grad comm bytes"));
  layer.weight_grad_s = kSecondsPerCycle * parse_count(reader, f[8], "weight-grad compute cycles");
  const int64_t wg_bytes = parse_count(reader, f[10], "weight-grad comm bytes");
  if (f[9] == "ALLREDUCE")
    layer.grad_bytes = wg_bytes;
  else if (f[9] != "NONE")
    reader.fail(
        fmt::format("weight-grad communication {}: dsgd all-reduces gradients only "
                    "(ALLREDUCE or NONE)",
                    f[9]));
  layer.update_s = kSecondsPerCycle * parse_count(reader, f[11], "update delay cycles");
  if (f.size() == kLayerFieldsWithMemory) {
    parse_count(reader, f[12], "memory read bytes");
    parse_count(reader, f[13], "memory write bytes");
  }
  return layer;
}

}  // namespace

Workload parse_astra_workload(std::istream& in, const std::string& name) {
  LineReader reader(in, name);
  const int64_t declared = parse_header(reader);
  const int count_line = reader.line_no();
  Workload w;
  w.name = name;
  w.source = fmt::format(
      "ASTRA-sim 1.0 text workload {}: compute and update cycles read as ns (1 GHz)", name);
  std::vector<std::string> fields;
  while (reader.next(fields)) {
    if (static_cast<int64_t>(w.layers.size()) == declared)
      reader.fail(
          fmt::format("a layer line past the {} layers declared on line {}; make the "
                      "number of layers match the lines",
                      declared, count_line));
    w.layers.push_back(parse_layer(reader, fields));
  }
  if (static_cast<int64_t>(w.layers.size()) != declared)
    reader.fail(count_line, fmt::format("{} layers declared, but {} layer lines follow; make the "
                                        "number of layers match the lines",
                                        declared, w.layers.size()));
  return w;
}

Workload read_astra_workload(const std::string& path) {
  std::istringstream in(read_input_file(path, kMaxFileBytes, "an ASTRA-sim workload"));
  return parse_astra_workload(in, std::filesystem::path(path).filename().string());
}

}  // namespace dsgd
