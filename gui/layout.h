// The geometry and bookkeeping that decide what the views draw, with no ImGui or OpenGL in
// sight so tests can check them: where ranks sit (ring, star, grid), where a packet is on
// its link at a given time, which ring all-reduce chunk a message carries and how many
// ranks' contributions a chunk holds, colours by operation, and plot scales.
// R = ranks (world), c = chunk index, k = messages a rank has received in one all_reduce.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gui/settings.h"

namespace dsgd::gui {

struct Vec2 {
  float x = 0, y = 0;
};

// Rank positions in the unit square [0,1]^2 (the view scales them to its rectangle).
// ring: a circle, rank 0 at the top, clockwise; star: rank 0 (the root) in the centre;
// grid: rows of ceil(sqrt(R)), row-major.
std::vector<Vec2> layout_positions(Layout layout, int world);
// The layout that matches an algorithm: naive -> star (everything goes through the root),
// more than 16 ranks -> grid, otherwise ring.
Layout resolve_layout(Layout requested, Algorithm algorithm, int world);

// How far along its link a message is at `now_s`: (now - send) / (arrival - send), clamped to
// [0, 1]; a message with no travel time is at 1 once sent, and at 0 before.
double packet_progress(double send_s, double arrival_s, double now_s);
// The point at `progress` along the link src -> dst, moved sideways by `offset` (in layout
// units, to the left of the direction of travel) so that the two directions of one link
// do not overlap.
Vec2 packet_position(Vec2 src, Vec2 dst, double progress, float offset);

// Ring all-reduce (core/comm/allreduce_ring.cpp): 2(R-1) receives per rank. Reduce-scatter
// receive s (s < R-1) adds chunk (r - s - 1) from the left neighbour; all-gather receive g
// overwrites chunk (r - g) with the complete one.
// The chunk a rank's m-th send of one all_reduce carries (m in [0, 2(R-1))).
int ring_send_chunk(int world, int rank, int m);
// How many ranks' values chunk c on `rank` holds after the rank has received k messages of
// the all_reduce: 1 (its own) up to R (complete). The contributors of a partial chunk are
// the consecutive ranks rank, rank-1, ..., rank-n+1 (mod R).
int ring_contributions(int world, int rank, int c, int k);
// How many ranks' values the m-th send of `rank` carries.
int ring_send_contributions(int world, int rank, int m);

// The value of element i on `rank` in the all_reduce demo: small integers, so sums are exact.
float demo_value(int rank, int i);
// The value element i of chunk-holding rank shows: the sum of demo_value over its
// contributors (ring_contributions consecutive ranks ending at `rank`).
float demo_partial_sum(int world, int rank, int i, int contributions);

// Colours are 0xAABBGGRR (ImGui's IM_COL32 layout), so views use them as they are.
using Rgba = uint32_t;
constexpr Rgba rgba(int r, int g, int b, int a = 255) {
  return static_cast<Rgba>(r) | static_cast<Rgba>(g) << 8 | static_cast<Rgba>(b) << 16 |
         static_cast<Rgba>(a) << 24;
}
// The operation a message belongs to, from its tag: "all_reduce ring", "broadcast", ...;
// "p2p" for user tags.
const char* op_for_tag(int tag);
Rgba colour_for_op(const char* op);
// A packet's radius in pixels for `bytes`: grows with log2(bytes), from 3 px to 12 px.
float packet_radius(uint64_t bytes);

// A plot axis: maps values in [lo, hi] to [0, 1], linearly or by log10 (values <= 0 clamp
// to the smallest positive value seen).
struct PlotScale {
  double lo = 0, hi = 1;
  bool log = false;
  double to_unit(double v) const;
};
PlotScale fit_scale(const std::vector<double>& values, bool log);

// Where draw_dashboard puts a view's window in a display of `width` x `height` pixels (the
// whole display when showing only one view); the screenshot tests check these rectangles.
// With a lesson open the lesson panel takes the right-hand column (convergence and gradients
// make way) and the timeline the rest of the bottom.
struct Rect {
  float x0, y0, x1, y1;
};
Rect view_rect(View view, View only, float width, float height, bool lesson = false);

// "1.5 ms", "3 us", "2.00 s".
std::string format_seconds(double s);
// "1.4 KB", "12 MB".
std::string format_bytes(double bytes);

}  // namespace dsgd::gui
