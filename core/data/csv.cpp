// CSV datasets: one sample per line, "f1,f2,...,fD,label". The first non-blank, non-comment
// line is a header when any of its fields is not a number. Every error names file:line.
#include <charconv>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/data/loaders.h"
#include "core/errors.h"
#include "core/io/input_file.h"

namespace dsgd::data {
namespace {

constexpr double kMaxLabel = 65535;
constexpr uint64_t kMaxCsvBytes = 4 * kGiB;  // read whole, then parsed to floats

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start)));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

enum class NumberStatus { ok, not_a_number, out_of_range };

template <typename T>
NumberStatus parse_number(std::string_view s, T& out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);  // from_chars refuses a leading '+'
  if (s.empty()) return NumberStatus::not_a_number;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ptr != end) return NumberStatus::not_a_number;
  if (ec == std::errc::result_out_of_range) return NumberStatus::out_of_range;
  return ec == std::errc() ? NumberStatus::ok : NumberStatus::not_a_number;
}

// A CSV is UTF-8 (or ASCII) text: UTF-16 and binary files are refused by name, before a
// NUL byte could cut an error message that quotes a line.
void check_text_encoding(const std::string& text, const std::string& path) {
  if (text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF"))
    throw DataError(fmt::format(
        "{}: UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8 CSV", path));
  const size_t nul = text.find('\0');
  if (nul != std::string::npos)
    throw DataError(
        fmt::format("{}: a NUL byte at offset {}: not a text file (or UTF-16 without a "
                    "byte order mark); save it as UTF-8 CSV",
                    path, nul));
}

// Accumulates the rows of one or two files, which must agree on the number of fields.
struct CsvReader {
  explicit CsvReader(Task t) : task(t) {}
  Task task;
  size_t fields = 0;        // set by the first line of the first file
  std::string fields_path;  // where `fields` was set, for mismatch messages
  int64_t fields_line = 0;

  Split read(const std::string& path) {
    std::string text = read_input_file(path, kMaxCsvBytes, "a CSV file");
    check_text_encoding(text, path);
    if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // a UTF-8 BOM (spreadsheets)

    std::vector<float> x;
    Split s;
    int64_t rows = 0;
    bool first_content = true;
    size_t pos = 0;
    for (int64_t line_no = 1; pos < text.size(); ++line_no) {
      size_t nl = text.find('\n', pos);
      std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      line = trim(line);
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string_view> f = split_fields(line);
      std::string where = fmt::format("{}:{}", path, line_no);

      bool header = false;
      if (first_content) {
        first_content = false;
        for (std::string_view field : f) {
          double v;
          if (parse_number(field, v) == NumberStatus::not_a_number) header = true;
        }
        if (fields == 0) {
          if (f.size() < 2)
            throw DataError(
                fmt::format("{}: found 1 field; each line needs features and a label "
                            "(f1,...,fD,label)",
                            where));
          fields = f.size();
          fields_path = path;
          fields_line = line_no;
        }
      }
      if (f.size() != fields) {
        std::string like = fields_path == path
                               ? fmt::format("line {}", fields_line)
                               : fmt::format("'{}' line {}", fields_path, fields_line);
        throw DataError(
            fmt::format("{}: expected {} fields ({} features + label) like {}, "
                        "found {}; fix or remove the line",
                        where, fields, fields - 1, like, f.size()));
      }
      if (header) continue;

      for (size_t i = 0; i + 1 < fields; ++i)
        x.push_back(parse_feature(f[i], i, where));
      parse_label(f.back(), fields - 1, where, s);
      ++rows;
    }
    if (rows == 0)
      throw DataError(fmt::format("{}: no data rows; each line should be f1,...,fD,label", path));
    s.x = Tensor({rows, static_cast<int64_t>(fields - 1)}, std::move(x));
    return s;
  }

  // Parsed as double, then rounded to float: the same two steps as np.loadtxt(dtype=float32).
  static float parse_feature(std::string_view field, size_t index, const std::string& where) {
    double v = 0;
    NumberStatus st = parse_number(field, v);
    if (st == NumberStatus::not_a_number)
      throw DataError(fmt::format("{}: field {} '{}' is not a number; fix or remove the line",
                                  where, index + 1, field));
    if (std::isnan(v))
      throw DataError(fmt::format("{}: field {} is NaN; clean the data", where, index + 1));
    if (std::isinf(v))
      throw DataError(fmt::format("{}: field {} is infinite; clean the data", where, index + 1));
    // Beyond double range either way (1e999, 1e-999), or too large for float32.
    if (st == NumberStatus::out_of_range || std::abs(v) > FLT_MAX)
      throw DataError(fmt::format("{}: field {} '{}' is out of float32 range; rescale the data",
                                  where, index + 1, field));
    return static_cast<float>(v);
  }

  void parse_label(std::string_view field, size_t index, const std::string& where, Split& s) {
    if (task == Task::regression) {
      s.targets.push_back(parse_feature(field, index, where));
      return;
    }
    double v = 0;
    if (parse_number(field, v) != NumberStatus::ok || !std::isfinite(v) || v < 0 ||
        v != std::floor(v))
      throw DataError(
          fmt::format("{}: label '{}' is not a class index (an integer >= 0)", where, field));
    if (v > kMaxLabel)
      throw DataError(fmt::format("{}: label '{}' is too large; class indices go up to {}", where,
                                  field, kMaxLabel));
    s.labels.push_back(static_cast<int32_t>(v));
  }
};

}  // namespace

Dataset load_csv(const std::vector<std::string>& paths, Task task) {
  CsvReader reader(task);
  Dataset ds;
  ds.name = "csv:" + paths[0] + (paths.size() == 2 ? "," + paths[1] : "");
  ds.task = task;
  Split first = reader.read(paths[0]);
  if (paths.size() == 2) {
    ds.train = std::move(first);
    ds.test = reader.read(paths[1]);
  } else {
    if (first.size() < 10)
      throw DataError(
          fmt::format("{}: {} data rows; holding out every 10th row for testing "
                      "needs at least 10, or pass csv:TRAIN,TEST",
                      paths[0], first.size()));
    hold_out_every_10th(first, ds.train, ds.test);
  }
  ds.features = static_cast<int64_t>(reader.fields - 1);
  ds.classes = task == Task::classification ? count_classes(ds.train, ds.test) : 1;
  return ds;
}

}  // namespace dsgd::data
