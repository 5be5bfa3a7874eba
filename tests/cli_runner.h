// Runs the real `dsgd` binary for integration tests: exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "temp_dir.h"

namespace dsgd::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

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

// The lines of a program's output.
inline size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

#ifdef DSGD_BINARY
inline CliResult run_dsgd(const std::string& args) {
  return run_program(DSGD_BINARY, args);
}
#endif

}  // namespace dsgd::test
