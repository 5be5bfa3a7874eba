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

void draw_topology(const Snapshot& s, Commands& commands, TopologyLayers& layers) {
  const Palette pal = palette_for(s.view.theme);
  const float scale = s.view.ui_scale;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  if (avail.x < 20 || avail.y < 20) return;
  if (s.world == 0) {
    ImGui::TextUnformatted("No ranks yet: start a run or open a trace.");
    return;
  }

  const Layout layout = resolve_layout(s.view.layout, s.algorithm, s.world);
  const std::vector<Vec2> pos = layout_positions(layout, s.world);
  const float margin = 36 * scale;
  const ImVec2 origin{top.x + margin, top.y + margin};
  const ImVec2 size{avail.x - 2 * margin, avail.y - 2 * margin - 18 * scale};
  const float node_r =
      std::clamp(std::min(size.x, size.y) * (s.world > 16 ? 0.035f : 0.07f), 7.0f, 40.0f * scale);

  // Links: ring neighbours (ring layout) and every pair a message used (32 ranks talking to
  // each other: 496 of them), in an image rendered only when they change (line_layer.h).
  std::set<std::pair<int, int>> used;
  for (const MessageView& m : s.messages)
    if (m.src != m.dst) used.insert({std::min(m.src, m.dst), std::max(m.src, m.dst)});
  if (layout == Layout::ring)
    for (int r = 0; r < s.world && s.world > 1; ++r)
      used.insert({std::min(r, (r + 1) % s.world), std::max(r, (r + 1) % s.world)});
  const ImVec2 corner{std::floor(top.x), std::floor(top.y)};
  std::vector<LayerLine> lines;
  for (const auto& [a, b] : used) {
    const bool ring = layout == Layout::ring && (b == a + 1 || (a == 0 && b == s.world - 1));
    const bool slow = s.link(a, b).slow || s.link(b, a).slow;
    const Rgba colour = slow ? pal.link_slow : ring ? pal.link_ring : pal.link;
    const ImVec2 pa = to_screen(pos[a], origin, size), pb = to_screen(pos[b], origin, size);
    lines.push_back({.ax = pa.x - corner.x,
                     .ay = pa.y - corner.y,
                     .bx = pb.x - corner.x,
                     .by = pb.y - corner.y,
                     .colour = colour,
                     .width = (slow   ? 3.0f
                               : ring ? 2.0f
                                      : 1.0f) *
                              scale});
  }

  // Packets in flight (and the selected message wherever it is).
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hovered = -1;
  float hovered_d2 = 1e30f;
  const float offset = 0.012f;
  const bool labels = s.in_flight.size() <= 64;
  // The packets, painted into one texture (disc_layer.h: a software renderer pays dearly
  // for a thousand small circles); their outlines and labels on top, as shapes.
  std::vector<Disc> discs;
  discs.reserve(s.in_flight.size());
  struct Mark {
    ImVec2 at;
    float r;
    bool selected;
    std::string label;  // drawn when not empty
  };
  std::vector<Mark> marks;
  for (int index : s.in_flight) {
    const MessageView& m = s.messages[index];
    if (m.src == m.dst) continue;
    double p = packet_progress(m.send_s, m.arrive_s, s.now_s);
    if (m.estimated) p = std::min(p, 0.9);  // not received yet: wait at the door
    // Travel between the rims of the two circles, so a packet is never hidden by a rank.
    const float r = packet_radius(m.bytes) * scale;
    const ImVec2 a = to_screen(pos[m.src], origin, size), b = to_screen(pos[m.dst], origin, size);
    const float len = std::hypot(b.x - a.x, b.y - a.y), inset = node_r + r + 1;
    const float k = len > 2 * inset ? inset / len : 0.5f;
    const Vec2 from{a.x + (b.x - a.x) * k, a.y + (b.y - a.y) * k};
    const Vec2 to{b.x - (b.x - a.x) * k, b.y - (b.y - a.y) * k};
    const Vec2 q = packet_position(from, to, p, offset * std::min(size.x, size.y));
    const ImVec2 at{q.x, q.y};
    discs.push_back({at.x - corner.x, at.y - corner.y, r, colour_for_op(m.op)});
    const bool selected = index == s.view.selected_message;
    std::string label = labels ? packet_label(m) : std::string();
    if (selected || !label.empty()) marks.push_back({at, r, selected, std::move(label)});
    const float dx = mouse.x - at.x, dy = mouse.y - at.y, d2 = dx * dx + dy * dy;
    if (d2 <= (r + 4) * (r + 4) && d2 < hovered_d2) {
      hovered = index;
      hovered_d2 = d2;
    }
  }
  // The links' image with the packets painted over it, drawn as one; without a framebuffer
  // object, the links as shapes under the packets.
  const LineLayerPixels links = layers.links.pixels(avail, lines);
  if (!links.image) draw_lines(dl, corner, lines);
  layers.packets.draw(dl, corner, avail, discs, links.image, links.version);
  for (const Mark& mark : marks) {
    if (mark.selected) dl->AddCircle(mark.at, mark.r + 3, pal.selection, 16, 2.5f);
    if (!mark.label.empty())
      dl->AddText({mark.at.x + mark.r + 2, mark.at.y - mark.r - 2}, pal.text, mark.label.c_str());
  }

  // Ranks.
  for (int r = 0; r < s.world; ++r) {
    const RankView& rv = s.ranks[r];
    const ImVec2 c = to_screen(pos[r], origin, size);
    Rgba fill = rv.crashed ? pal.node_crashed : rv.straggler > 1.0 ? pal.node_straggler : pal.node;
    dl->AddCircleFilled(c, node_r, fill, 32);
    dl->AddCircle(c, node_r, rv.computing ? pal.node_busy : pal.node_outline, 32,
                  (rv.computing ? 4.0f : 1.5f) * scale);
    const std::string label = std::to_string(r);
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    dl->AddText({c.x - ts.x / 2, c.y - ts.y / 2}, rgba(255, 255, 255), label.c_str());
    std::string below = rv.step > 0 ? fmt::format("step {}", rv.step) : "";
    if (rv.straggler > 1.0)
      below += fmt::format("{}x{:.3g} slower", below.empty() ? "" : " ", rv.straggler);
    if (rv.crashed) {
      const float k = node_r * 0.7f;
      dl->AddLine({c.x - k, c.y - k}, {c.x + k, c.y + k}, pal.link_slow, 4 * scale);
      dl->AddLine({c.x - k, c.y + k}, {c.x + k, c.y - k}, pal.link_slow, 4 * scale);
      below = "crashed";
    }
    if (!below.empty() && s.world <= 16) {
      const ImVec2 bs = ImGui::CalcTextSize(below.c_str());
      dl->AddText({c.x - bs.x / 2, c.y + node_r + 2}, pal.dim_text, below.c_str());
    }
  }

  // Caption: the network as the run describes it, time, what is in flight.
  const std::string link = s.network.empty() ? "links as recorded" : s.network;
  const std::string caption =
      fmt::format("{} layout  |  {}  |  {} in flight  |  t = {} ({} time)", to_string(layout), link,
                  s.in_flight.size(), format_seconds(s.now_s),
                  s.time_base == TimeBase::model ? "model" : "network");
  dl->AddText({top.x + 6, top.y + avail.y - 20 * scale}, pal.dim_text, caption.c_str());

  // Legend: the operations on screen.
  std::set<const char*> ops;
  for (int index : s.in_flight)
    ops.insert(s.messages[index].op);
  float y = top.y + 4;
  for (const char* op : ops) {
    dl->AddCircleFilled({top.x + 10, y + 8}, 5 * scale, colour_for_op(op));
    dl->AddText({top.x + 20 * scale, y}, pal.text, op);
    y += 18 * scale;
  }

  ImGui::InvisibleButton("topology_canvas", avail);
  if (hovered >= 0 && ImGui::IsItemHovered()) {
    message_tooltip(s, s.messages[hovered]);
    if (ImGui::IsItemClicked())
      commands.push(Command{.kind = CommandKind::select_message, .index = hovered});
  }
}

}  // namespace dsgd::gui
