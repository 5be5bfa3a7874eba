// Bad input for dsgd-gui, as a user meets it: `dsgd-gui --replay FILE [--metrics FILE]` or
// `--compare FILE` with a broken file, or `--record` to a path it cannot write, exits 2 with one
// line on stderr naming the file and what to do, before any window opens (so these run without a
// display), and writes nothing. Each row is a row of docs/errors.md's "Bad input" table (checked
// below); the dsgd rows are in test_bad_input.cpp. Replay::parse's own error cases are in
// test_gui_logic.cpp.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"

using dsgd::test::read_text;
using dsgd::test::run_program;
using dsgd::test::TempDir;

namespace {

struct Row {
  std::string input;               // as docs/errors.md's table shows it
  std::string args;                // dsgd-gui's arguments; {d} is the directory of the files
  std::vector<std::string> words;  // the one line on stderr contains every one
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

// A trace with one well-formed dsgd slice, for the metrics rows.
constexpr const char* kGoodTrace =
    R"({"traceEvents":[{"ph":"X","cat":"step","name":"step","pid":0,"tid":0,"ts":1,"dur":5,)"
    R"("args":{"step":1}}]})";

std::vector<Row> rows() {
  // Not --headless: that renders the error window into its screenshot instead
  // (test_gui_headless.cpp "a malformed trace shows an error window and exits 2").
  const std::string shot = " --view all";
  return {
      {"dsgd-gui --replay empty file",
       "--replay {d}/empty.json" + shot,
       {"empty.json", "invalid JSON", "dsgd train --trace"}},
      {"dsgd-gui --replay truncated JSON",
       "--replay {d}/cut.json" + shot,
       {"cut.json", "invalid JSON"}},
      {"dsgd-gui --replay no traceEvents",
       "--replay {d}/object.json" + shot,
       {"object.json", "traceEvents", "dsgd train --trace"}},
      {"dsgd-gui --replay no dsgd events",
       "--replay {d}/foreign.json" + shot,
       {"foreign.json", "no dsgd events"}},
      {"dsgd-gui --replay p2p slice without src",
       "--replay {d}/p2p.json" + shot,
       {"p2p.json", "event #1", "dir/src/dst", "write the trace again"}},
      {"dsgd-gui --replay negative dur",
       "--replay {d}/dur.json" + shot,
       {"dur.json", "negative 'dur'"}},
      {"dsgd-gui --replay a message to rank 2147483647",
       "--replay {d}/rankmax.json" + shot,
       {"rankmax.json", "rank 2147483647", "ranks 0 to 4095"}},
      {"dsgd-gui --replay missing file",
       "--replay {d}/none.json" + shot,
       {"none.json", "check the path"}},
      {"dsgd-gui --replay with a malformed --metrics line",
       "--replay {d}/good.json --metrics {d}/bad.jsonl" + shot,
       {"bad.jsonl:2", "not a metrics line", "dsgd train --metrics"}},
      {"dsgd-gui --replay with a missing --metrics file",
       "--replay {d}/good.json --metrics {d}/none.jsonl" + shot,
       {"none.jsonl", "check the path"}},
      {"dsgd-gui --compare empty file",
       "--compare {d}/empty.json" + shot,
       {"empty.json", "not a dsgd compare file", "dsgd compare --json"}},
      {"dsgd-gui --compare no runs",
       "--compare {d}/object.json" + shot,
       {"object.json", "no \"runs\"", "dsgd compare --json"}},
      {"dsgd-gui --compare missing file",
       "--compare {d}/none.json" + shot,
       {"none.json", "check the path"}},
      {"dsgd-gui --record into a missing directory",
       "--record {d}/out/missing/out.gif" + shot,
       {"cannot write", "missing/out.gif", "check the path"}},
      {"dsgd-gui --start-when 3 without --classroom",
       "--start-when 3" + shot,
       {"--start-when", "--classroom"}},
      {"dsgd-gui --classroom --port 70000",
       "--classroom --port 70000" + shot,
       {"--port 70000", "1 to 65533"}},
      {"dsgd-gui --classroom --watch 29600",
       "--classroom --watch 29600" + shot,
       {"--classroom", "drop --watch"}},
      {"dsgd-gui --elastic in-process",
       "--elastic in-process" + shot,
       {"--elastic in-process", "not elastic", "--classroom"}},
      {"dsgd-gui --classroom --elastic restart",
       "--classroom --elastic restart" + shot,
       {"--elastic restart", "no checkpoints", "in-process"}},
      {"dsgd-gui --record out.png",
       "--record {d}/out/out.png" + shot,
       {"--record", "out.png", "ending in .gif"}},
  };
}

}  // namespace

TEST_CASE(
    "dsgd-gui --replay or --record of a bad file: exit 2, one line, no window, nothing written",
    "[gui][bad_input]") {
  TempDir dir;
  const std::string d = dir.path().string();
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(d + "/" + name, std::ios::binary) << text;
  };
  write("empty.json", "");
  write("cut.json", "{\"traceEvents\": [{\"ph\": \"X\",");
  write("object.json", "{\"events\": []}");
  write("foreign.json", R"({"traceEvents":[{"ph":"X","cat":"gpu","pid":0,"ts":1,"dur":2}]})");
  write("p2p.json",
        R"({"traceEvents":[{"ph":"X","cat":"p2p","pid":0,"ts":1,"dur":1,"args":{"dir":"send"}}]})");
  write("dur.json", R"({"traceEvents":[{"ph":"X","cat":"step","pid":0,"ts":1,"dur":-5}]})");
  write("good.json", kGoodTrace);
  const auto send_to = [](int dst) {
    return fmt::format(
        R"({{"traceEvents":[{{"ph":"X","cat":"p2p","pid":0,"ts":1,"dur":1,"args":{{"dir":"send",)"
        R"("src":0,"dst":{},"tag":0,"k":0,"bytes":4}}}}]}})",
        dst);
  };
  write("rankmax.json", send_to(2147483647));
  write("bad.jsonl", "{\"step\": 1, \"loss\": 2.3}\n{\"step\": 2, \"loss\": \n");
  std::filesystem::create_directory(dir.path() / "out");
  const std::string before = dir.listing();
  for (const Row& row : rows()) {
    const std::string args = replace_all(row.args, "{d}", d);
    // No DISPLAY: a run that got past the checks would fail to open a window (exit 1).
    const auto r = run_program("env -u DISPLAY -u WAYLAND_DISPLAY " DSGD_GUI_BINARY, args);
    INFO(row.input << "\ndsgd-gui " << args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("dsgd-gui: error: "));
    for (const std::string& word : row.words)
      CHECK_THAT(r.err, Catch::Contains(word));
    CHECK(std::filesystem::is_empty(dir.path() / "out"));
    CHECK(dir.listing() == before);
  }
}

TEST_CASE("every dsgd-gui bad input tested here is a row of docs/errors.md's Bad input table",
          "[gui][bad_input]") {
  const std::string readme = read_text(std::string(DSGD_SOURCE_DIR) + "/docs/errors.md");
  const auto section = readme.find("## Bad input");
  REQUIRE(section != std::string::npos);
  for (const Row& row : rows()) {
    INFO(row.input);
    CHECK_THAT(readme.substr(section), Catch::Contains("| `" + row.input + "` |"));
  }
}
