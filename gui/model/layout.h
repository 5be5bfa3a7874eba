// The geometry that decides what the views draw, with no ImGui or OpenGL in sight so tests
// can check it: where ranks sit (ring, star, grid), where a packet is on its link at a
// given time, the all_reduce demo's values, colours by operation, and plot scales. Which
// chunk a message carries and how full a chunk is come from the event fold
// (core/event_fold.h) through the snapshot. R = ranks (world).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gui/model/settings.h"

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

// The value of element i on `rank` in the all_reduce demo: small integers, so sums are exact.
float demo_value(int rank, int i);
// The value element i shows on `rank` when it holds `contributions` ranks' values: the sum
// of demo_value over the consecutive ranks rank, rank-1, ... (mod R), as a partial ring
// chunk holds them (RingSchedule::contributions), or over all R once complete.
float demo_partial_sum(int world, int rank, int i, int contributions);

// Colours are 0xAABBGGRR (ImGui's IM_COL32 layout), so views use them as they are.
using Rgba = uint32_t;
constexpr Rgba rgba(int r, int g, int b, int a = 255) {
  return static_cast<Rgba>(r) | static_cast<Rgba>(g) << 8 | static_cast<Rgba>(b) << 16 |
         static_cast<Rgba>(a) << 24;
}
// The colour of an operation: a message's label (collective_tags.h: "all_reduce ring",
// "broadcast", ..., "p2p") or a phase's name ("forward_backward", "update"); another
// algorithm of a collective without its own ("broadcast ring") has its collective's.
Rgba colour_for_op(const char* op);

// "1.5 ms", "3 us", "2.00 s".
std::string format_seconds(double s);
// "1.4 kB", "12 MB": decimal units, as the flags read them ("MB" = 10^6 bytes).
std::string format_bytes(double bytes);

}  // namespace dsgd::gui
