// The topology view: ranks as circles on a ring, star or grid; the links messages used;
// packets moving along them (position from the snapshot's time base, size from bytes,
// colour from the operation) with a tooltip; stragglers, crashed ranks and slow links.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/contrast.h"
#include "gui/views/disc_layer.h"
#include "gui/views/line_layer.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

ImVec2 to_screen(Vec2 p, ImVec2 origin, ImVec2 size) {
  return {origin.x + p.x * size.x, origin.y + p.y * size.y};
}

// A packet's label: the ring's chunk ("c2", "c2.1" for its second segment), else a short
// name of its phase in its collective; none for a user message.
std::string packet_label(const MessageView& m) {
  if (m.chunk >= 0)
    return m.segments > 1 ? fmt::format("c{}.{}", m.chunk, m.segment) : fmt::format("c{}", m.chunk);
  switch (m.phase) {
    case Phase::reduce_scatter:
      return "RS";
    case Phase::all_gather:
      return "AG";
    case Phase::broadcast:
      return "bcast";
    case Phase::p2p:
    case Phase::unknown:
      return "";
    default:
      return to_string(m.phase);
  }
}

void message_tooltip(const Snapshot& s, const MessageView& m) {
  ImGui::BeginTooltip();
  ImGui::Text("rank %d -> rank %d   %s", m.src, m.dst, m.op);
  ImGui::Text("tag %d, message #%llu, %s", m.tag, static_cast<unsigned long long>(m.k),
              format_bytes(static_cast<double>(m.bytes)).c_str());
  ImGui::Text("sent %s, %s %s", format_seconds(m.send_s).c_str(),
              m.estimated ? "due about" : "arrives", format_seconds(m.arrive_s).c_str());
  if (m.phase != Phase::p2p && m.step >= 0)
    ImGui::Text("%s, step %d of %d", to_string(m.phase), m.step + 1, m.steps);
  if (m.chunk >= 0)
    ImGui::Text(
        "chunk %d%s: values of %d of %d ranks", m.chunk,
        m.segments > 1 ? fmt::format(", segment {} of {}", m.segment + 1, m.segments).c_str() : "",
        m.contributions, s.world);
  else if (m.contributions > 0)
    ImGui::Text("carries the values of %d of %d ranks", m.contributions, s.world);
  if (m.preview_count > 0) {
    std::string values;
    for (int i = 0; i < m.preview_count; ++i)
      values += fmt::format("{}{:.4g}", i ? ", " : "", m.preview[i]);
    ImGui::Text("first values: [%s%s]", values.c_str(),
                m.bytes / 4 > m.preview_count ? ", ..." : "");
  }
  ImGui::EndTooltip();
}

}  // namespace

namespace {

// Where this frame draws: the view's box, the ranks' places in it, their radius.
struct Frame {
  const Snapshot& s;
  Palette pal;
  float scale;
  ImDrawList* dl;
  ImVec2 top, avail, origin, size, corner;
  Layout layout;
  std::vector<Vec2> pos;
  float node_r;

  ImVec2 at(int rank) const { return to_screen(pos[rank], origin, size); }
};

Frame frame_of(const Snapshot& s, ImVec2 top, ImVec2 avail) {
  Frame f{.s = s,
          .pal = palette_for(s.view.theme),
          .scale = s.view.ui_scale,
          .dl = ImGui::GetWindowDrawList(),
          .top = top,
          .avail = avail};
  f.layout = resolve_layout(s.view.layout, s.algorithm, s.world);
  f.pos = layout_positions(f.layout, s.world);
  const float margin = 36 * f.scale;
  f.origin = {top.x + margin, top.y + margin};
  f.size = {avail.x - 2 * margin, avail.y - 2 * margin - 18 * f.scale};
  f.corner = {std::floor(top.x), std::floor(top.y)};
  // Never smaller than the rank's number written in it.
  f.node_r = std::clamp(std::min(f.size.x, f.size.y) * (s.world > 16 ? 0.035f : 0.07f),
                        0.7f * ImGui::GetFontSize(), 40.0f * f.scale);
  return f;
}

// Links: ring neighbours (ring layout) and every pair a message used (32 ranks talking to
// each other: 496 of them), for an image rendered only when they change (line_layer.h).
std::vector<LayerLine> link_lines(const Frame& f) {
  const Snapshot& s = f.s;
  std::set<std::pair<int, int>> used;
  for (const MessageView& m : s.messages)
    if (m.src != m.dst) used.insert({std::min(m.src, m.dst), std::max(m.src, m.dst)});
  if (f.layout == Layout::ring)
    for (int r = 0; r < s.world && s.world > 1; ++r)
      used.insert({std::min(r, (r + 1) % s.world), std::max(r, (r + 1) % s.world)});
  std::vector<LayerLine> lines;
  for (const auto& [a, b] : used) {
    const bool ring = f.layout == Layout::ring && (b == a + 1 || (a == 0 && b == s.world - 1));
    const bool slow = s.link(a, b).slow || s.link(b, a).slow;
    const ImVec2 pa = f.at(a), pb = f.at(b);
    lines.push_back({.ax = pa.x - f.corner.x,
                     .ay = pa.y - f.corner.y,
                     .bx = pb.x - f.corner.x,
                     .by = pb.y - f.corner.y,
                     .colour = slow   ? f.pal.link_slow
                               : ring ? f.pal.link_ring
                                      : f.pal.link,
                     .width = (slow   ? 3.0f
                               : ring ? 2.0f
                                      : 1.0f) *
                              f.scale});
  }
  return lines;
}

// The packets in flight: discs for the texture (disc_layer.h: a software renderer pays dearly
// for a thousand small circles), marks (outline, label) to draw over them as shapes, and
// the one under the mouse.
struct Packets {
  struct Mark {
    ImVec2 at;
    float r;
    bool selected;
    std::string label;  // drawn when not empty
  };
  std::vector<Disc> discs;
  std::vector<Mark> marks;
  int hovered = -1;
};

Packets packets_in_flight(const Frame& f) {
  const Snapshot& s = f.s;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float offset = 0.012f;
  const bool labels = s.in_flight.size() <= 64;
  Packets out;
  out.discs.reserve(s.in_flight.size());
  float hovered_d2 = 1e30f;
  for (int index : s.in_flight) {
    const MessageView& m = s.messages[index];
    if (m.src == m.dst) continue;
    double p = packet_progress(m.send_s, m.arrive_s, s.now_s);
    if (m.estimated) p = std::min(p, 0.9);  // not received yet: wait at the door
    // Travel between the rims of the two circles, so a packet is never hidden by a rank.
    const float r = packet_radius(m.bytes) * f.scale;
    const ImVec2 a = f.at(m.src), b = f.at(m.dst);
    const float len = std::hypot(b.x - a.x, b.y - a.y), inset = f.node_r + r + 1;
    const float k = len > 2 * inset ? inset / len : 0.5f;
    const Vec2 from{a.x + (b.x - a.x) * k, a.y + (b.y - a.y) * k};
    const Vec2 to{b.x - (b.x - a.x) * k, b.y - (b.y - a.y) * k};
    const Vec2 q = packet_position(from, to, p, offset * std::min(f.size.x, f.size.y));
    const ImVec2 at{q.x, q.y};
    out.discs.push_back({at.x - f.corner.x, at.y - f.corner.y, r, colour_for_op(m.op)});
    const bool selected = index == s.view.selected_message;
    std::string label = labels ? packet_label(m) : std::string();
    if (selected || !label.empty()) out.marks.push_back({at, r, selected, std::move(label)});
    const float dx = mouse.x - at.x, dy = mouse.y - at.y, d2 = dx * dx + dy * dy;
    if (d2 <= (r + 4) * (r + 4) && d2 < hovered_d2) {
      out.hovered = index;
      hovered_d2 = d2;
    }
  }
  return out;
}

// The links' image with the packets painted over it, drawn as one (without a framebuffer
// object, the links as shapes under the packets); then the packets' marks.
void draw_links_and_packets(const Frame& f, const Packets& packets, TopologyLayers& layers) {
  const std::vector<LayerLine> lines = link_lines(f);
  const LineLayerPixels links = layers.links.pixels(f.avail, lines);
  if (!links.image) draw_lines(f.dl, f.corner, lines);
  layers.packets.draw(f.dl, f.corner, f.avail, packets.discs, links.image, links.version);
  for (const Packets::Mark& mark : packets.marks) {
    if (mark.selected) f.dl->AddCircle(mark.at, mark.r + 3, f.pal.selection, 16, 2.5f);
    if (!mark.label.empty())
      f.dl->AddText({mark.at.x + mark.r + 2, mark.at.y - mark.r - 2}, f.pal.text,
                    mark.label.c_str());
  }
}

void draw_rank(const Frame& f, int r) {
  const RankView& rv = f.s.ranks[r];
  const ImVec2 c = f.at(r);
  const Palette& pal = f.pal;
  const Rgba fill = rv.crashed           ? pal.node_crashed
                    : rv.straggler > 1.0 ? pal.node_straggler
                                         : pal.node;
  f.dl->AddCircleFilled(c, f.node_r, fill, 32);
  f.dl->AddCircle(c, f.node_r, rv.computing ? pal.node_busy : pal.node_outline, 32,
                  (rv.computing ? 4.0f : 1.5f) * f.scale);
  const std::string label = std::to_string(r);
  const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
  f.dl->AddText({c.x - ts.x / 2, c.y - ts.y / 2}, text_colour_on(fill), label.c_str());
  std::string below = rv.step > 0 ? fmt::format("step {}", rv.step) : "";
  if (rv.straggler > 1.0)
    below += fmt::format("{}x{:.3g} slower", below.empty() ? "" : " ", rv.straggler);
  if (rv.crashed) {
    const float k = f.node_r * 0.7f;
    f.dl->AddLine({c.x - k, c.y - k}, {c.x + k, c.y + k}, pal.link_slow, 4 * f.scale);
    f.dl->AddLine({c.x - k, c.y + k}, {c.x + k, c.y - k}, pal.link_slow, 4 * f.scale);
    below = "crashed";
  }
  if (!below.empty() && f.s.world <= 16) {
    const ImVec2 bs = ImGui::CalcTextSize(below.c_str());
    f.dl->AddText({c.x - bs.x / 2, c.y + f.node_r + 2}, pal.dim_text, below.c_str());
  }
}

// Caption: the network as the run describes it, time, what is in flight; legend: the
// operations on screen.
void draw_caption_and_legend(const Frame& f) {
  const Snapshot& s = f.s;
  const std::string link = s.network.empty() ? "links as recorded" : s.network;
  const std::string caption =
      fmt::format("{} layout  |  {}  |  {} in flight  |  t = {} ({} time)", to_string(f.layout),
                  link, s.in_flight.size(), format_seconds(s.now_s),
                  s.time_base == TimeBase::model ? "model" : "network");
  f.dl->AddText({f.top.x + 6, f.top.y + f.avail.y - 20 * f.scale}, f.pal.dim_text, caption.c_str());
  std::set<const char*> ops;
  for (int index : s.in_flight)
    ops.insert(s.messages[index].op);
  float y = f.top.y + 4;
  for (const char* op : ops) {
    f.dl->AddCircleFilled({f.top.x + 10, y + 8}, 5 * f.scale, colour_for_op(op));
    f.dl->AddText({f.top.x + 20 * f.scale, y}, f.pal.text, op);
    y += 18 * f.scale;
  }
}

}  // namespace

void draw_topology(const Snapshot& s, Commands& commands, TopologyLayers& layers) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  if (avail.x < 20 || avail.y < 20) return;
  if (s.world == 0) {
    ImGui::TextUnformatted("No ranks yet: start a run or open a trace.");
    return;
  }
  const Frame f = frame_of(s, top, avail);
  const Packets packets = packets_in_flight(f);
  draw_links_and_packets(f, packets, layers);
  for (int r = 0; r < s.world; ++r)
    draw_rank(f, r);
  draw_caption_and_legend(f);
  ImGui::InvisibleButton("topology_canvas", avail);
  if (packets.hovered >= 0 && ImGui::IsItemHovered()) {
    message_tooltip(s, s.messages[packets.hovered]);
    if (ImGui::IsItemClicked())
      commands.push(Command{.kind = CommandKind::select_message, .index = packets.hovered});
  }
}

}  // namespace dsgd::gui
