// Runs the real `dsgd` binary for integration tests: exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>
#include <algorithm>
#include <sstream>
#include <string>

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

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `binary args` (args are passed through the shell: quote paths with spaces yourself).
inline CliResult run_program(const std::string& binary, const std::string& args) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto tag = std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}());
  const auto out = dir / ("dsgd_out_" + tag), err = dir / ("dsgd_err_" + tag);
  const std::string cmd =
      binary + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

#ifdef DSGD_BINARY
inline CliResult run_dsgd(const std::string& args) {
  return run_program(DSGD_BINARY, args);
}
#endif

// A fresh empty directory, removed with everything in it when the object goes away.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() / ("dsgd_test_" + std::to_string(::getpid()) +
                                                      "_" + std::to_string(std::random_device{}()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  // Names of the entries in the directory, sorted, each followed by a space.
  std::string listing() const { return dir_listing(path_); }

 private:
  std::filesystem::path path_;
};

}  // namespace dsgd::test
