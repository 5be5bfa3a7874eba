// Lessons: each lesson's --auto transcript on simulated nodes is a golden file
// (tests/golden/lessons/NN.txt, NN.zh-CN.txt; DSGD_UPDATE_GOLDEN=1 rewrites them), and so is
// the --step transcript of most (NN.step.txt, prompts included), the
// lesson list, the Chinese text, --step, the lesson 5 exercise checker, bad arguments, the
// README sections of both languages, and the transcript merge on its own.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "core/errors.h"
#include "lessons/exercise.h"
#include "lessons/lesson.h"
#include "lessons/readme.h"
#include "lessons/transcript.h"
#include "skip.h"
#include "wait_until.h"

namespace {

namespace fs = std::filesystem;
using dsgd::test::CliResult;
using dsgd::test::read_text;
using dsgd::test::run_dsgd;

const fs::path kGoldenDir = fs::path(DSGD_SOURCE_DIR) / "tests/golden/lessons";
const fs::path kFashionDir = "/usr/share/datasets/fashion-mnist";

bool update_goldens() {
  const char* v = std::getenv("DSGD_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// "line 12:\n  expected: ...\n  actual:   ..." for the first line that differs.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (int line = 1;; ++line) {
    const bool he = static_cast<bool>(std::getline(e, le));
    const bool ha = static_cast<bool>(std::getline(a, la));
    if (!he && !ha) return "no difference";
    if (!he || !ha || le != la)
      return "line " + std::to_string(line) + ":\n  expected: " + (he ? le : "<end>") +
             "\n  actual:   " + (ha ? la : "<end>");
  }
}

// `actual` against the golden file, or (DSGD_UPDATE_GOLDEN=1) written into it.
void compare_with_golden(const fs::path& golden, const std::string& actual) {
  if (update_goldens()) {
    fs::create_directories(kGoldenDir);
    std::ofstream(golden, std::ios::binary) << actual;
    // Nothing was compared: the test reports skipped, not passed.
    dsgd::test::mark_skipped("DSGD_UPDATE_GOLDEN=1 rewrote " + golden.string());
    return;
  }
  INFO("golden file " << golden.string()
                      << " (DSGD_UPDATE_GOLDEN=1 rewrites it after a deliberate change)");
  REQUIRE(fs::exists(golden));
  const std::string expected = dsgd::test::read_text(golden);
  INFO(first_difference(expected, actual));
  CHECK(actual == expected);
}

// Returns from the calling function, reported as skipped, where Fashion-MNIST is missing.
#define SKIP_WITHOUT_FASHION_MNIST()                                           \
  DSGD_SKIP_UNLESS("fashion-mnist", fs::exists(kFashionDir),                   \
                   "lesson 7 needs Fashion-MNIST in " + kFashionDir.string() + \
                       " (apt-get install dataset-fashion-mnist)")

// Runs `dsgd lesson N --auto --lang LANG` and compares stdout with the golden file.
void check_golden(int lesson, const std::string& lang) {
  if (lesson == 7) SKIP_WITHOUT_FASHION_MNIST();
  char name[32];
  std::snprintf(name, sizeof name, "%02d%s.txt", lesson, lang == "en" ? "" : ".zh-CN");
  const fs::path golden = kGoldenDir / name;
  CliResult r = run_dsgd("lesson " + std::to_string(lesson) + " --auto --lang " + lang);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("is missing from") == std::string::npos);  // every section has its text
  compare_with_golden(golden, r.out);
}

// Runs `dsgd lesson N --step --lang LANG` with Enter pressed at every pause (a file of empty
// lines as standard input) and compares what a student's terminal shows, the prompts on
// standard error among the lesson's lines, with the golden file NN.step[.zh-CN].txt.
void check_step_golden(int lesson, const std::string& lang) {
  char name[32];
  std::snprintf(name, sizeof name, "%02d.step%s.txt", lesson, lang == "en" ? "" : ".zh-CN");
  const fs::path golden = kGoldenDir / name;
  dsgd::test::TempDir dir;
  std::ofstream(dir / "enter") << std::string(1000, '\n');
  const std::string out = dir / "out";
  const std::string cmd = fmt::format("{} lesson {} --step --lang {} <{} >{} 2>&1", DSGD_BINARY,
                                      lesson, lang, dir / "enter", out);
  const int status = std::system(cmd.c_str());
  const std::string text = dsgd::test::read_text(out);
  INFO(text);
  REQUIRE(status == 0);
  compare_with_golden(golden, text);
}

}  // namespace

#define LESSON_GOLDEN_TEST(N)                                                         \
  TEST_CASE("lesson " #N " --auto transcript matches its golden file", "[lessons]") { \
    check_golden(N, "en");                                                            \
    check_golden(N, "zh");                                                            \
  }

LESSON_GOLDEN_TEST(1)
LESSON_GOLDEN_TEST(2)
LESSON_GOLDEN_TEST(3)
LESSON_GOLDEN_TEST(4)
LESSON_GOLDEN_TEST(5)
LESSON_GOLDEN_TEST(6)
LESSON_GOLDEN_TEST(7)
LESSON_GOLDEN_TEST(8)
LESSON_GOLDEN_TEST(9)
LESSON_GOLDEN_TEST(10)
LESSON_GOLDEN_TEST(11)
LESSON_GOLDEN_TEST(12)
LESSON_GOLDEN_TEST(13)

// Step mode, where every message, call and part waits for Enter and says which of how many
// (counted by a run ahead, step_plan.h), in every lesson; 2 and 3 in Chinese too. Lesson 7,
// which needs Fashion-MNIST, in a test of its own.
TEST_CASE("lesson --step transcripts, prompts included, match their golden files", "[lessons]") {
  for (const dsgd::lessons::LessonInfo& info : dsgd::lessons::lesson_catalog()) {
    const int lesson = info.number;
    if (lesson == 7) continue;
    INFO("lesson " << lesson);
    check_step_golden(lesson, "en");
  }
  check_step_golden(2, "zh");
  check_step_golden(3, "zh");
}

TEST_CASE("lesson 7 --step transcript matches its golden file", "[lessons]") {
  SKIP_WITHOUT_FASHION_MNIST();
  check_step_golden(7, "en");
}

TEST_CASE("lesson transcripts are the same from run to run", "[lessons]") {
  CliResult a = run_dsgd("lesson 4 --nodes 5 --auto");
  CliResult b = run_dsgd("lesson 4 --nodes 5 --auto");
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  INFO(first_difference(a.out, b.out));
  CHECK(a.out == b.out);
}

TEST_CASE("dsgd lesson list names every lesson in both languages", "[lessons]") {
  CliResult en = run_dsgd("lesson list");
  INFO(en.err);
  REQUIRE(en.exit_code == 0);
  CliResult zh = run_dsgd("lesson list --lang zh");
  REQUIRE(zh.exit_code == 0);
  for (const auto& info : dsgd::lessons::lesson_catalog()) {
    CHECK(en.out.find("Lesson " + std::to_string(info.number) + " ·") != std::string::npos);
    CHECK(zh.out.find("第 " + std::to_string(info.number) + " 课") != std::string::npos);
  }
  CHECK(en.out.find("Point-to-point") != std::string::npos);
  CHECK(zh.out.find("点对点通信") != std::string::npos);
}

TEST_CASE("dsgd lesson --lang zh prints the Chinese text beside the same run", "[lessons]") {
  CliResult r = run_dsgd("lesson 2 --lang zh");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# 第 2 课 · 点对点通信") != std::string::npos);
  CHECK(r.out.find("## 阻塞的 send 和 recv") != std::string::npos);
  // The run's own lines in Chinese too: messages, the rank before a printed line.
  CHECK(r.out.find("  秩 0 -> 秩 1 · 标签 0 · 8 字节 · [1, -1]") != std::string::npos);
  CHECK(r.out.find("[秩 1] Rank 1 has data [1, -1]") != std::string::npos);
  CHECK(r.out.find("[秩 1] recv(tag=2) -> [20]（来源 0，标签 2）") != std::string::npos);
  CHECK(r.out.find("Blocking send and recv") == std::string::npos);
  CHECK(r.out.find("rank 0 ->") == std::string::npos);
}

TEST_CASE("dsgd lesson 2 runs the tutorial's first program", "[lessons]") {
  CliResult r = run_dsgd("lesson 2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const size_t message = r.out.find("  rank 0 -> rank 1 · tag 0 · 8 bytes · [1, -1]\n");
  const size_t printed = r.out.find("[rank 1] Rank 1 has data [1, -1]\n");
  REQUIRE(message != std::string::npos);
  REQUIRE(printed != std::string::npos);
  CHECK(message < printed);  // the receive's output comes after its message
}

TEST_CASE("dsgd lesson --step pauses at each message and runs on at end of input", "[lessons]") {
  // stdin is /dev/null: EOF at the first pause, so the lesson runs to the end.
  CliResult eof = run_dsgd("lesson 2 --step");
  INFO(eof.err);
  REQUIRE(eof.exit_code == 0);
  CHECK(eof.out.find("press Enter") != std::string::npos);
  CHECK(eof.out.find("rank 0 -> rank 1 · tag 0 · 8 bytes · [1, -1]") != std::string::npos);
  CHECK(eof.out.find("[rank 1] Rank 1 has data [1, -1]") != std::string::npos);

  // Enter pressed for every message: the same messages in delivery order.
  dsgd::test::TempDir dir;
  std::ofstream(dir / "enter") << std::string(20, '\n');
  const std::string out = dir / "out";
  const std::string cmd = std::string(DSGD_BINARY) + " lesson 2 --step --nodes 3 <" +
                          (dir / "enter") + " >" + out + " 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string text = dsgd::test::read_text(out);
  INFO(text);
  const size_t a = text.find("rank 0 -> rank 1 · tag 1 · 4 bytes · [10]");
  const size_t b = text.find("rank 0 -> rank 1 · tag 2 · 4 bytes · [20]");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(text.find("[rank 0] collected [0, 1, 4]") != std::string::npos);
  CHECK(text.find("[rank 1] recv(tag=2) -> [20] (source 0, tag 2)") != std::string::npos);
}

namespace {
// How many times `text` occurs in `in`.
size_t count_of(const std::string& in, const std::string& text) {
  size_t n = 0;
  for (size_t at = in.find(text); at != std::string::npos; at = in.find(text, at + 1))
    ++n;
  return n;
}
}  // namespace

TEST_CASE(
    "dsgd lesson --step waits for the first key, then pauses before each part of a "
    "lesson that shows no messages",
    "[lessons]") {
  // Lesson 6 trains: its messages are not shown, so it goes a part at a time. Its input is
  // a FIFO this test writes to; each prompt (on standard error) says the lesson waits.
  dsgd::test::TempDir dir;
  const std::string fifo = dir / "keys", out = dir / "out", err = dir / "err";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string cmd =
      fmt::format("{} lesson 6 --step <{} >{} 2>{} &", DSGD_BINARY, fifo, out, err);
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ofstream keys(fifo);  // opens once the shell has opened the other end
  const auto prompts = [&](const char* what) { return count_of(read_text(err), what); };
  REQUIRE(dsgd::test::wait_for([&] { return prompts("-- start") == 1; }));
  CHECK(read_text(out).find("## 1.") == std::string::npos);  // nothing ran before the key
  keys << "\n" << std::flush;
  REQUIRE(dsgd::test::wait_for([&] { return prompts("-- next: part 2") == 1; }));
  std::string text = read_text(out);
  CHECK(text.find("## 1. Each rank on its own") != std::string::npos);
  CHECK(text.find("step 30: largest parameter difference") != std::string::npos);
  CHECK(text.find("## 2.") == std::string::npos);  // waits before part 2
  keys << "\n" << std::flush;
  REQUIRE(dsgd::test::wait_for([&] { return prompts("-- next: part 3") == 1; }));
  text = read_text(out);
  CHECK(text.find("## 2. Gradients summed with all_reduce") != std::string::npos);
  CHECK(text.find("## 3.") == std::string::npos);
  keys.close();  // the end of input: on to the end without pausing
  REQUIRE(dsgd::test::wait_for(
      [&] { return read_text(out).find("-- end of lesson") != std::string::npos; }));
  CHECK(read_text(out).find("## 3. The trainer does exactly this") != std::string::npos);
  CHECK(prompts(" · Enter: go on · Ctrl-D: run to the end --") == 3);
}

// Right values by the wrong means fail too, each with its own reason (exercise_pattern.h).
TEST_CASE(
    "dsgd lesson 5 --check fails a library call, a gather at one rank and a ring that "
    "sends before it receives",
    "[lessons]") {
  dsgd::test::TempDir tmp;
  std::ofstream(tmp / "library.cpp")
      << "#include \"core/comm/collectives.h\"\n"
         "void my_all_reduce(dsgd::Communicator& c, std::span<float> d) {\n"
         "  dsgd::all_reduce(c, d, dsgd::ReduceOp::SUM);\n}\n";
  CliResult library = run_dsgd("lesson 5 --check " + (tmp / "library.cpp"));
  INFO(library.out << library.err);
  CHECK(library.exit_code == 1);
  CHECK(library.out.find("called dsgd's own all_reduce: the exercise is to write the ring") !=
        std::string::npos);
  CHECK(library.out.find("FAIL  46 of 46 cases failed.") != std::string::npos);
  // Every case fails, with nothing to combine too: no hint about the ring's chunks.
  CHECK(library.out.find("It fails whenever") == std::string::npos);

  std::ofstream(tmp / "gather.cpp")
      << "#include <vector>\n#include \"core/comm/communicator.h\"\n"
         "void my_all_reduce(dsgd::Communicator& c, std::span<float> d) {\n"
         "  if (c.rank() != 0) { c.send(d, 0); c.recv(d, 0); return; }\n"
         "  std::vector<float> in(d.size());\n"
         "  for (int r = 1; r < c.size(); ++r) {\n"
         "    c.recv(std::span<float>(in), r);\n"
         "    for (size_t i = 0; i < d.size(); ++i) d[i] += in[i];\n  }\n"
         "  for (int r = 1; r < c.size(); ++r) c.send(d, r);\n}\n";
  CliResult gather = run_dsgd("lesson 5 --check " + (tmp / "gather.cpp"));
  INFO(gather.out << gather.err);
  CHECK(gather.exit_code == 1);
  CHECK(gather.out.find("ok    R = 2:") != std::string::npos);  // on 2 ranks it is a ring
  CHECK(gather.out.find("FAIL  R = 3, n = 1000: the values are right, but rank 0 sent 8000 "
                        "bytes") != std::string::npos);

  // The solution with each isend made a blocking send: fine below the eager limit, a
  // deadlock above it, as under Open MPI.
  std::ifstream solution(std::string(DSGD_SOURCE_DIR) + "/lessons/05-own-allreduce/solution.cpp");
  std::string code{std::istreambuf_iterator<char>(solution), {}};
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"dsgd::Request sending = comm.isend(", "comm.send("},
        {"comm.wait(sending);", ""}})
    for (size_t at = code.find(from); at != std::string::npos; at = code.find(from, at))
      code.replace(at, from.size(), to);
  std::ofstream(tmp / "send_first.cpp") << code;
  CliResult send_first = run_dsgd("lesson 5 --check " + (tmp / "send_first.cpp"));
  INFO(send_first.out << send_first.err);
  CHECK(send_first.exit_code == 1);
  CHECK(send_first.out.find("ok    R = 8: n = 0, 1, 7, 9, 1000") == std::string::npos);
  CHECK(send_first.out.find("FAIL  R = 2, n = 262144: deadlock") != std::string::npos);
  CHECK(send_first.out.find("over the eager limit") != std::string::npos);
  CHECK(send_first.out.find("Only the largest vector (1 MiB) fails") != std::string::npos);
}

TEST_CASE("dsgd lesson 5 --check: a case that asks for more memory than its limit fails",
          "[lessons]") {
  DSGD_SKIP_UNLESS("a memory limit", dsgd::lessons::memory_limit_applies(),
                   "the memory limit is off under the sanitizers (their shadow memory is "
                   "address space)");
  dsgd::test::TempDir tmp;
  std::ofstream(tmp / "hog.cpp") << "#include <memory>\n#include \"core/comm/communicator.h\"\n"
                                    "void my_all_reduce(dsgd::Communicator&, std::span<float>) {\n"
                                    "  static std::unique_ptr<char[]> hog;\n"
                                    "  hog.reset(new char[size_t{1} << 30]);\n}\n";
  CliResult hog = run_dsgd("lesson 5 --check " + (tmp / "hog.cpp") + " --check-memory 512M");
  INFO(hog.out << hog.err);
  CHECK(hog.exit_code == 1);
  CHECK(hog.out.find("FAIL  R = 1, n = 0: std::bad_alloc") != std::string::npos);
  CHECK(hog.out.find("more memory than a case may use (--check-memory)") != std::string::npos);
  CHECK(run_dsgd("lesson 5 --check " + (tmp / "hog.cpp") + " --check-memory lots").exit_code == 2);
}

// A teacher's folder of five submissions: one CSV row each, with its verdict and its first
// failure; --json gives every case.
TEST_CASE("dsgd lesson 5 --check grades a folder of submissions into one CSV table", "[lessons]") {
  dsgd::test::TempDir tmp;
  const std::string lesson = std::string(DSGD_SOURCE_DIR) + "/lessons/05-own-allreduce/";
  fs::copy_file(lesson + "solution.cpp", tmp / "alice.cpp");
  fs::copy_file(lesson + "buggy.cpp", tmp / "bob.cpp");
  std::ofstream(tmp / "carol.cpp") << "#include \"core/comm/collectives.h\"\n"
                                      "void my_all_reduce(dsgd::Communicator& c, "
                                      "std::span<float> d) { dsgd::all_reduce(c, d); }\n";
  std::ofstream(tmp / "dave.cpp") << "void my_all_reduce(int) { syntax error }\n";
  std::ofstream(tmp / "erin.cpp")
      << "#include \"core/comm/communicator.h\"\n"
         "void my_allreduce(dsgd::Communicator&, std::span<float>) {}\n";
  std::ofstream(tmp / "notes.txt") << "not a submission\n";
  CliResult table = run_dsgd("lesson 5 --check " + tmp.path().string());
  INFO(table.out << table.err);
  REQUIRE(table.exit_code == 0);  // graded, whatever the verdicts
  std::istringstream lines(table.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    rows.push_back(line);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0] == "file,compiled,passed,cases_failed,cases,first_failure");
  CHECK(rows[1] == "\"alice.cpp\",yes,yes,0,46,\"\"");
  CHECK(rows[2].starts_with("\"bob.cpp\",yes,no,27,46,\"R = 2, n = 1: rank 0 element 0 is 1"));
  CHECK(rows[3].starts_with("\"carol.cpp\",yes,no,46,46,\"R = 1, n = 0: rank 0 called dsgd's own"));
  CHECK(rows[4].starts_with("\"dave.cpp\",no,no,0,0,\""));
  CHECK(rows[4].find("error:") != std::string::npos);
  CHECK(rows[5].starts_with("\"erin.cpp\",no,no,0,0,\"cannot load the compiled file"));
  CHECK(table.err.find("grading") != std::string::npos);

  CliResult json = run_dsgd("lesson 5 --check " + (tmp / "bob.cpp") + " --json");
  CHECK(json.exit_code == 1);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j["passed"] == false);
  CHECK(j["failed"] == 27);
  REQUIRE(j["cases"].size() == 46);
  CHECK(j["cases"][0]["ranks"] == 1);
  CHECK(j["cases"][0]["passed"] == true);
  CHECK(run_dsgd("lesson 5 --check " + (tmp / "missing.cpp")).exit_code == 2);
  fs::create_directories(tmp / "empty");
  CliResult none = run_dsgd("lesson 5 --check " + (tmp / "empty"));
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("no .cpp files in this folder") != std::string::npos);
}

TEST_CASE("dsgd lesson 5 --check accepts the solution and names the buggy one's first failure",
          "[lessons]") {
  const std::string dir = std::string(DSGD_SOURCE_DIR) + "/lessons/05-own-allreduce/";
  CliResult good = run_dsgd("lesson 5 --check " + dir + "solution.cpp");
  INFO(good.out << good.err);
  CHECK(good.exit_code == 0);
  CHECK(good.out.find("ok    R = 8: n = 0, 1, 7, 9, 1000, 262144") != std::string::npos);
  CHECK(good.out.find("  R = 8        ok     ok     ok     ok     ok     ok") != std::string::npos);
  CHECK(good.out.find("PASS") != std::string::npos);

  CliResult bad = run_dsgd("lesson 5 --check " + dir + "buggy.cpp");
  INFO(bad.out << bad.err);
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.find("ok    R = 1: n = 0, 1, 2, 1000") != std::string::npos);
  CHECK(bad.out.find("FAIL  R = 2, n = 1: rank 0 element 0 is 1, expected 3") != std::string::npos);
  // No per-case guess from the size alone: the grid's line says what the failures share.
  CHECK(bad.out.find("smaller than R") == std::string::npos);
  // Every rank count is run, and the grid shows the whole pattern: here the uneven sizes.
  CHECK(bad.out.find("FAIL  R = 8, n = 1:") != std::string::npos);
  CHECK(bad.out.find("  R = 4        ok   FAIL   FAIL   FAIL     ok     ok") != std::string::npos);
  CHECK(bad.out.find("FAIL  27 of 46 cases failed.") != std::string::npos);
  CHECK(bad.out.find("It fails exactly when n is not a multiple of R") != std::string::npos);
  // The exercise as given (its TODOs not done): the grid says what its failures share.
  CliResult stub = run_dsgd("lesson 5 --check " + dir + "exercise.cpp");
  CHECK(stub.exit_code == 1);
  CHECK(stub.out.find("It fails whenever there are 2 ranks or more and data to combine") !=
        std::string::npos);

  dsgd::test::TempDir tmp;
  std::ofstream(tmp / "broken.cpp") << "void my_all_reduce(int) { syntax error }\n";
  CliResult broken = run_dsgd("lesson 5 --check " + (tmp / "broken.cpp"));
  CHECK(broken.exit_code == 1);
  CHECK(broken.out.find("does not compile") != std::string::npos);

  std::ofstream(tmp / "renamed.cpp") << "#include \"core/comm/communicator.h\"\n"
                                        "void my_allreduce(dsgd::Communicator&, "
                                        "std::span<float>) {}\n";
  CliResult renamed = run_dsgd("lesson 5 --check " + (tmp / "renamed.cpp"));
  CHECK(renamed.exit_code == 1);
  CHECK(renamed.out.find("must define void my_all_reduce") != std::string::npos);

  std::ofstream(tmp / "crash.cpp") << "#include \"core/comm/communicator.h\"\n"
                                      "void my_all_reduce(dsgd::Communicator& c, "
                                      "std::span<float> d) { if (c.size() == 2) "
                                      "*(volatile int*)nullptr = 1; }\n";
  CliResult crash = run_dsgd("lesson 5 --check " + (tmp / "crash.cpp") + " --lang zh");
  CHECK(crash.exit_code == 1);
  CHECK(crash.out.find("FAIL  R = 2, n = 0: 进程崩溃：信号 11") != std::string::npos);
}

// The exercises of lessons 3, 4 and 6: each solution passes, each file as handed out fails
// with what its failures share, and the wrong ways to right values fail with their reasons.
TEST_CASE("dsgd lesson 3 --check: the handed-out shift deadlocks only above the eager limit",
          "[lessons]") {
  const std::string dir = std::string(DSGD_SOURCE_DIR) + "/lessons/03-nonblocking-deadlock/";
  CliResult good = run_dsgd("lesson 3 --check " + dir + "solution.cpp");
  INFO(good.out << good.err);
  CHECK(good.exit_code == 0);
  CHECK(good.out.find("ok    R = 8: n = 0, 1, 1000, 16384, 262144") != std::string::npos);
  CliResult given = run_dsgd("lesson 3 --check " + dir + "exercise.cpp");
  INFO(given.out << given.err);
  CHECK(given.exit_code == 1);
  CHECK(given.out.find("  R = 5        ok     ok     ok     ok   FAIL") != std::string::npos);
  CHECK(given.out.find("FAIL  R = 3, n = 262144: deadlock: every running rank is blocked") !=
        std::string::npos);
  CHECK(given.out.find("FAIL  7 of 35 cases failed.") != std::string::npos);
  CHECK(given.out.find("Only vectors above the eager limit (64 KiB) fail") != std::string::npos);

  dsgd::test::TempDir tmp;
  std::ofstream(tmp / "backwards.cpp")
      << "#include <vector>\n#include \"core/comm/communicator.h\"\n"
         "void shift_right(dsgd::Communicator& c, std::span<float> d) {\n"
         "  const int R = c.size(), r = c.rank();\n  std::vector<float> in(d.size());\n"
         "  dsgd::Request s = c.isend(d, (r - 1 + R) % R);\n  c.recv(in, (r + 1) % R);\n"
         "  c.wait(s);\n  for (size_t i = 0; i < d.size(); ++i) d[i] = in[i];\n}\n";
  CliResult backwards =
      run_dsgd("lesson 3 --check " + (tmp / "backwards.cpp") + " --check-ranks 3");
  INFO(backwards.out);
  CHECK(backwards.out.find("FAIL  R = 3, n = 1: rank 0 element 0 is 200, expected 300; that is "
                           "the right neighbour's value") != std::string::npos);

  // MPI's rules the simulator does not need but MPI does: a send's buffer is untouched until
  // its wait returns, and every request is waited for.
  const std::string head =
      "#include \"core/comm/communicator.h\"\n"
      "void shift_right(dsgd::Communicator& c, std::span<float> d) {\n"
      "  const int R = c.size(), r = c.rank();\n";
  std::ofstream(tmp / "reuse.cpp") << head << "  dsgd::Request s = c.isend(d, (r + 1) % R);\n"
                                   << "  c.recv(d, (r - 1 + R) % R);\n  c.wait(s);\n}\n";
  std::ofstream(tmp / "unwaited.cpp")
      << "#include <vector>\n"
      << head << "  std::vector<float> in(d.size());\n  c.isend(d, (r + 1) % R);\n"
      << "  c.recv(in, (r - 1 + R) % R);\n  for (size_t i = 0; i < d.size(); ++i) d[i] = "
         "in[i];\n}\n";
  CliResult reuse = run_dsgd("lesson 3 --check " + (tmp / "reuse.cpp") + " --check-ranks 3");
  INFO(reuse.out);
  CHECK(reuse.exit_code == 1);
  CHECK(reuse.out.find("FAIL  R = 2, n = 1: rank ") != std::string::npos);
  CHECK(reuse.out.find("changed before the send's wait returned") != std::string::npos);
  CliResult unwaited = run_dsgd("lesson 3 --check " + (tmp / "unwaited.cpp") + " --check-ranks 3");
  INFO(unwaited.out);
  CHECK(unwaited.exit_code == 1);
  CHECK(unwaited.out.find("was never waited for; wait for every request") != std::string::npos);
}

TEST_CASE("dsgd lesson 4 --check: a loop over the ranks, a chain and root 0 only are not a tree",
          "[lessons]") {
  const std::string dir = std::string(DSGD_SOURCE_DIR) + "/lessons/04-collectives/";
  CliResult good = run_dsgd("lesson 4 --check " + dir + "solution.cpp");
  INFO(good.out << good.err);
  CHECK(good.exit_code == 0);
  CHECK(good.out.find("               n=0      n=1   n=1000 root=R-1 root=R/2   n=2^18") !=
        std::string::npos);
  CliResult given = run_dsgd("lesson 4 --check " + dir + "exercise.cpp --check-ranks 3");
  CHECK(given.exit_code == 1);
  CHECK(given.out.find("FAIL  R = 2, n = 1: rank 1 element 0 is -2, expected 1; it still holds "
                       "its own starting value: the data never reached it.") != std::string::npos);

  dsgd::test::TempDir tmp;
  const std::string head =
      "#include \"core/comm/collectives.h\"\n"
      "void tree_broadcast(dsgd::Communicator& c, std::span<float> d, "
      "int root) {\n  const int R = c.size(), rel = (c.rank() - root + R) % R;\n";
  std::ofstream(tmp / "loop.cpp")
      << head << "  (void)rel;\n  if (c.rank() != root) { c.recv(d, root); return; }\n"
      << "  for (int r = 0; r < R; ++r) if (r != root) c.send(d, r);\n}\n";
  std::ofstream(tmp / "chain.cpp") << head << "  if (rel > 0) c.recv(d, (c.rank() - 1 + R) % R);\n"
                                   << "  if (rel + 1 < R) c.send(d, (c.rank() + 1) % R);\n}\n";
  std::ofstream(tmp / "root0.cpp")
      << head << "  (void)rel;\n  for (int k = 1; k < R; k *= 2) {\n"
      << "    if (c.rank() < k && c.rank() + k < R) c.send(d, c.rank() + k);\n"
      << "    else if (c.rank() >= k && c.rank() < 2 * k) c.recv(d, c.rank() - k);\n  }\n}\n";
  std::ofstream(tmp / "library.cpp") << head << "  (void)rel;\n  dsgd::broadcast(c, d, root);\n}\n";
  CliResult loop = run_dsgd("lesson 4 --check " + (tmp / "loop.cpp") + " --check-ranks 4");
  INFO(loop.out);
  CHECK(loop.out.find("ok    R = 3:") != std::string::npos);
  CHECK(loop.out.find("FAIL  R = 4, n = 0: the values are right, but rank 0 sent 3 messages; in "
                      "a binomial tree no rank sends more than ceil(log2 R) = 2.") !=
        std::string::npos);
  CliResult chain = run_dsgd("lesson 4 --check " + (tmp / "chain.cpp") + " --check-ranks 4");
  INFO(chain.out);
  CHECK(chain.out.find("FAIL  R = 4, n = 0: the values are right, but the data took 3 hops to "
                       "reach rank 3") != std::string::npos);
  CliResult root0 = run_dsgd("lesson 4 --check " + (tmp / "root0.cpp") + " --check-ranks 4");
  INFO(root0.out);
  CHECK(root0.out.find("FAIL  R = 2, n = 1000, root = 1: rank 0 element 0 is -1") !=
        std::string::npos);
  CHECK(root0.out.find("It fails only when the root is not rank 0") != std::string::npos);
  CliResult library = run_dsgd("lesson 4 --check " + (tmp / "library.cpp") + " --check-ranks 4");
  INFO(library.out);
  CHECK(library.out.find("FAIL  R = 1, n = 0: rank 0 called dsgd's own broadcast") !=
        std::string::npos);
}

TEST_CASE("dsgd lesson 6 --check: average_gradients must divide the sum", "[lessons]") {
  const std::string dir = std::string(DSGD_SOURCE_DIR) + "/lessons/06-why-synchronise/";
  CliResult good = run_dsgd("lesson 6 --check " + dir + "solution.cpp --lang zh");
  INFO(good.out << good.err);
  CHECK(good.exit_code == 0);
  CHECK(good.out.find("PASS  所有情形都与参考结果一致。") != std::string::npos);
  CliResult given = run_dsgd("lesson 6 --check " + dir + "exercise.cpp --check-ranks 3");
  CHECK(given.exit_code == 1);
  CHECK(given.out.find("It fails whenever there are 2 ranks or more: sum the ranks'") !=
        std::string::npos);
  dsgd::test::TempDir tmp;
  std::ofstream(tmp / "sum.cpp") << "#include \"core/comm/collectives.h\"\n"
                                    "void average_gradients(dsgd::Communicator& c, "
                                    "std::span<float> g) { dsgd::all_reduce(c, g); }\n";
  CliResult sum = run_dsgd("lesson 6 --check " + (tmp / "sum.cpp") + " --check-ranks 2");
  INFO(sum.out);
  CHECK(sum.exit_code == 1);
  CHECK(sum.out.find("FAIL  R = 2, n = 1: rank 0 element 0 is 3, expected 1.5; that is the sum "
                     "over the ranks, not the mean: every rank must divide by comm.size().") !=
        std::string::npos);
  // Dividing before the sum, as DDP does, rounds each term: right to float rounding.
  std::ofstream(tmp / "first.cpp") << "#include \"core/comm/collectives.h\"\n"
                                      "void average_gradients(dsgd::Communicator& c, "
                                      "std::span<float> g) {\n  for (float& x : g) x /= c.size();\n"
                                      "  dsgd::all_reduce(c, g);\n}\n";
  CliResult first = run_dsgd("lesson 6 --check " + (tmp / "first.cpp") + " --check-ranks 4");
  INFO(first.out);
  CHECK(first.exit_code == 0);
}

TEST_CASE("dsgd lesson rejects bad arguments with exit code 2", "[lessons]") {
  const char* bad[] = {
      "lesson",                                  // no lesson
      "lesson 99",                               // no such lesson
      "lesson two",                              // not a number
      "lesson 2 --lang fr",                      // no such language
      "lesson 2 --step --auto",                  // exclusive modes
      "lesson 2 --nodes 1",                      // lesson 2 needs two ranks
      "lesson 8 --nodes 9",                      // above the lesson's maximum
      "lesson 2 --backend foo",                  // no such backend
      "lesson 2 --backend mpi --step",           // stepping holds a simulated network
      "lesson 2 --check x.cpp",                  // lesson 2 has no exercise
      "lesson 5 --check /no/such/file.cpp",      // missing file
      "lesson 5 --check x.cpp --check-ranks 0",  // no rank to run on
      "lesson 2 --latency fast",                 // bad simulator flag
  };
  for (const char* args : bad) {
    CliResult r = run_dsgd(args);
    INFO(args << "\n" << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(!r.err.empty());
  }
}

TEST_CASE("every lesson has both texts, with the same sections in the same order", "[lessons]") {
  using namespace dsgd::lessons;
  for (const LessonInfo& info : lesson_catalog()) {
    INFO("lesson " << info.number << " (" << info.dir << ")");
    const LessonText en = load_lesson_text(info, Lang::en);
    const LessonText zh = load_lesson_text(info, Lang::zh);
    CHECK(en.title.rfind("Lesson " + std::to_string(info.number) + " · ", 0) == 0);
    CHECK(zh.title.rfind("第 " + std::to_string(info.number) + " 课 · ", 0) == 0);
    CHECK_FALSE(en.intro.empty());
    CHECK_FALSE(zh.intro.empty());
    REQUIRE(en.sections.size() == zh.sections.size());
    CHECK(en.sections.size() >= 2);
    for (size_t i = 0; i < en.sections.size(); ++i) {
      CHECK(en.sections[i].first == zh.sections[i].first);
      CHECK_FALSE(en.sections[i].second.empty());
      CHECK_FALSE(zh.sections[i].second.empty());
    }
  }
}

TEST_CASE("README sections parse into title, introduction and sections", "[lessons]") {
  using namespace dsgd::lessons;
  const LessonText t = parse_lesson_text(
      "# Lesson 9 · Title\n\nIntro line.\n\n<!-- section: a -->\n## A\n\nText A.\n\n"
      "<!-- section: b -->\nText B.\n",
      "x.md");
  CHECK(t.title == "Lesson 9 · Title");
  CHECK(t.intro == "Intro line.");
  REQUIRE(t.sections.size() == 2);
  CHECK(t.sections[0].first == "a");
  CHECK(t.sections[0].second == "## A\n\nText A.");
  CHECK(t.section("b") == "Text B.");
  CHECK(t.section("c").find("'c' is missing from x.md") != std::string::npos);
  CHECK_THROWS_AS(parse_lesson_text("no title\n", "y.md"), dsgd::DataError);
}

TEST_CASE("the transcript merge does not depend on the order ranks recorded in", "[lessons]") {
  using dsgd::lessons::LogItem;
  using dsgd::lessons::Recorder;
  // Per-rank logs of a ring of 3: each rank prints, sends right, receives from the left,
  // prints; a section in the middle; rank 2 then sends to itself.
  std::vector<std::vector<LogItem>> logs(3);
  for (int r = 0; r < 3; ++r) {
    auto& l = logs[r];
    l.push_back({.kind = LogItem::Kind::print, .text = "start " + std::to_string(r)});
    l.push_back(
        {.kind = LogItem::Kind::send, .peer = (r + 1) % 3, .bytes = 4, .preview = {float(r)}});
    l.push_back({.kind = LogItem::Kind::recv, .peer = (r + 2) % 3, .bytes = 4});
    l.push_back({.kind = LogItem::Kind::print, .text = "got " + std::to_string((r + 2) % 3)});
    l.push_back({.kind = LogItem::Kind::section, .text = "s"});
    if (r == 2) {
      l.push_back({.kind = LogItem::Kind::send, .peer = 2, .tag = 5, .bytes = 0});
      l.push_back({.kind = LogItem::Kind::recv, .peer = 2, .tag = 5, .bytes = 0});
    }
    l.push_back({.kind = r == 0 ? LogItem::Kind::say : LogItem::Kind::print,
                 .text = "end " + std::to_string(r)});
  }
  auto text = [](const std::string& id) { return "## section " + id; };
  std::string reference;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    // Record the items in a random interleaving that keeps each rank's own order.
    Recorder rec(dsgd::lessons::Lang::en, 3);
    std::vector<size_t> next(3, 0);
    std::string partial;
    for (size_t left = 0; true;) {
      left = 0;
      for (int r = 0; r < 3; ++r)
        left += logs[r].size() - next[r];
      if (left == 0) break;
      int r = static_cast<int>(rng() % 3);
      while (next[r] == logs[r].size())
        r = (r + 1) % 3;
      rec.add(r, logs[r][next[r]++]);
      if (rng() % 4 == 0) partial += rec.take_ready(3, false, text);
    }
    for (int r = 0; r < 3; ++r)
      rec.set_done(r);
    const std::string out = partial + rec.take_ready(3, true, text);
    if (trial == 0) reference = out;
    INFO(out);
    CHECK(out == reference);
  }
  INFO(reference);
  // Each message comes before the line its receiver printed after receiving it.
  CHECK(reference.find("rank 0 -> rank 1 · tag 0 · 4 bytes · [0]") <
        reference.find("[rank 1] got 0"));
  CHECK(reference.find("rank 2 -> rank 0") < reference.find("[rank 0] got 2"));
  // The section comes after everything before it and before everything after it.
  CHECK(reference.find("[rank 2] got 1") < reference.find("## section s"));
  CHECK(reference.find("## section s") < reference.find("rank 2 -> rank 2 · tag 5"));
  CHECK(reference.find("\nend 0\n") != std::string::npos);  // say: no rank prefix
  CHECK(reference.find("[rank 1] end 1") != std::string::npos);
}
