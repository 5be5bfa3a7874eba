// The window's words (gui/model/ui_text.h): English by default; in Chinese every text of the
// table has a translation that differs from it, an ImGui ID after "###" survives the
// translation, and a text the table lacks stays in English rather than going missing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "gui/model/classroom.h"
#include "gui/model/settings.h"
#include "gui/model/ui_text.h"

using namespace dsgd::gui;

namespace {
struct Language {
  explicit Language(bool chinese) { set_ui_chinese(chinese); }
  ~Language() { set_ui_chinese(false); }
};
}  // namespace

TEST_CASE("ui_text: English unless Chinese is chosen", "[gui]") {
  Language en(false);
  CHECK(std::string(tr("paused")) == "paused");
  Language zh(true);
  CHECK(std::string(tr("paused")) == "已暂停");
}

TEST_CASE("ui_text: every translated text differs from its English", "[gui]") {
  Language zh(true);
  REQUIRE(translated_texts().size() > 10);
  for (std::string_view english : translated_texts()) {
    const std::string text(english);
    INFO(text);
    CHECK(text != tr(text.c_str()));
    CHECK(std::string(tr(text.c_str())).find_first_not_of(' ') != std::string::npos);
  }
}

TEST_CASE("ui_text: an ImGui ID survives the translation", "[gui]") {
  Language zh(true);
  CHECK(std::string(tr("paused###status")) == "已暂停###status");
  CHECK(std::string(tr("log scale##plot")) == "对数坐标##plot");
  // The same text again gives the same pointer: ImGui may keep it for the frame.
  CHECK(tr("paused###status") == tr("paused###status"));
}

TEST_CASE("ui_text: a text without a translation stays in English", "[gui]") {
  Language zh(true);
  CHECK(std::string(tr("no such label, ever")) == "no such label, ever");
}

// Views format some translations (fmt::runtime): a translation with other placeholders than
// its English would throw in the middle of a frame.
TEST_CASE("ui_text: a translation keeps its English's placeholders, in order", "[gui]") {
  Language zh(true);
  const auto placeholders = [](const std::string& text) {
    std::vector<std::string> out;
    for (size_t at = text.find('{'); at != std::string::npos; at = text.find('{', at + 1))
      out.push_back(text.substr(at, text.find('}', at) - at + 1));
    return out;
  };
  for (std::string_view english : translated_texts()) {
    const std::string text(english);
    INFO(text);
    CHECK(placeholders(tr(text.c_str())) == placeholders(text));
  }
}

TEST_CASE("ui_text: the timeline's row labels and its note on dense messages are translated",
          "[gui]") {
  Language zh(true);
  CHECK(std::string(tr("rank {}")) == "秩 {}");
  CHECK(std::string(tr("{} messages: their ends only (zoom in, or hover one, for lines)"))
            .starts_with("{} 条消息"));
}

// The title and the network's caption are composed in sim (run_spec.h) from words the
// window passes in its language: no English word is left in them in Chinese.
TEST_CASE("ui_text: the run's title and the network's caption are in the window's language",
          "[gui]") {
  SimSettings settings;
  settings.run.cluster.network.link.jitter_s = 1e-3;
  settings.run.cluster.network.overrides.push_back({.from = 0, .to = 1, .latency_s = 30e-3});
  set_straggler(settings.run, 2, 3.0);
  {
    Language en(false);
    CHECK(describe(settings) == "ring, 4 nodes, 2 ms, 1 Gbit/s, straggler");
    // A scenario's name, unless the words already say it.
    SimSettings named = settings;
    named.run.scenario = "assets/scenarios/straggler";
    CHECK(describe(named) == "ring, 4 nodes, 2 ms, 1 Gbit/s, straggler");
    named.run.scenario = "classroom-lan";
    CHECK(describe(named) == "ring, 4 nodes, 2 ms, 1 Gbit/s, straggler (classroom-lan)");
    CHECK(network_caption(settings.run.cluster) ==
          "latency 2 ms, bandwidth 1 Gbit/s, mesh, jitter 1 ms; link 0->1: latency 30 ms, "
          "faulty nodes: 1");
  }
  Language zh(true);
  CHECK(describe(settings) == "ring, 4 个节点, 2 ms, 1 Gbit/s, 慢节点");
  const std::string caption = network_caption(settings.run.cluster);
  CHECK(caption == "延迟 2 ms, 带宽 1 Gbit/s, mesh, 抖动 1 ms; 链路 0->1: 延迟 30 ms, 故障节点：1");
  for (const char* english : {"latency", "bandwidth", "jitter", "link", "faulty"})
    CHECK(caption.find(english) == std::string::npos);
}

TEST_CASE("ui_text: a student's state in words, waiting before any run", "[gui][classroom]") {
  Language en(false);
  CHECK(student_state({.seat = 1, .name = "ann"}) == "waiting");  // not in a run: no rank
  CHECK(student_state({.seat = 1, .here = false}) == "left");
  CHECK(student_state({.run = 1, .rank = 2, .running = true}) == "rank 2, running");
  CHECK(student_state({.run = 1, .rank = -1, .running = true}) == "joining run 1");
  CHECK(student_state({.run = 1, .rank = -1, .outcome = "finished"}) == "joined run 1: finished");
  CHECK(student_state({.run = 2, .rank = 0, .outcome = "finished"}) == "rank 0 of run 2: finished");
  CHECK(student_state({.run = 2, .rank = 0, .outcome = "rank 0: lost rank 1"}) ==
        "rank 0 of run 2: rank 0: lost rank 1");
  Language zh(true);
  CHECK(student_state({.seat = 1}) == "等待");
}

TEST_CASE("ui_text: one laptop, two laptops, in either language", "[gui][classroom]") {
  Language en(false);
  CHECK(laptops(1) == "1 laptop");
  CHECK(laptops(3) == "3 laptops");
  CHECK(fmt::format(fmt::runtime(tr("Add {} to run {}")), laptops(1), 2) ==
        "Add 1 laptop to run 2");
  Language zh(true);
  CHECK(laptops(1) == "1 台笔记本");
  CHECK(laptops(3) == "3 台笔记本");
}
