#include "cli/exercise_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "lessons/exercise.h"

namespace dsgd::cli {
namespace {

namespace fs = std::filesystem;
using lessons::ExerciseResult;

void put(const std::string& text, FILE* to = stdout) {
  std::fwrite(text.data(), 1, text.size(), to);
  std::fflush(to);
}

ExerciseResult grade(const lessons::ExerciseSpec& spec, const std::string& source,
                     const CheckOptions& o, FILE* report) {
  lessons::ExerciseOptions options{
      .source = source, .lang = o.lang, .max_ranks = o.max_ranks, .memory_bytes = o.memory_bytes};
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) options.compiler = cxx;
  return lessons::grade_exercise(spec, options, [report](const std::string& line) {
    if (report) put(line + "\n", report);
  });
}

nlohmann::json to_json(const ExerciseResult& r) {
  nlohmann::json cases = nlohmann::json::array();
  for (const lessons::ExerciseCase& c : r.cases)
    cases.push_back({{"ranks", c.world},
                     {"n", c.n},
                     {"root", c.root},
                     {"passed", c.passed},
                     {"problem", c.problem}});
  return {{"file", r.source},     {"compiled", r.compiled}, {"passed", r.passed()},
          {"failed", r.failed()}, {"cases", cases},         {"error", r.error}};
}

// The first thing that went wrong, on one line: the compiler's or loader's first line, or
// the first failed case.
std::string first_failure(const ExerciseResult& r) {
  if (!r.compiled) {  // the compiler's first error, else the first line
    const size_t error = r.error.find("error:");
    const size_t from = error == std::string::npos ? 0 : r.error.rfind('\n', error) + 1;
    const std::string line = r.error.substr(from, r.error.find('\n', from) - from);
    return line.substr(line.find_first_not_of(' '));
  }
  for (const lessons::ExerciseCase& c : r.cases)
    if (!c.passed)
      return fmt::format("R = {}, n = {}{}: {}", c.world, c.n,
                         c.root != 0 ? fmt::format(", root = {}", c.root) : "", c.problem);
  return "";
}

// A CSV field (RFC 4180): quoted, its quotes doubled, on one line.
std::string csv_field(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::vector<std::string> submissions(const std::string& dir) {
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".cpp") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw UsageError(
        fmt::format("--check {}: no .cpp files in this folder; put one submission "
                    "per .cpp file there",
                    dir));
  return files;
}

int check_folder(const lessons::ExerciseSpec& spec, const std::string& dir, const CheckOptions& o) {
  const std::vector<std::string> files = submissions(dir);
  nlohmann::json all = nlohmann::json::array();
  if (!o.json) put("file,compiled,passed,cases_failed,cases,first_failure\n");
  for (size_t i = 0; i < files.size(); ++i) {
    put(fmt::format("grading {} ({} of {}) ...\n", files[i], i + 1, files.size()), stderr);
    const ExerciseResult r = grade(spec, files[i], o, nullptr);
    if (o.json) {
      all.push_back(to_json(r));
      continue;
    }
    put(fmt::format("{},{},{},{},{},{}\n", csv_field(fs::path(files[i]).filename().string()),
                    r.compiled ? "yes" : "no", r.passed() ? "yes" : "no", r.failed(),
                    r.cases.size(), csv_field(first_failure(r))));
  }
  if (o.json) put(all.dump(2) + "\n");
  return kExitOk;
}

}  // namespace

int check_exercise(const lessons::ExerciseSpec& spec, const std::string& path,
                   const CheckOptions& o) {
  if (fs::is_directory(path)) return check_folder(spec, path, o);
  const ExerciseResult r = grade(spec, path, o, o.json ? stderr : stdout);
  if (o.json) put(to_json(r).dump(2) + "\n");
  return r.passed() ? kExitOk : kExitOther;
}

}  // namespace dsgd::cli
