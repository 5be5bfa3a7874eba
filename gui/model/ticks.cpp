#include "gui/model/ticks.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

#include <fmt/format.h>

namespace dsgd::gui {
namespace {

constexpr double kNice[] = {1, 2, 5};

// The nice value next to `step` (1, 2, 5 x 10^k) upwards (+1) or downwards (-1).
double next_nice(double step, int direction) {
  const double base = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  const double m = step / base;
  const int i = m < 1.5 ? 0 : m < 3.5 ? 1 : 2;
  const int j = i + direction;
  if (j > 2) return 10 * base;
  if (j < 0) return 0.5 * base;
  return kNice[j] * base;
}

// Multiples of `step` from ceil(lo/step) to floor(hi/step), as whole multiples (no drift).
std::vector<double> multiples(double lo, double hi, double step) {
  std::vector<double> out;
  const double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
  for (double k = first; k <= last && out.size() < 10000; ++k)
    out.push_back(k == 0 ? 0.0 : k * step);
  return out;
}

Axis linear_axis(double lo, double hi, int max_ticks, bool widen) {
  max_ticks = std::max(1, max_ticks);
  double step = nice_step(hi - lo, max_ticks);
  if (widen) {
    while (std::ceil(hi / step - 1e-9) - std::floor(lo / step + 1e-9) > max_ticks)
      step = next_nice(step, +1);
    lo = std::floor(lo / step + 1e-9) * step;
    hi = std::ceil(hi / step - 1e-9) * step;
  } else {
    while (multiples(lo, hi, step).size() < 2)
      step = next_nice(step, -1);
  }
  Axis axis{.lo = lo, .hi = hi};
  for (double v : multiples(lo, hi, step))
    axis.ticks.push_back({.value = v});
  return axis;
}

// m x 10^k for the mantissas given, inside [lo, hi] (lo > 0), with the one just below lo and
// the one just above hi when `widen`.
std::vector<double> log_values(double lo, double hi, std::initializer_list<double> mantissas,
                               bool widen) {
  std::vector<double> all;
  for (int k = static_cast<int>(std::floor(std::log10(lo))) - 1;
       k <= static_cast<int>(std::ceil(std::log10(hi))) + 1; ++k)
    for (double m : mantissas)
      all.push_back(m * std::pow(10.0, k));
  std::vector<double> out;
  const double eps = 1e-9;
  for (size_t i = 0; i < all.size(); ++i) {
    const bool inside = all[i] >= lo * (1 - eps) && all[i] <= hi * (1 + eps);
    const bool below =
        widen && i + 1 < all.size() && all[i] < lo * (1 - eps) && all[i + 1] >= lo * (1 - eps);
    const bool above = widen && i > 0 && all[i] > hi * (1 + eps) && all[i - 1] <= hi * (1 + eps);
    if (inside || below || above) out.push_back(all[i]);
  }
  return out;
}

// Digits after the point for a value shown alone: 0.02 -> 2, 0.5 -> 1, 5 -> 0.
int decimals_of(double v) {
  return std::max(0, static_cast<int>(-std::floor(std::log10(std::abs(v)) + 1e-9)));
}

std::optional<Axis> log_axis(double lo, double hi, int max_ticks, bool widen) {
  for (std::initializer_list<double> mantissas :
       {std::initializer_list<double>{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    std::vector<double> values = log_values(lo, hi, mantissas, widen);
    if (mantissas.size() == 1 && values.size() > static_cast<size_t>(max_ticks) + 1) {
      // Too many decades: every n-th, from a power of ten that keeps 1 in view.
      const size_t n = (values.size() + max_ticks - 1) / std::max(1, max_ticks);
      std::vector<double> thinned;
      for (size_t i = 0; i < values.size(); i += n)
        thinned.push_back(values[i]);
      if (widen && thinned.back() < hi) thinned.push_back(thinned.back() * std::pow(10.0, n));
      values = thinned;
    }
    if (values.size() < 3 || values.size() > static_cast<size_t>(max_ticks) + 1) continue;
    Axis axis{.lo = widen ? values.front() : lo, .hi = widen ? values.back() : hi, .log = true};
    for (double v : values)
      axis.ticks.push_back({.value = v});
    return axis;
  }
  return std::nullopt;
}

// A value in the unit and with the decimals given.
std::string format_tick(double v, TickFormat format, double unit, const char* suffix,
                        int decimals) {
  const double x = v / unit;
  const std::string number = fmt::format("{:.{}f}", std::abs(x) < 1e-12 ? 0.0 : x, decimals);
  if (format == TickFormat::percent) return number + "%";
  if (format == TickFormat::seconds) return number + " " + suffix;
  return number;
}

struct Unit {
  double scale;
  const char* suffix;
};
Unit unit_for(const std::vector<double>& values, TickFormat format) {
  if (format == TickFormat::percent) return {0.01, "%"};
  if (format != TickFormat::seconds) return {1, ""};
  double largest = 0;
  for (double v : values)
    largest = std::max(largest, std::abs(v));
  if (largest >= 1) return {1, "s"};
  if (largest >= 1e-3) return {1e-3, "ms"};
  if (largest >= 1e-6) return {1e-6, "us"};
  return {1e-9, "ns"};
}

}  // namespace

double Axis::to_unit(double v) const {
  if (log) {
    const double a = std::log10(lo), b = std::log10(hi);
    return b > a ? (std::log10(std::max(v, lo)) - a) / (b - a) : 0.5;
  }
  return hi > lo ? (v - lo) / (hi - lo) : 0.5;
}

double nice_step(double span, int max_ticks) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / std::max(1, max_ticks);
  const double base = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * base >= raw * (1 - 1e-9)) return m * base;
  return 10 * base;
}

Axis nice_axis(double lo, double hi, int max_ticks, bool log, TickFormat format, bool widen) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  Axis axis;
  bool labelled_alone = false;
  if (log && lo > 0) {
    if (std::optional<Axis> a = log_axis(lo, hi, max_ticks, widen)) {
      axis = *a;
      labelled_alone = true;
    }
  }
  if (!labelled_alone) {
    axis = linear_axis(lo, hi, max_ticks, widen);
    axis.log = log && lo > 0;
  }
  std::vector<double> values;
  for (const Tick& t : axis.ticks)
    values.push_back(t.value);
  if (labelled_alone) {  // 0.01, 0.02, 0.05, 0.1: each with its own digits
    const Unit unit = unit_for(values, format);
    for (Tick& t : axis.ticks)
      t.label =
          format_tick(t.value, format, unit.scale, unit.suffix, decimals_of(t.value / unit.scale));
    return axis;
  }
  const std::vector<std::string> labels = tick_labels(values, format);
  for (size_t i = 0; i < labels.size(); ++i)
    axis.ticks[i].label = labels[i];
  return axis;
}

std::vector<std::string> tick_labels(const std::vector<double>& values, TickFormat format) {
  const Unit unit = unit_for(values, format);
  double gap = 0;
  for (size_t i = 1; i < values.size(); ++i) {
    const double d = std::abs(values[i] - values[i - 1]) / unit.scale;
    if (d > 0 && (gap == 0 || d < gap)) gap = d;
  }
  int decimals = gap > 0 ? std::max(0, static_cast<int>(std::ceil(-std::log10(gap) - 1e-9))) : 0;
  // More digits while a value would round away from itself (a gap that is not 1, 2 or 5).
  const auto exact = [&](int d) {
    const double p = std::pow(10.0, d);
    return std::all_of(values.begin(), values.end(), [&](double v) {
      const double x = v / unit.scale;
      return std::abs(std::round(x * p) / p - x) <= 1e-6 * std::max(gap, 1e-300);
    });
  };
  while (decimals < 12 && gap > 0 && !exact(decimals))
    ++decimals;
  std::vector<std::string> out;
  out.reserve(values.size());
  for (double v : values)
    out.push_back(format_tick(v, format, unit.scale, unit.suffix, decimals));
  return out;
}

}  // namespace dsgd::gui
