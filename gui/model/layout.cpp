#include "gui/model/layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace dsgd::gui {

std::vector<Vec2> layout_positions(Layout layout, int world) {
  std::vector<Vec2> out(std::max(0, world));
  if (world <= 0) return out;
  if (world == 1) {
    out[0] = {0.5f, 0.5f};
    return out;
  }
  constexpr double kPi = 3.14159265358979323846;
  switch (layout) {
    case Layout::star: {
      out[0] = {0.5f, 0.5f};
      for (int r = 1; r < world; ++r) {
        const double a = 2 * kPi * (r - 1) / (world - 1) - kPi / 2;
        out[r] = {static_cast<float>(0.5 + 0.45 * std::cos(a)),
                  static_cast<float>(0.5 + 0.45 * std::sin(a))};
      }
      break;
    }
    case Layout::grid: {
      const int cols = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(world))));
      const int rows = (world + cols - 1) / cols;
      for (int r = 0; r < world; ++r) {
        const int cx = r % cols, cy = r / cols;
        out[r] = {static_cast<float>((cx + 0.5) / cols), static_cast<float>((cy + 0.5) / rows)};
      }
      break;
    }
    case Layout::automatic:
    case Layout::ring:
      for (int r = 0; r < world; ++r) {
        const double a = 2 * kPi * r / world - kPi / 2;
        out[r] = {static_cast<float>(0.5 + 0.45 * std::cos(a)),
                  static_cast<float>(0.5 + 0.45 * std::sin(a))};
      }
      break;
  }
  return out;
}

Layout resolve_layout(Layout requested, Algorithm algorithm, int world) {
  if (requested != Layout::automatic) return requested;
  if (algorithm == Algorithm::naive) return Layout::star;
  if (world > 16) return Layout::grid;
  return Layout::ring;
}

double packet_progress(double send_s, double arrival_s, double now_s) {
  if (now_s < send_s) return 0;
  if (!(arrival_s > send_s)) return 1;  // no travel time (or an unknown arrival before send)
  return std::clamp((now_s - send_s) / (arrival_s - send_s), 0.0, 1.0);
}

Vec2 packet_position(Vec2 src, Vec2 dst, double progress, float offset) {
  const float p = static_cast<float>(std::clamp(progress, 0.0, 1.0));
  const float dx = dst.x - src.x, dy = dst.y - src.y;
  const float len = std::sqrt(dx * dx + dy * dy);
  Vec2 at{src.x + dx * p, src.y + dy * p};
  if (len > 0 && offset != 0) {  // left normal of (dx, dy) in y-down screen coordinates
    at.x += dy / len * offset;
    at.y -= dx / len * offset;
  }
  return at;
}

namespace {
int mod(int a, int n) {
  return ((a % n) + n) % n;
}
}  // namespace

float demo_value(int rank, int i) {
  return static_cast<float>(1 + (rank * 3 + i * 5) % 7);
}

float demo_partial_sum(int world, int rank, int i, int contributions) {
  float sum = 0;
  for (int n = 0; n < contributions && n < world; ++n)
    sum += demo_value(mod(rank - n, world), i);
  return sum;
}

Rgba colour_for_op(const char* op) {
  struct Entry {
    const char* op;
    Rgba colour;
  };
  static constexpr Entry kColours[] = {
      {"all_reduce ring", rgba(255, 140, 0)},
      {"all_reduce", rgba(255, 140, 0)},
      {"all_reduce naive", rgba(220, 40, 140)},  // not red: red marks faults
      {"all_reduce tree", rgba(60, 180, 75)},
      {"all_reduce halving_doubling", rgba(160, 90, 230)},
      {"all_reduce recursive_doubling", rgba(110, 60, 200)},
      {"broadcast", rgba(40, 150, 255)},
      {"reduce", rgba(0, 200, 200)},
      {"barrier", rgba(150, 150, 150)},
      {"gather", rgba(240, 50, 230)},
      {"scatter", rgba(200, 200, 0)},
      {"all_gather", rgba(255, 200, 80)},
      {"reduce_scatter", rgba(120, 220, 120)},
      {"forward_backward", rgba(70, 130, 220)},
      {"update", rgba(90, 200, 160)},
  };
  for (const Entry& e : kColours)
    if (std::strcmp(e.op, op) == 0) return e.colour;
  // Another algorithm of a collective ("broadcast ring"): the collective's colour.
  const std::string_view name(op);
  if (const size_t space = name.find(' '); space != std::string_view::npos)
    for (const Entry& e : kColours)
      if (name.substr(0, space) == e.op) return e.colour;
  return rgba(220, 220, 220);
}

std::string format_seconds(double s) {
  const double a = std::abs(s);
  if (a == 0) return "0 s";
  if (a < 1e-6) return fmt::format("{:.0f} ns", s * 1e9);
  if (a < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
  if (a < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

// Decimal units, as dsgd's flags read them (sim/link_model.h: "MB" is 10^6 bytes).
std::string format_bytes(double bytes) {
  if (bytes < 1e3) return fmt::format("{:.0f} B", bytes);
  if (bytes < 1e6) return fmt::format("{:.3g} kB", bytes / 1e3);
  if (bytes < 1e9) return fmt::format("{:.3g} MB", bytes / 1e6);
  return fmt::format("{:.3g} GB", bytes / 1e9);
}

}  // namespace dsgd::gui
