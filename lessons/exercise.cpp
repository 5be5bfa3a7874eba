// R = ranks, n = floats in the vector each rank passes to my_all_reduce.
#include "lessons/exercise.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
#include "lessons/exercise_pattern.h"
#include "lessons/readme.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

namespace fs = std::filesystem;
using Entry = void (*)(Communicator*, float*, size_t);

// Rank r starts with x_r[i] = (r + 1) * (1 + i % 7): small integers, so the sum is exact
// in any order of additions, and every rank's contribution is different.
float start_value(int rank, size_t i) {
  return static_cast<float>((rank + 1) * (1 + static_cast<int>(i % 7)));
}
float expected_sum(int world, size_t i) {
  return static_cast<float>(world * (world + 1) / 2 * (1 + static_cast<int>(i % 7)));
}

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

// 2^18 floats (1 MiB): on up to 8 ranks each chunk is above the eager limit (64 KiB), so a
// ring whose ranks all send before they receive deadlocks, as under Open MPI.
constexpr size_t kLarge = size_t{1} << 18;

// The sizes of the grid's columns, by name: n = 0, 1, R-1, R+1, 1000 and kLarge.
constexpr const char* kColumns[] = {"0", "1", "R-1", "R+1", "1000", "2^18"};
size_t column_size(int column, int world) {
  const size_t sizes[] = {0, 1, size_t(world - 1), size_t(world + 1), 1000, kLarge};
  return sizes[column];
}

// How a case failed: wrong values, right values by a forbidden pattern (exercise_pattern.h),
// or an error (a deadlock, a passed deadline).
enum class Failure : char { values = 'v', pattern = 'p', error = 'e' };

// What a failed case's kind, world and size suggest to look at.
std::string hint(Failure kind, const std::string& problem, int world, size_t n, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (kind == Failure::pattern) return "";  // its problem says what to do
  if (kind == Failure::error && problem.find("bad_alloc") != std::string::npos)
    return zh ? "它要的内存超过了每个情形的上限（--check-memory）：环形算法只需要一块 n/R "
                "个浮点数的缓冲区。"
              : "It asked for more memory than a case may use (--check-memory): a ring needs "
                "one scratch chunk of n/R floats.";
  if (kind == Failure::error && problem.find("waits in send") != std::string::npos)
    return zh ? "如果每个秩都在 send 里等：超过 eager 上限（64 KiB）的 send "
                "要等到对方开始接收才返回。"
                "先用 irecv 挂上接收，或用 isend 发送（第 3 课）。"
              : "If every rank waits in send: a send above the eager limit (64 KiB) returns "
                "only once its receiver posts the receive. Post the receive first (irecv), or "
                "send with isend (lesson 3).";
  if (n == 0)
    return zh ? "空向量 (n = 0) 也必须能工作：没有数据要发送，或者只发送空消息。"
              : "An empty vector (n = 0) must work too: nothing to send, or empty messages.";
  if (world == 1)
    return zh ? "只有一个秩 (rank) 的世界：没有邻居，数据本身就是总和。"
              : "A world of one rank: there is no neighbour, the data already are the sum.";
  if (n < static_cast<size_t>(world))
    return zh ? fmt::format("n = {} 小于 R = {}：有些块 (chunk) 是空的，有些只有一个元素。", n,
                            world)
              : fmt::format(
                    "n = {} is smaller than R = {}: some chunks are empty, some hold one "
                    "element.",
                    n, world);
  if (n % world != 0)
    return zh ? fmt::format("n = {} 不是 R = {} 的倍数：块的大小不相等，最后 {} 个元素也要归约。",
                            n, world, n % world)
              : fmt::format(
                    "n = {} is not a multiple of R = {}: the chunks are uneven, and the "
                    "last {} elements must be reduced too.",
                    n, world, n % world);
  return zh ? "检查每一步发送和接收的是哪一块，以及累加是否只做了一次。"
            : "Check which chunk each step sends and receives, and that each is added once.";
}

// Whether every rank holds the exact sum; "" when it does, else the first rank's problem.
std::string values_problem(const std::vector<std::vector<float>>& data, int world, Lang lang) {
  for (int r = 0; r < world; ++r)
    for (size_t i = 0; i < data[r].size(); ++i) {
      if (data[r][i] == expected_sum(world, i)) continue;
      const bool unchanged = data[r][i] == start_value(r, i);
      return lang == Lang::zh
                 ? fmt::format("秩 {} 的第 {} 个元素是 {:g}，应为 {:g}（所有秩的和）{}。", r, i,
                               data[r][i], expected_sum(world, i),
                               unchanged ? "；它仍是该秩自己的初始值" : "")
                 : fmt::format(
                       "rank {} element {} is {:g}, expected {:g} (the sum over the ranks){}.", r,
                       i, data[r][i], expected_sum(world, i),
                       unchanged ? "; it still holds the rank's own starting value" : "");
    }
  return "";
}

// Runs one case in this (child) process; returns "" when it passed, else the kind of
// failure (one character, Failure) and what went wrong.
std::string run_case(Entry entry, int world, size_t n, std::chrono::milliseconds timeout,
                     Lang lang) {
  std::vector<std::vector<float>> data(world, std::vector<float>(n));
  EventBuffer events;  // how it communicated
  try {
    sim::ClusterOptions options;
    options.nodes = world;
    options.timeout = timeout;
    options.events = &events;
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float>& mine = data[comm.rank()];
      for (size_t i = 0; i < n; ++i)
        mine[i] = start_value(comm.rank(), i);
      entry(&comm, mine.data(), mine.size());
    });
  } catch (const std::exception& e) {
    return static_cast<char>(Failure::error) + std::string(e.what());
  }
  if (std::string p = values_problem(data, world, lang); !p.empty())
    return static_cast<char>(Failure::values) + p;
  if (std::string p = pattern_problem(events.snapshot(), world, n, lang); !p.empty())
    return static_cast<char>(Failure::pattern) + p;
  return "";
}

struct CaseOutcome {
  bool passed = false;
  Failure kind = Failure::error;
  std::string problem;
};

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

// Forks a child for one case, so that a crash or an endless loop only ends the child.
CaseOutcome run_case_isolated(Entry entry, int world, size_t n, const ExerciseOptions& o) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("cannot create a pipe for the exercise check");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("cannot fork a process for the exercise check");
  if (pid == 0) {
    close(fds[0]);
    limit_resources(o);
    const std::string problem = run_case(entry, world, n, o.call_timeout, o.lang);
    size_t done = 0;
    while (done < problem.size()) {
      const ssize_t w = write(fds[1], problem.data() + done, problem.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    close(fds[1]);
    _exit(problem.empty() ? 0 : 1);
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + o.case_timeout;
  int status = 0;
  bool timed_out = false;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string problem;
  char buffer[4096];
  ssize_t got;
  while ((got = read(fds[0], buffer, sizeof buffer)) > 0)
    problem.append(buffer, static_cast<size_t>(got));
  close(fds[0]);
  const bool zh = o.lang == Lang::zh;
  if (timed_out)
    return {.problem =
                zh ? fmt::format("{} 秒后仍未结束（死循环？），已被终止。", o.case_timeout.count())
                   : fmt::format("still running after {} s (an endless loop?); stopped.",
                                 o.case_timeout.count())};
  if (WIFSIGNALED(status))
    return {.problem = zh ? fmt::format("进程崩溃：信号 {} ({})。越界访问了 span？",
                                        WTERMSIG(status), strsignal(WTERMSIG(status)))
                          : fmt::format("crashed with signal {} ({}); an access outside the span?",
                                        WTERMSIG(status), strsignal(WTERMSIG(status)))};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {.passed = true};
  if (problem.empty()) return {.problem = "failed without a message"};
  return {.kind = static_cast<Failure>(problem[0]), .problem = problem.substr(1)};
}

// One rank count's cases, in the grid's columns (a size met twice, as n = 1 = R-1 on two
// ranks, is run once). Prints its line: "ok" with the sizes, or its first failure and a hint.
std::vector<bool> run_row(Entry entry, int world, const ExerciseOptions& o,
                          const std::function<void(const std::string&)>& out,
                          std::vector<ExerciseCase>& all) {
  std::map<size_t, CaseOutcome> cases;
  std::vector<bool> row;
  std::string sizes;
  const CaseOutcome* first_failure = nullptr;
  size_t failed_n = 0;
  for (int column = 0; column < static_cast<int>(std::size(kColumns)); ++column) {
    const size_t n = column_size(column, world);
    auto [it, fresh] = cases.try_emplace(n);
    if (fresh) {
      it->second = run_case_isolated(entry, world, n, o);
      all.push_back({world, n, it->second.passed, it->second.problem});
    }
    row.push_back(it->second.passed);
    if (fresh && it->second.passed) sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", n);
    if (!it->second.passed && !first_failure) first_failure = &it->second, failed_n = n;
  }
  if (!first_failure) {
    out(fmt::format("  ok    R = {}: n = {}", world, sizes));
    return row;
  }
  out(fmt::format("  FAIL  R = {}, n = {}: {}", world, failed_n, first_failure->problem));
  const std::string h = hint(first_failure->kind, first_failure->problem, world, failed_n, o.lang);
  if (!h.empty()) out(fmt::format("        {}", h));
  return row;
}

// What the grid's pattern says, when the cases that fail have something in common: only
// sizes that are not a multiple of R (the chunks' bounds), or only the size above the eager
// limit (sends that wait for their receives). "" when they have not.
std::string grid_hint(const std::vector<std::vector<bool>>& grid, Lang lang) {
  const bool zh = lang == Lang::zh;
  bool uneven_only = true, large_only = true, any = false, all_shared = true;
  for (size_t r = 0; r < grid.size(); ++r)
    for (size_t c = 0; c < grid[r].size(); ++c) {
      const int world = static_cast<int>(r) + 1;
      const size_t n = column_size(static_cast<int>(c), world);
      if (world > 1 && n > 0) all_shared = all_shared && !grid[r][c];  // data to combine
      if (grid[r][c]) continue;
      any = true;
      uneven_only = uneven_only && n % world != 0;
      large_only = large_only && n == kLarge;
    }
  if (!any) return "";
  if (all_shared && grid.size() > 1)
    return zh ? "从 2 "
                "个秩起，只要有数据就失败：检查每个秩是否把块发给右邻居，并把从左邻居收到的块加到自"
                "己的块上。"
              : "It fails whenever there are 2 ranks or more and data to combine: check that "
                "each rank sends a chunk to its right neighbour and adds the chunk it receives "
                "from the left to its own.";
  if (large_only)
    return zh ? "只有最大的向量（1 MiB）失败：各秩同时阻塞在超过 eager 上限的 send "
                "里。先挂上接收（irecv），或用 "
                "isend 发送。"
              : "Only the largest vector (1 MiB) fails: every rank blocks at once in a send above "
                "the eager limit. Post the receive first (irecv), or send with isend.";
  if (uneven_only)
    return zh ? "只有 n 不是 R "
                "的倍数时失败：检查块的边界（n*c/R）和最后一块，是否有元素被漏掉或加了两次。"
              : "It fails exactly when n is not a multiple of R: check the chunks' bounds "
                "(n*c/R) and the last chunk, for elements missed or added twice.";
  return "";
}

// Every case of 1 .. max_ranks ranks, a line per rank count, then the grid of them all.
bool run_cases(Entry entry, const ExerciseOptions& o,
               const std::function<void(const std::string&)>& out, std::vector<ExerciseCase>& all) {
  const bool zh = o.lang == Lang::zh;
  std::vector<std::vector<bool>> grid;
  for (int world = 1; world <= o.max_ranks; ++world)
    grid.push_back(run_row(entry, world, o, out, all));
  // Each case once (the grid shows a size met twice in two columns).
  const size_t total = all.size();
  const auto failed = static_cast<size_t>(
      std::count_if(all.begin(), all.end(), [](const ExerciseCase& c) { return !c.passed; }));
  std::string header = "          ";
  for (const char* c : kColumns)
    header += fmt::format(" {:>5}", fmt::format("n={}", c).substr(0, 6));
  out("");
  out(header);
  for (size_t r = 0; r < grid.size(); ++r) {
    std::string line = fmt::format("  R = {:<4}", r + 1);
    for (bool passed : grid[r])
      line += fmt::format(" {:>5}", passed ? "ok" : "FAIL");
    out(line);
  }
  out("");
  if (failed == 0) {
    out(zh ? "PASS  所有情形都与参考结果一致。" : "PASS  every case matches the reference.");
    return true;
  }
  out(zh ? fmt::format("FAIL  {} 个情形中有 {} 个失败。", total, failed)
         : fmt::format("FAIL  {} of {} cases failed.", failed, total));
  if (const std::string h = grid_hint(grid, o.lang); !h.empty()) out("      " + h);
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
std::string compile(const ExerciseOptions& o, const std::string& library, const fs::path& work) {
  const std::string compiler = o.compiler.empty() ? DSGD_CXX_COMPILER : o.compiler;
  const std::string include =
      o.include_dir.empty() ? (data_dir() / "include").string() : o.include_dir;
  const std::string shim = lessons_dir() + "/05-own-allreduce/check_shim.cpp";
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
std::string load_error(const std::string& why, bool zh) {
  std::string text = zh ? fmt::format("无法加载编译结果：{}", why)
                        : fmt::format("cannot load the compiled file: {}", why);
  if (why.find("my_all_reduce") != std::string::npos)
    text += zh ? "\n      文件必须在全局作用域定义 void my_all_reduce(dsgd::Communicator& comm, "
                 "std::span<float> data)。"
               : "\n      The file must define void my_all_reduce(dsgd::Communicator& comm, "
                 "std::span<float> data) at global scope (not in a namespace, not static).";
  return text;
}

}  // namespace

ExerciseResult grade_all_reduce_exercise(const ExerciseOptions& o,
                                         const std::function<void(const std::string&)>& out) {
  const bool zh = o.lang == Lang::zh;
  ExerciseResult result{.source = o.source};
  if (!fs::is_regular_file(o.source))
    throw DataError(
        fmt::format("--check {}: no such file; give the C++ file that defines "
                    "my_all_reduce (see lessons/05-own-allreduce/exercise.cpp)",
                    o.source));
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
  if (const std::string error = compile(o, library, work); !error.empty()) {
    result.error = (zh ? "编译失败 " : "the file does not compile ") + error;
    out("FAIL  " + result.error);
    return result;
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    result.error = load_error(dlerror(), zh);
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
  out(zh ? "与精确的和比较：每个秩开始时 data[i] = (rank + 1) * (1 + i % 7)。"
         : "Checking against the exact sum; rank r starts with data[i] = (r + 1) * (1 + i % 7).");
  run_cases(entry, o, out, result.cases);
  return result;
}

}  // namespace dsgd::lessons
