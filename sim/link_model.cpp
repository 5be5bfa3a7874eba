#include "sim/link_model.h"

#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {
namespace {

// Splits "2.5ms" into 2.5 and "ms". Returns false when there is no leading number.
bool split_number(const std::string& text, double* value, std::string* unit) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *value);
  if (ec != std::errc() || !std::isfinite(*value)) return false;
  unit->assign(ptr, end);
  while (!unit->empty() && unit->front() == ' ')
    unit->erase(unit->begin());
  return true;
}

}  // namespace

double parse_duration_s(const std::string& text, const char* what) {
  double v = 0;
  std::string unit;
  const auto fail = [&] {
    return UsageError(fmt::format(
        "{} '{}' is not a duration: write a number and a unit, like 2ms, 150us, 0.5s or 0", what,
        text));
  };
  if (!split_number(text, &v, &unit)) throw fail();
  double scale = 0;
  if (unit == "s")
    scale = 1;
  else if (unit == "ms")
    scale = 1e-3;
  else if (unit == "us")
    scale = 1e-6;
  else if (unit == "ns")
    scale = 1e-9;
  else if (unit.empty() && v == 0)
    scale = 1;
  else
    throw fail();
  if (v < 0) throw UsageError(fmt::format("{} '{}' is negative; use 0 or more", what, text));
  if (v * scale > 3600)
    throw UsageError(fmt::format("{} '{}' is over an hour; use at most 3600s", what, text));
  return v * scale;
}

double parse_bandwidth_Bps(const std::string& text, const char* what) {
  if (text == "0" || text == "unlimited" || text == "inf") return 0.0;
  double v = 0;
  std::string unit;
  const auto fail = [&] {
    return UsageError(fmt::format(
        "{} '{}' is not a bandwidth: use bits per second (100Mbit, 1Gbit, 10Gbit) or bytes per "
        "second (125MB/s, 1GiB/s), or 0 for unlimited",
        what, text));
  };
  if (!split_number(text, &v, &unit)) throw fail();
  // Strip a "/s" or "ps" rate suffix; what is left names the unit.
  for (const char* suffix : {"/s", "ps"})
    if (unit.size() > 2 && unit.ends_with(suffix)) unit.resize(unit.size() - 2);
  static constexpr std::pair<const char*, double> kUnits[] = {
      {"bit", 1.0 / 8},   {"Kbit", 1e3 / 8},    {"kbit", 1e3 / 8}, {"Mbit", 1e6 / 8},
      {"Gbit", 1e9 / 8},  {"Tbit", 1e12 / 8},   {"B", 1},          {"KB", 1e3},
      {"kB", 1e3},        {"MB", 1e6},          {"GB", 1e9},       {"KiB", 1024.0},
      {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      if (v <= 0)
        throw UsageError(fmt::format("{} '{}' must be positive (or 0 for unlimited)", what, text));
      const double bps = v * scale;
      if (bps < 1.0)
        throw UsageError(fmt::format("{} '{}' is under 8 bit/s; nothing would arrive", what, text));
      return bps;
    }
  }
  throw fail();
}

uint64_t parse_size_bytes(const std::string& text, const char* what) {
  double v = 0;
  std::string unit;
  static constexpr std::pair<const char*, double> kUnits[] = {
      {"", 1},          {"B", 1},           {"K", 1024.0},       {"KiB", 1024.0},
      {"M", 1048576.0}, {"MiB", 1048576.0}, {"G", 1073741824.0}, {"GiB", 1073741824.0},
      {"KB", 1e3},      {"kB", 1e3},        {"MB", 1e6},         {"GB", 1e9}};
  if (split_number(text, &v, &unit) && v >= 0)
    for (const auto& [name, scale] : kUnits)
      if (unit == name && v * scale < 0x1p63) return static_cast<uint64_t>(v * scale);
  throw UsageError(fmt::format(
      "{} '{}' is not a size: give bytes, with K, M or G for KiB, MiB, GiB (e.g. 65536, 64K, "
      "64KiB), or KB, MB, GB for 10^3, 10^6, 10^9 bytes",
      what, text));
}

std::string format_duration(double s) {
  if (s == 0) return "0";
  if (s >= 1) return fmt::format("{:g} s", s);
  if (s >= 1e-3) return fmt::format("{:g} ms", s * 1e3);
  return fmt::format("{:g} us", s * 1e6);
}

std::string format_bandwidth(double Bps) {
  if (Bps == 0) return "unlimited";
  const double bits = Bps * 8;
  if (bits >= 1e9) return fmt::format("{:g} Gbit/s", bits / 1e9);
  if (bits >= 1e6) return fmt::format("{:g} Mbit/s", bits / 1e6);
  if (bits >= 1e3) return fmt::format("{:g} Kbit/s", bits / 1e3);
  return fmt::format("{:g} bit/s", bits);
}

}  // namespace dsgd::sim
