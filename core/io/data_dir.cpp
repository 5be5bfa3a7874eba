#include "core/io/data_dir.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {
namespace fs = std::filesystem;

std::vector<fs::path> data_dir_candidates() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  const fs::path dir = exe.parent_path();
  return {(dir.parent_path() / "share" / "dsgd").lexically_normal(), dir / "share" / "dsgd"};
}

std::string data_dir_places() {
  const std::vector<fs::path> places = data_dir_candidates();
  if (places.empty()) return "cannot read /proc/self/exe to find them";
  std::string out = "looked in " + places[0].string();
  for (size_t i = 1; i < places.size(); ++i)
    out += " and " + places[i].string();
  return out;
}

fs::path data_dir() {
  for (const fs::path& place : data_dir_candidates()) {
    std::error_code ec;
    if (fs::is_directory(place, ec)) return place;
  }
  throw DataError(fmt::format(
      "cannot find dsgd's data files (lessons, scenarios) beside this dsgd: {}; install it "
      "with cmake --install build/default --prefix DIR and run DIR/bin/dsgd",
      data_dir_places()));
}

}  // namespace dsgd
