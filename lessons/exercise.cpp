// R = ranks, n = floats in the vector each rank passes to the student's function.
#include "lessons/exercise.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/data_dir.h"
#include "lessons/readme.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

namespace fs = std::filesystem;
using Entry = void (*)(Communicator*, float*, size_t, int);

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Keeps only the first max_lines lines of the compiler's output.
std::string head(const std::string& text, int max_lines) {
  std::istringstream in(text);
  std::string line, out;
  int n = 0;
  while (std::getline(in, line))
    if (n++ < max_lines) out += "    " + line + "\n";
  if (n > max_lines) out += fmt::format("    ... ({} more lines)\n", n - max_lines);
  return out;
}

// What a failed case suggests whatever the exercise: too much memory, or sends that wait
// for their receives; "" when neither.
std::string common_hint(const ExerciseCase& c, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (c.kind != Failure::error) return "";
  if (c.problem.find("bad_alloc") != std::string::npos)
    return zh ? "它要的内存超过了每个情形的上限（--check-memory）。"
              : "It asked for more memory than a case may use (--check-memory).";
  if (c.problem.find("waits in send") != std::string::npos)
    return zh ? "如果每个秩都在 send 里等：超过 eager 上限（64 KiB）的 send "
                "要等到对方开始接收才返回。"
                "先用 irecv 挂上接收，或用 isend 发送（第 3 课）。"
              : "If every rank waits in send: a send above the eager limit (64 KiB) returns "
                "only once its receiver posts the receive. Post the receive first (irecv), or "
                "send with isend (lesson 3).";
  return "";
}

std::string hint(const ExerciseSpec& spec, const ExerciseCase& c, Lang lang) {
  if (c.kind == Failure::pattern) return "";  // its problem says what to do
  if (std::string h = common_hint(c, lang); !h.empty()) return h;
  return spec.case_hint ? spec.case_hint(c, lang) : "";
}

// Whether every rank holds what it must; "" when it does, else the first rank's problem.
std::string values_problem(const ExerciseSpec& spec, const std::vector<std::vector<float>>& data,
                           const ExerciseCase& c, Lang lang) {
  for (int r = 0; r < c.world; ++r)
    for (size_t i = 0; i < data[r].size(); ++i) {
      const float want = spec.expected(c.world, c.root, r, i), got = data[r][i];
      if (got == want || std::abs(got - want) <= spec.tolerance * std::abs(want)) continue;
      std::string why =
          spec.explain_value ? spec.explain_value(c.world, c.root, r, i, got, lang) : std::string();
      if (got == spec.start(c.world, c.root, r, i) && why.empty())
        why = lang == Lang::zh ? "它仍是该秩自己的初始值"
                               : "it still holds the rank's own starting value";
      return lang == Lang::zh ? fmt::format("秩 {} 的第 {} 个元素是 {:.9g}，应为 {:.9g}{}。", r, i,
                                            got, want, why.empty() ? "" : "；" + why)
                              : fmt::format("rank {} element {} is {:.9g}, expected {:.9g}{}.", r,
                                            i, got, want, why.empty() ? "" : "; " + why);
    }
  return "";
}

// Runs case `c` in this (child) process; returns "" when it passed, else the kind of
// failure (one character, Failure) and what went wrong.
std::string run_case(const ExerciseSpec& spec, Entry entry, const ExerciseCase& c,
                     std::chrono::milliseconds timeout, Lang lang) {
  std::vector<std::vector<float>> data(c.world, std::vector<float>(c.n));
  EventBuffer events;  // how it communicated
  try {
    sim::ClusterOptions options;
    options.nodes = c.world;
    options.timeout = timeout;
    options.events = &events;
    options.node.guard_sends = true;  // a send's buffer is the sender's again only after wait
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float>& mine = data[comm.rank()];
      for (size_t i = 0; i < c.n; ++i)
        mine[i] = spec.start(c.world, c.root, comm.rank(), i);
      entry(&comm, mine.data(), mine.size(), c.root);
    });
  } catch (const std::exception& e) {
    return static_cast<char>(Failure::error) + std::string(e.what());
  }
  if (std::string p = values_problem(spec, data, c, lang); !p.empty())
    return static_cast<char>(Failure::values) + p;
  if (!spec.pattern) return "";
  if (std::string p = spec.pattern(events.snapshot(), c, lang); !p.empty())
    return static_cast<char>(Failure::pattern) + p;
  return "";
}

// Whether this program runs under ASan or TSan (their shadow memory is address space).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DSGD_EXERCISE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DSGD_EXERCISE_SANITIZED 1
#endif
#endif

// The case's process: at most the options' memory and case_timeout of CPU time.
void limit_resources(const ExerciseOptions& o) {
  const auto cpu = static_cast<rlim_t>(o.case_timeout.count());
  rlimit limit{cpu, cpu + 1};
  setrlimit(RLIMIT_CPU, &limit);
  if (o.memory_bytes == 0 || !memory_limit_applies()) return;
  limit = {static_cast<rlim_t>(o.memory_bytes), static_cast<rlim_t>(o.memory_bytes)};
  setrlimit(RLIMIT_AS, &limit);
}

// In the child: runs the case, writes its outcome to `fd`, and exits.
[[noreturn]] void child_case(const ExerciseSpec& spec, Entry entry, const ExerciseCase& c,
                             const ExerciseOptions& o, int fd) {
  limit_resources(o);
  const std::string problem = run_case(spec, entry, c, o.call_timeout, o.lang);
  size_t done = 0;
  while (done < problem.size()) {
    const ssize_t w = write(fd, problem.data() + done, problem.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  close(fd);
  _exit(problem.empty() ? 0 : 1);
}

// Waits for the child `pid` until the case's deadline, killing it past that; whether it
// was killed.
bool reap(pid_t pid, const ExerciseOptions& o, int& status) {
  const auto deadline = std::chrono::steady_clock::now() + o.case_timeout;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Forks a child for case `c`, so that a crash or an endless loop only ends the child; fills
// in c's outcome.
void run_case_isolated(const ExerciseSpec& spec, Entry entry, ExerciseCase& c,
                       const ExerciseOptions& o) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("cannot create a pipe for the exercise check");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("cannot fork a process for the exercise check");
  if (pid == 0) {
    close(fds[0]);
    child_case(spec, entry, c, o, fds[1]);
  }
  close(fds[1]);
  int status = 0;
  const bool timed_out = reap(pid, o, status);
  std::string problem;
  char buffer[4096];
  ssize_t got;
  while ((got = read(fds[0], buffer, sizeof buffer)) > 0)
    problem.append(buffer, static_cast<size_t>(got));
  close(fds[0]);
  const bool zh = o.lang == Lang::zh;
  c.passed = false;
  c.kind = Failure::error;
  if (timed_out)
    c.problem = zh ? fmt::format("{} 秒后仍未结束（死循环？），已被终止。", o.case_timeout.count())
                   : fmt::format("still running after {} s (an endless loop?); stopped.",
                                 o.case_timeout.count());
  else if (WIFSIGNALED(status))
    c.problem = zh ? fmt::format("进程崩溃：信号 {} ({})。越界访问了 span？", WTERMSIG(status),
                                 strsignal(WTERMSIG(status)))
                   : fmt::format("crashed with signal {} ({}); an access outside the span?",
                                 WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    c.passed = true;
  else if (problem.empty())
    c.problem = "failed without a message";
  else
    c.kind = static_cast<Failure>(problem[0]), c.problem = problem.substr(1);
}

using Report = std::function<void(const std::string&)>;

// A problem cut to its first two clauses, for the row's line: a deadlock on 8 ranks names
// each rank's wait. The JSON keeps the whole text.
std::string shortened(const std::string& problem) {
  size_t cut = problem.find("; ");
  if (cut != std::string::npos) cut = problem.find("; ", cut + 2);
  if (cut == std::string::npos || problem.size() < 300) return problem;
  return problem.substr(0, cut) + "; ...";
}

// One rank count's cases, in the spec's columns (a case met twice, as n = 1 = R-1 on two
// ranks, is run once). Prints its line: "ok" with the sizes, or its first failure and a hint.
// A hint is printed when it differs from the last row's (`last_hint`).
std::vector<ExerciseCase> run_row(const ExerciseSpec& spec, Entry entry, int world,
                                  const ExerciseOptions& o, const Report& out,
                                  std::vector<ExerciseCase>& all, std::string& last_hint) {
  std::map<std::pair<size_t, int>, ExerciseCase> cases;
  std::vector<ExerciseCase> row;
  std::string sizes;
  const ExerciseCase* first_failure = nullptr;
  for (const ExerciseColumn& column : spec.columns) {
    const ExerciseCase c{
        .world = world, .n = column.size(world), .root = column.root ? column.root(world) : 0};
    auto [it, fresh] = cases.try_emplace({c.n, c.root}, c);
    if (fresh) {
      run_case_isolated(spec, entry, it->second, o);
      all.push_back(it->second);
      if (it->second.passed)
        sizes += fmt::format("{}{}{}", sizes.empty() ? "" : ", ", c.n,
                             c.root != 0 ? fmt::format(" (root {})", c.root) : "");
    }
    row.push_back(it->second);
    if (!it->second.passed && !first_failure) first_failure = &it->second;
  }
  if (!first_failure) {
    out(fmt::format("  ok    R = {}: n = {}", world, sizes));
    return row;
  }
  const ExerciseCase& f = *first_failure;
  const std::string root = f.root != 0 ? fmt::format(", root = {}", f.root) : "";
  out(fmt::format("  FAIL  R = {}, n = {}{}: {}", world, f.n, root, shortened(f.problem)));
  const std::string h = hint(spec, f, o.lang);
  if (!h.empty() && h != last_hint) out(fmt::format("        {}", h));
  last_hint = h;
  return row;
}

// The grid: a header of the spec's columns and a line per rank count.
void print_grid(const ExerciseSpec& spec, const ExerciseGrid& grid, const Report& out) {
  size_t width = 4;
  for (const ExerciseColumn& c : spec.columns)
    width = std::max(width, std::string(c.header).size());
  std::string header = "          ";
  for (const ExerciseColumn& c : spec.columns)
    header += fmt::format(" {:>{}}", c.header, width);
  out("");
  out(header);
  for (const std::vector<ExerciseCase>& row : grid) {
    std::string line = fmt::format("  R = {:<4}", row.front().world);
    for (const ExerciseCase& c : row)
      line += fmt::format(" {:>{}}", c.passed ? "ok" : "FAIL", width);
    out(line);
  }
  out("");
}

// Every case of the spec's rank counts, a line per rank count, then the grid of them all
// and what its failures share.
bool run_cases(const ExerciseSpec& spec, Entry entry, const ExerciseOptions& o, const Report& out,
               std::vector<ExerciseCase>& all) {
  const bool zh = o.lang == Lang::zh;
  // At least the spec's fewest ranks, so that some case runs.
  const int max_ranks =
      o.max_ranks > 0 ? std::clamp(o.max_ranks, spec.min_ranks, spec.max_ranks) : spec.max_ranks;
  ExerciseGrid grid;
  std::string last_hint;
  for (int world = spec.min_ranks; world <= max_ranks; ++world)
    grid.push_back(run_row(spec, entry, world, o, out, all, last_hint));
  print_grid(spec, grid, out);
  // Each case once (the grid shows a case met twice in two columns).
  const auto failed = static_cast<size_t>(
      std::count_if(all.begin(), all.end(), [](const ExerciseCase& c) { return !c.passed; }));
  if (failed == 0) {
    out(zh ? "PASS  所有情形都与参考结果一致。" : "PASS  every case matches the reference.");
    return true;
  }
  out(zh ? fmt::format("FAIL  {} 个情形中有 {} 个失败。", all.size(), failed)
         : fmt::format("FAIL  {} of {} cases failed.", failed, all.size()));
  if (!spec.grid_hint) return false;
  if (const std::string h = spec.grid_hint(grid, o.lang); !h.empty()) out("      " + h);
  return false;
}

}  // namespace

bool memory_limit_applies() {
#ifdef DSGD_EXERCISE_SANITIZED
  return false;
#else
  return true;
#endif
}

int ExerciseResult::failed() const {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(), [](const ExerciseCase& c) { return !c.passed; }));
}

namespace {

// Compiles the student's file with the shim into `library`; "" when it compiled, else the
// compiler's name and the first lines of its output.
std::string compile(const ExerciseSpec& spec, const ExerciseOptions& o, const std::string& library,
                    const fs::path& work) {
  const std::string compiler = o.compiler.empty() ? DSGD_CXX_COMPILER : o.compiler;
  const std::string include =
      o.include_dir.empty() ? (data_dir() / "include").string() : o.include_dir;
  const std::string shim = fmt::format("{}/{}/check_shim.cpp", lessons_dir(), spec.dir);
  const std::string log = (work / "compile.log").string();
  const std::string command =
      fmt::format("{} -std=c++20 -O1 -g -fPIC -shared -I{} -o {} {} {} >{} 2>&1", quote(compiler),
                  quote(include), quote(library), quote(o.source), quote(shim), quote(log));
  if (std::system(command.c_str()) == 0) return "";
  std::ifstream log_in(log);
  std::stringstream compiler_output;
  compiler_output << log_in.rdbuf();
  return fmt::format("({})\n{}", compiler, head(compiler_output.str(), 30));
}

// Why the compiled file cannot be loaded, with what to do when its function is missing.
std::string load_error(const ExerciseSpec& spec, const std::string& why, bool zh) {
  std::string text = zh ? fmt::format("无法加载编译结果：{}", why)
                        : fmt::format("cannot load the compiled file: {}", why);
  if (why.find(spec.function) != std::string::npos)
    text += zh ? fmt::format("\n      文件必须在全局作用域定义 {}。", spec.signature)
               : fmt::format(
                     "\n      The file must define {} at global scope (not in a namespace, not "
                     "static).",
                     spec.signature);
  return text;
}

}  // namespace

ExerciseResult grade_exercise(const ExerciseSpec& spec, const ExerciseOptions& o,
                              const std::function<void(const std::string&)>& out) {
  const bool zh = o.lang == Lang::zh;
  ExerciseResult result{.source = o.source};
  if (!fs::is_regular_file(o.source))
    throw DataError(fmt::format(
        "--check {}: no such file; give the C++ file that defines {} (see lessons/{}/exercise.cpp)",
        o.source, spec.function, spec.dir));
  const fs::path work =
      fs::temp_directory_path() / fmt::format("dsgd_check_{}_{}", getpid(), std::random_device{}());
  fs::create_directories(work);
  struct Cleanup {
    fs::path path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{work};
  const std::string library = (work / "student.so").string();
  out(zh ? fmt::format("编译 {} ...", o.source) : fmt::format("Compiling {} ...", o.source));
  if (const std::string error = compile(spec, o, library, work); !error.empty()) {
    result.error = (zh ? "编译失败 " : "the file does not compile ") + error;
    out("FAIL  " + result.error);
    return result;
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    result.error = load_error(spec, dlerror(), zh);
    out("FAIL  " + result.error);
    return result;
  }
  struct Close {
    void* handle;
    ~Close() { dlclose(handle); }
  } closer{handle};
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "dsgd_exercise_entry"));
  if (!entry) throw Error("the exercise shim lacks dsgd_exercise_entry");
  result.compiled = true;
  out(zh ? spec.intro_zh : spec.intro_en);
  run_cases(spec, entry, o, out, result.cases);
  return result;
}

}  // namespace dsgd::lessons
