// Files for tests: a scratch directory removed with everything in it, and reading and
// listing what a test wrote.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace dsgd::test {

// Names of the entries in `dir`, sorted, each followed by a space.
inline std::string dir_listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names)
    s += n + " ";
  return s;
}

// The names of the entries in `dir`.
inline std::set<std::string> entry_names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

// A file's bytes ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `bytes` into the file at `path`, replacing what it held.
inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A fresh empty directory, removed with everything in it when the object goes away (also
// what a test made read-only in it).
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() / ("dsgd_test_" + std::to_string(::getpid()) +
                                                      "_" + std::to_string(std::random_device{}()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path_, ec))
      std::filesystem::permissions(e.path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  // Names of the entries in the directory, sorted, each followed by a space.
  std::string listing() const { return dir_listing(path_); }
  // Writes `text` into the file `name` here and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    write_file(path_ / name, text);
    return *this / name;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace dsgd::test
