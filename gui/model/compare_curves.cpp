#include "gui/model/compare_curves.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/smoothing.h"

namespace dsgd::gui {
namespace {

using nlohmann::json;

constexpr const char* kWhat = "give the file that dsgd compare --json FILE wrote";

Curve curve_of(const json& run) {
  Curve c{.label = run.at("label").get<std::string>()};
  for (const json& s : run.at("steps")) {
    CurvePoint p{.step = s.at("step").get<int64_t>(), .loss = s.at("loss").get<double>()};
    p.wall_s = s.value("wall_s", 0.0);
    p.model_s = s.value("model_s", p.wall_s);
    if (p.model_s < 0) p.model_s = p.wall_s;  // a backend without model time
    p.test_accuracy = s.value("test_accuracy", -1.0);
    c.points.push_back(p);
  }
  std::vector<double> losses;
  for (const CurvePoint& p : c.points)
    losses.push_back(p.loss);
  const std::vector<double> trend = smoothed(losses);
  for (size_t i = 0; i < c.points.size(); ++i)
    c.points[i].loss = trend[i];
  return c;
}

}  // namespace

std::vector<Curve> load_compare_curves(const std::string& path) {
  const std::string text = read_input_file(path, kGiB, "a dsgd compare file");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw DataError(
        fmt::format("{}: not a dsgd compare file: invalid JSON: {}; {}", path, e.what(), kWhat));
  }
  if (!j.is_object() || !j.contains("runs") || !j["runs"].is_array() || j["runs"].empty())
    throw DataError(fmt::format("{}: not a dsgd compare file: no \"runs\"; {}", path, kWhat));
  std::vector<Curve> curves;
  for (size_t i = 0; i < j["runs"].size(); ++i) {
    try {
      curves.push_back(curve_of(j["runs"][i]));
    } catch (const json::exception& e) {
      throw DataError(
          fmt::format("{}: run {} is not a compared run: {}; {}", path, i + 1, e.what(), kWhat));
    }
  }
  return curves;
}

}  // namespace dsgd::gui
