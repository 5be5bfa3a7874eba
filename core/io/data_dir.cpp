#include "core/io/data_dir.h"

#include <dlfcn.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {
namespace fs = std::filesystem;

namespace {

// The places beside a binary in `dir`.
void add_places(const fs::path& dir, std::vector<fs::path>& out) {
  for (fs::path place :
       {(dir.parent_path() / "share" / "dsgd").lexically_normal(), dir / "share" / "dsgd"})
    if (std::find(out.begin(), out.end(), place) == out.end()) out.push_back(place);
}

}  // namespace

std::vector<fs::path> data_dir_candidates() {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && !exe.empty()) add_places(exe.parent_path(), out);
  // This code inside a library another program loaded (the PyTorch backend's module in
  // python3): beside that library too.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&data_dir_candidates), &info) != 0 && info.dli_fname &&
      fs::path(info.dli_fname).is_absolute())
    add_places(fs::path(info.dli_fname).parent_path(), out);
  return out;
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
