// Axis ticks (gui/model/ticks.h): steps of 1, 2 or 5 times a power of ten, never odd values
// such as 0.698; log axes by decades; labels that never repeat a value however far the axis
// is zoomed in, in the unit the axis needs.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <set>
#include <string>

#include "gui/model/ticks.h"

using namespace dsgd::gui;

namespace {

std::vector<std::string> labels_of(const Axis& a) {
  std::vector<std::string> out;
  for (const Tick& t : a.ticks)
    out.push_back(t.label);
  return out;
}

// Whether `step` is 1, 2 or 5 times a power of ten.
bool is_nice(double step) {
  const double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  return std::abs(m - 1) < 1e-6 || std::abs(m - 2) < 1e-6 || std::abs(m - 5) < 1e-6;
}

}  // namespace

TEST_CASE("nice steps are 1, 2 or 5 times a power of ten", "[gui]") {
  CHECK(nice_step(10, 5) == Approx(2));
  CHECK(nice_step(2.3, 4) == Approx(1));
  CHECK(nice_step(1, 4) == Approx(0.5));
  CHECK(nice_step(300, 3) == Approx(100));
  CHECK(nice_step(0.004, 4) == Approx(0.001));
  CHECK(nice_step(0, 4) == 1);  // no span: any step
}

TEST_CASE("a loss axis gets round ticks, not a quarter of its range", "[gui]") {
  // The range the issue saw labelled 2.35, 1.77, 1.19, 0.605, 0.0243 (and 0.698, 0.148).
  const Axis a = nice_axis(0.0243, 2.35, 5, false, TickFormat::number, true);
  CHECK(a.lo == 0);
  CHECK(a.hi == Approx(2.5));
  CHECK(labels_of(a) == std::vector<std::string>{"0.0", "0.5", "1.0", "1.5", "2.0", "2.5"});
  const Axis steps = nice_axis(0, 209, 4, false, TickFormat::number, true);
  CHECK(labels_of(steps) == std::vector<std::string>{"0", "100", "200", "300"});
}

TEST_CASE("ticks stay inside an unwidened range, at least two of them", "[gui]") {
  const Axis a = nice_axis(0.3, 0.7, 1, false, TickFormat::number, false);
  REQUIRE(a.ticks.size() >= 2);
  for (const Tick& t : a.ticks) {
    CHECK(t.value >= 0.3 - 1e-12);
    CHECK(t.value <= 0.7 + 1e-12);
  }
}

TEST_CASE("a log axis is ticked by decades, or 1-2-5 within a decade", "[gui]") {
  const Axis a = nice_axis(0.0243, 2.35, 5, true, TickFormat::number, true);
  CHECK(a.log);
  CHECK(labels_of(a) == std::vector<std::string>{"0.01", "0.1", "1", "10"});
  CHECK(a.lo == Approx(0.01));
  CHECK(a.hi == Approx(10));
  const Axis narrow = nice_axis(0.3, 0.9, 5, true, TickFormat::number, true);
  CHECK(labels_of(narrow) == std::vector<std::string>{"0.2", "0.5", "1"});
  const Axis wide = nice_axis(1e-6, 1e3, 4, true, TickFormat::number, false);
  CHECK(wide.ticks.size() <= 5);
  CHECK(wide.ticks.size() >= 3);
}

TEST_CASE("percent and seconds axes read in their units", "[gui]") {
  CHECK(labels_of(nice_axis(0, 1, 5, false, TickFormat::percent, false)) ==
        std::vector<std::string>{"0%", "20%", "40%", "60%", "80%", "100%"});
  CHECK(labels_of(nice_axis(0.4, 0.9, 5, false, TickFormat::seconds, false)) ==
        std::vector<std::string>{"400 ms", "500 ms", "600 ms", "700 ms", "800 ms", "900 ms"});
  CHECK(labels_of(nice_axis(0, 2, 4, false, TickFormat::seconds, false)) ==
        std::vector<std::string>{"0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s"});
}

TEST_CASE("a zoomed time axis never repeats a label", "[gui]") {
  // Zoomed to 4 us at 403 ms: "403 ms" five times before.
  const Axis a = nice_axis(0.403001, 0.403005, 4, false, TickFormat::seconds, false);
  CHECK(labels_of(a) == std::vector<std::string>{"403.001 ms", "403.002 ms", "403.003 ms",
                                                 "403.004 ms", "403.005 ms"});
}

TEST_CASE("ticks are nice, inside, distinct and few for any range", "[gui]") {
  std::mt19937 rng(19);
  std::uniform_real_distribution<double> exponent(-9, 6), unit(0, 1);
  for (int trial = 0; trial < 2000; ++trial) {
    const double span = std::pow(10.0, exponent(rng)) * (1 + 9 * unit(rng));
    const double lo = (unit(rng) - 0.3) * span * std::pow(10.0, 3 * unit(rng));
    const int max_ticks = 1 + trial % 10;
    const auto format = static_cast<TickFormat>(trial % 3);
    const Axis a = nice_axis(lo, lo + span, max_ticks, false, format, false);
    INFO("lo " << lo << " span " << span << " max " << max_ticks);
    REQUIRE(a.ticks.size() >= 2);
    const double step = a.ticks[1].value - a.ticks[0].value;
    CHECK(is_nice(step));
    if (a.ticks.size() > static_cast<size_t>(max_ticks) + 1) {  // only when the next step up
      const double up = step * (is_nice(step * 2) ? 2 : 2.5);   // leaves fewer than two
      CHECK(std::floor((lo + span) / up + 1e-9) - std::ceil(lo / up - 1e-9) + 1 < 2);
    }
    std::set<std::string> distinct;
    for (const Tick& t : a.ticks) {
      CHECK(t.value >= lo - 1e-9 * span);
      CHECK(t.value <= lo + span + 1e-9 * span);
      distinct.insert(t.label);
    }
    CHECK(distinct.size() == a.ticks.size());
  }
}

TEST_CASE("an axis maps its range to [0, 1], linearly or by log10", "[gui]") {
  const Axis lin{.lo = 0, .hi = 4};
  CHECK(lin.to_unit(1) == Approx(0.25));
  const Axis log{.lo = 0.01, .hi = 10, .log = true};
  CHECK(log.to_unit(0.1) == Approx(1.0 / 3));
  CHECK(log.to_unit(0) == 0);  // below a log axis: its bottom
}
