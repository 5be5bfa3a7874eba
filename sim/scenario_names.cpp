#include "sim/scenario_names.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "core/io/data_dir.h"

namespace dsgd::sim {
namespace fs = std::filesystem;
namespace {

bool reads_as_path(const std::string& given) {
  std::error_code ec;
  return given.find('/') != std::string::npos || fs::path(given).extension() == ".toml" ||
         fs::exists(given, ec);
}

// DATA/scenarios, or empty when dsgd's data files are not found.
fs::path scenarios_dir() {
  for (const fs::path& place : data_dir_candidates()) {
    std::error_code ec;
    if (fs::is_directory(place / "scenarios", ec)) return place / "scenarios";
  }
  return {};
}

}  // namespace

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  const fs::path dir = scenarios_dir();
  std::error_code ec;
  if (dir.empty()) return names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_scenario(const std::string& given) {
  if (given.empty() || reads_as_path(given)) return given;
  const fs::path dir = scenarios_dir();
  if (dir.empty())
    throw DataError(fmt::format(
        "--scenario {}: no such file, and no scenarios installed beside dsgd ({}); give the "
        "path of a TOML file",
        given, data_dir_places()));
  const fs::path file = dir / (given + ".toml");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw DataError(fmt::format(
        "--scenario {}: no such file or scenario; the scenarios are {} (in {}), or give the "
        "path of a TOML file",
        given, fmt::join(scenario_names(), ", "), dir.string()));
  return file.string();
}

}  // namespace dsgd::sim
