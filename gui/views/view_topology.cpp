// The topology view: ranks as circles on a ring, star or grid; the links messages used;
// packets moving along them (packets.h: placed from the snapshot's time base, pointing the
// way they go, merged where they stack, labelled with their phase; colour from the
// operation, a red rim once resent, grey and crossed out when lost) with a tooltip;
// stragglers, crashed ranks and slow links; links an outage holds, dashed red and crossed;
// a partition's groups, ringed in their colours and named. Sizes follow the font.
// Sections: [frame] [links] [packets] [ranks and faults] [caption and legend] [view].
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <imgui.h>

#include "core/io/trace_summary.h"
#include "gui/model/contrast.h"
#include "gui/model/packets.h"
#include "gui/model/switch_tree.h"
#include "gui/views/disc_layer.h"
#include "gui/views/line_layer.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

// ---------------------------------------------------------------------------------------
// [frame]
// ---------------------------------------------------------------------------------------

// A partition's groups: colours apart from the operations' and from red (a cut).
constexpr Rgba kGroupColours[] = {rgba(0, 190, 210), rgba(230, 80, 200), rgba(150, 200, 40),
                                  rgba(250, 180, 40)};

Rgba group_colour(size_t group) {
  return kGroupColours[group % std::size(kGroupColours)];
}

ImVec2 to_screen(Vec2 p, ImVec2 origin, ImVec2 size) {
  return {origin.x + p.x * size.x, origin.y + p.y * size.y};
}

// Where this frame draws: the view's box, the ranks' places in it, their radius, the font.
struct Frame {
  const Snapshot& s;
  Palette pal;
  float scale, font;
  ImDrawList* dl;
  ImVec2 top, avail, origin, size, corner;
  Layout layout;
  std::vector<Vec2> pos;
  SwitchTree tree;  // on the ring layout: the network's switches inside it
  float node_r;
  // The caption; a line on the outages while one holds a link; the mark of lost messages
  // once there are some (in the footer: the legend at the top would cover rank 0's name).
  int footer_lines;

  ImVec2 at(int rank) const { return to_screen(pos[rank], origin, size); }
  ImVec2 switch_at(int i) const { return to_screen(tree.switches[size_t(i)], origin, size); }
};

// The least distance between two ranks next to each other (in their order, and a row of a
// grid apart), in pixels.
float spacing(const Frame& f) {
  const int n = static_cast<int>(f.pos.size());
  const int row = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(std::max(n, 1)))));
  float least = 1e30f;
  for (int r = 0; r < n; ++r)
    for (int next : {r + 1, r + row})
      if (next < n && next != r) {
        const ImVec2 a = f.at(r), b = f.at(next);
        least = std::min(least, std::hypot(b.x - a.x, b.y - a.y));
      }
  return least;
}

Frame frame_of(const Snapshot& s, ImVec2 top, ImVec2 avail) {
  Frame f{.s = s,
          .pal = palette_for(s.view.theme),
          .scale = s.view.ui_scale,
          .font = ImGui::GetFontSize(),
          .dl = ImGui::GetWindowDrawList(),
          .top = top,
          .avail = avail};
  f.layout = resolve_layout(s.view.layout, s.algorithm, s.world);
  f.pos = layout_positions(f.layout, s.world);
  if (f.layout == Layout::ring && s.summary.groups < 2)
    f.tree = switch_tree(s.controls.settings.run.cluster.network, s.world);
  f.footer_lines = 2 + (s.links_down.empty() ? 0 : 1) + (s.lost.empty() ? 0 : 1);
  const float margin = 2.2f * f.font;
  f.origin = {top.x + margin, top.y + margin};
  f.size = {avail.x - 2 * margin, avail.y - 2 * margin - f.footer_lines * (f.font + 4)};
  f.corner = {std::floor(top.x), std::floor(top.y)};
  // Big enough for its number and a packet beside it, small enough to leave room between.
  const float wanted = std::min(f.size.x, f.size.y) * (s.world > 16 ? 0.035f : 0.07f);
  f.node_r = std::min(std::clamp(wanted, 1.3f * f.font, 2.5f * f.font), 0.4f * spacing(f));
  return f;
}

// ---------------------------------------------------------------------------------------
// [links]
// ---------------------------------------------------------------------------------------

using Pair = std::pair<int, int>;  // two ranks, the lower first

// The links an outage holds now, both directions as one.
std::set<Pair> cut_pairs(const Snapshot& s) {
  std::set<Pair> cut;
  for (const auto& [a, b] : s.links_down)
    if (a != b && a < s.world && b < s.world) cut.insert({std::min(a, b), std::max(a, b)});
  return cut;
}

LayerLine layer_line(const Frame& f, ImVec2 a, ImVec2 b, Rgba colour, float width) {
  return {.ax = a.x - f.corner.x,
          .ay = a.y - f.corner.y,
          .bx = b.x - f.corner.x,
          .by = b.y - f.corner.y,
          .colour = colour,
          .width = width};
}

// A link that is down: red dashes between the rims, and a cross in the middle.
void add_cut_link(const Frame& f, int a, int b, std::vector<LayerLine>& lines) {
  const ImVec2 pa = f.at(a), pb = f.at(b);
  const float dx = pb.x - pa.x, dy = pb.y - pa.y, len = std::hypot(dx, dy);
  if (len <= 2 * f.node_r) return;
  const float ux = dx / len, uy = dy / len, dash = 0.6f * f.font, gap = 0.4f * f.font;
  const float width = 2.5f * f.scale;
  for (float t = f.node_r; t < len - f.node_r; t += dash + gap) {
    const float e = std::min(t + dash, len - f.node_r);
    lines.push_back(layer_line(f, {pa.x + ux * t, pa.y + uy * t}, {pa.x + ux * e, pa.y + uy * e},
                               f.pal.link_slow, width));
  }
  // The cross off the middle, so that crossing links (a partition's) keep theirs apart.
  const ImVec2 mid{pa.x + 0.4f * dx, pa.y + 0.4f * dy};
  const float k = 0.45f * f.font;
  lines.push_back(
      layer_line(f, {mid.x - k, mid.y - k}, {mid.x + k, mid.y + k}, f.pal.link_slow, 2 * width));
  lines.push_back(
      layer_line(f, {mid.x - k, mid.y + k}, {mid.x + k, mid.y - k}, f.pal.link_slow, 2 * width));
}

// The switches' links, under everything: a rank's to its switch from its rim, and those
// between switches.
std::vector<LayerLine> tree_lines(const Frame& f) {
  std::vector<LayerLine> lines;
  const float width = 1.5f * f.scale;
  for (const auto& [rank, sw] : f.tree.uplinks) {
    const ImVec2 a = f.at(rank), b = f.switch_at(sw);
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
    if (len <= f.node_r) continue;
    const ImVec2 rim{a.x + dx * f.node_r / len, a.y + dy * f.node_r / len};
    lines.push_back(layer_line(f, rim, b, f.pal.grid, width));
  }
  for (const auto& [a, b] : f.tree.trunks)
    lines.push_back(layer_line(f, f.switch_at(a), f.switch_at(b), f.pal.grid, 2 * width));
  return lines;
}

// Links: ring neighbours (ring layout) and every pair a message used (32 ranks talking to
// each other: 496 of them), for an image rendered only when they change (line_layer.h).
// Those an outage holds are drawn cut; all of them while they are few (a partition of 32
// ranks cuts 256), else those drawn anyway.
std::vector<LayerLine> link_lines(const Frame& f) {
  const Snapshot& s = f.s;
  std::set<Pair> used;
  for (const MessageView& m : s.messages)
    if (m.src != m.dst) used.insert({std::min(m.src, m.dst), std::max(m.src, m.dst)});
  if (f.layout == Layout::ring)
    for (int r = 0; r < s.world && s.world > 1; ++r)
      used.insert({std::min(r, (r + 1) % s.world), std::max(r, (r + 1) % s.world)});
  const std::set<Pair> cut = cut_pairs(s);
  std::vector<LayerLine> lines = tree_lines(f);
  for (const Pair& pair : cut)
    if (cut.size() <= 24 || used.count(pair)) add_cut_link(f, pair.first, pair.second, lines);
  for (const auto& [a, b] : used) {
    if (cut.count({a, b})) continue;
    const bool ring = f.layout == Layout::ring && (b == a + 1 || (a == 0 && b == s.world - 1));
    const bool slow = s.link(a, b).slow || s.link(b, a).slow;
    lines.push_back(layer_line(f, f.at(a), f.at(b),
                               slow   ? f.pal.link_slow
                               : ring ? f.pal.link_ring
                                      : f.pal.link,
                               (slow   ? 3.0f
                                : ring ? 2.0f
                                       : 1.0f) *
                                   f.scale));
  }
  return lines;
}

// ---------------------------------------------------------------------------------------
// [packets]
// ---------------------------------------------------------------------------------------

PacketScene packet_scene(const Frame& f) {
  PacketFrame pf{.node_r = f.node_r, .font_px = f.font};
  pf.ranks.reserve(f.s.world);
  for (int r = 0; r < f.s.world; ++r) {
    const ImVec2 c = f.at(r);
    pf.ranks.push_back({c.x, c.y});
  }
  pf.text_size = [](const std::string& text) {
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    return Vec2{size.x + 6, size.y + 2};  // with the label's padding
  };
  return place_packets(f.s, pf);
}

// The marks as discs for the layer (disc_layer.h: a software renderer pays dearly for a
// thousand small shapes): a resent packet on a red disc a little larger, a lost one grey.
std::vector<Disc> packet_discs(const Frame& f, const PacketScene& scene) {
  std::vector<Disc> discs;
  discs.reserve(scene.marks.size() + 8);
  for (const PacketMark& mark : scene.marks) {
    const float x = mark.at.x - f.corner.x, y = mark.at.y - f.corner.y;
    const float tip = kPacketTip * mark.r;
    if (mark.retransmits > 0 && !mark.lost) {
      const float rim = mark.r + 0.2f * f.font;
      discs.push_back({x, y, rim, f.pal.link_slow, mark.dir.x * (tip + 0.3f * f.font),
                       mark.dir.y * (tip + 0.3f * f.font)});
    }
    const Rgba colour =
        mark.lost ? f.pal.node_crashed : colour_for_op(f.s.messages[mark.message].op);
    discs.push_back({x, y, mark.r, colour, mark.dir.x * tip, mark.dir.y * tip});
  }
  return discs;
}

// The mark's text on a box of the panel's colour (readable over links and packets): its
// label, its count and what went wrong, in warning red.
void draw_mark_text(const Frame& f, const PacketMark& mark) {
  if (mark.label.empty() && mark.badge.empty() && mark.note.empty()) return;
  const ImVec2 size = ImGui::CalcTextSize(mark.text().c_str());
  const ImVec2 at{mark.label_at.x, mark.label_at.y};
  f.dl->AddRectFilled(at, {at.x + size.x + 6, at.y + size.y + 2},
                      (f.pal.panel & 0x00ffffffu) | 0xd0000000u, 0.2f * f.font);
  float x = at.x + 3;
  const auto piece = [&](const std::string& text, Rgba colour) {
    if (text.empty()) return;
    f.dl->AddText({x, at.y + 1}, colour, text.c_str());
    x += ImGui::CalcTextSize((text + " ").c_str()).x;
  };
  piece(mark.label, f.pal.text);
  piece(mark.badge, f.pal.node_busy);
  piece(mark.note, f.pal.link_slow);
}

// The links' image with the packets painted over it, drawn as one (without a framebuffer
// object, the links as shapes under the packets); then the marks' crosses and text.
void draw_links_and_packets(const Frame& f, const PacketScene& scene, TopologyLayers& layers) {
  const std::vector<LayerLine> lines = link_lines(f);
  const LineLayerPixels links = layers.links.pixels(f.avail, lines);
  if (!links.image) draw_lines(f.dl, f.corner, lines);
  layers.packets.draw(f.dl, f.corner, f.avail, packet_discs(f, scene), links.image, links.version);
  for (const PacketMark& mark : scene.marks) {
    const ImVec2 at{mark.at.x, mark.at.y};
    if (mark.lost) {
      const float k = mark.r * 0.9f, w = 0.18f * f.font;
      f.dl->AddLine({at.x - k, at.y - k}, {at.x + k, at.y + k}, f.pal.link_slow, w);
      f.dl->AddLine({at.x - k, at.y + k}, {at.x + k, at.y - k}, f.pal.link_slow, w);
    }
    if (mark.message == f.s.view.selected_message)
      f.dl->AddCircle(at, mark.r + 3, f.pal.selection, 16, 2.5f);
    draw_mark_text(f, mark);
  }
}

// The mark under the mouse (its front message), or -1.
int hovered_message(const PacketScene& scene) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hovered = -1;
  float best = 1e30f;
  for (const PacketMark& mark : scene.marks) {
    const float dx = mouse.x - mark.at.x, dy = mouse.y - mark.at.y, d2 = dx * dx + dy * dy;
    if (d2 <= (mark.r + 4) * (mark.r + 4) && d2 < best) {
      hovered = mark.message;
      best = d2;
    }
  }
  return hovered;
}

const PacketMark* mark_of_message(const PacketScene& scene, int message) {
  for (const PacketMark& mark : scene.marks)
    if (mark.message == message) return &mark;
  return nullptr;
}

void message_tooltip(const Snapshot& s, const MessageView& m, const PacketMark* mark) {
  ImGui::BeginTooltip();
  ImGui::Text("%s %d -> %s %d   %s", tr("rank"), m.src, tr("rank"), m.dst, m.op);
  ImGui::Text("%s", fmt::format(fmt::runtime(tr("tag {}, message #{}, {}")), m.tag, m.k,
                                format_bytes(static_cast<double>(m.bytes)))
                        .c_str());
  ImGui::Text("%s %s, %s %s", tr("sent"), format_seconds(m.send_s).c_str(),
              m.estimated ? tr("due about") : tr("arrives"), format_seconds(m.arrive_s).c_str());
  if (m.depart_s > m.send_s)
    ImGui::Text("%s", fmt::format(fmt::runtime(tr("held by a link down until {}")),
                                  format_seconds(m.depart_s))
                          .c_str());
  if (m.phase != Phase::p2p && m.step >= 0)
    ImGui::Text("%s", fmt::format(fmt::runtime(tr("{}, step {} of {}")), tr(to_string(m.phase)),
                                  m.step + 1, m.steps)
                          .c_str());
  if (m.chunk >= 0)
    ImGui::Text("%s", fmt::format(fmt::runtime(tr("chunk {}: values of {} of {} ranks")), m.chunk,
                                  m.contributions, s.world)
                          .c_str());
  else if (m.contributions > 0)
    ImGui::Text("%s", fmt::format(fmt::runtime(tr("carries the values of {} of {} ranks")),
                                  m.contributions, s.world)
                          .c_str());
  if (m.preview_count > 0) {
    std::string values;
    for (int i = 0; i < m.preview_count; ++i)
      values += fmt::format("{}{:.4g}", i ? ", " : "", m.preview[i]);
    ImGui::Text("%s: [%s%s]", tr("first values"), values.c_str(),
                m.bytes / 4 > m.preview_count ? ", ..." : "");
  }
  if (m.retransmits > 0)
    ImGui::TextColored(
        ImVec4(1, 0.35f, 0.35f, 1), "%s",
        fmt::format(fmt::runtime(tr("lost {} times on the way and resent")), m.retransmits)
            .c_str());
  if (m.lost)
    ImGui::TextColored(ImVec4(1, 0.35f, 0.35f, 1), "%s",
                       tr("lost: never received (a rank at either end crashed, or the run "
                          "ended)"));
  if (mark && mark->count > 1)
    ImGui::Text("%s",
                fmt::format(fmt::runtime(tr("{} messages on this link drawn as one")), mark->count)
                    .c_str());
  ImGui::EndTooltip();
}

// ---------------------------------------------------------------------------------------
// [ranks and faults]
// ---------------------------------------------------------------------------------------

void draw_rank(const Frame& f, int r, Rgba halo) {
  const RankView& rv = f.s.ranks[r];
  const ImVec2 c = f.at(r);
  const Palette& pal = f.pal;
  if (halo) f.dl->AddCircle(c, f.node_r + 0.35f * f.font, halo, 32, 0.3f * f.font);
  const Rgba fill = rv.crashed           ? pal.node_crashed
                    : rv.straggler > 1.0 ? pal.node_straggler
                                         : pal.node;
  f.dl->AddCircleFilled(c, f.node_r, fill, 32);
  f.dl->AddCircle(c, f.node_r, rv.computing ? pal.node_busy : pal.node_outline, 32,
                  (rv.computing ? 4.0f : 1.5f) * f.scale);
  const std::string label = std::to_string(r);
  const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
  f.dl->AddText({c.x - ts.x / 2, c.y - ts.y / 2}, text_colour_on(fill), label.c_str());
  std::string below = rv.step > 0 ? fmt::format(fmt::runtime(tr("step {}")), rv.step) : "";
  if (rv.straggler > 1.0)
    below +=
        fmt::format(fmt::runtime(tr("{}x{:.3g} slower")), below.empty() ? "" : " ", rv.straggler);
  if (rv.crashed) {
    const float k = f.node_r * 0.7f;
    f.dl->AddLine({c.x - k, c.y - k}, {c.x + k, c.y + k}, pal.link_slow, 4 * f.scale);
    f.dl->AddLine({c.x - k, c.y + k}, {c.x + k, c.y - k}, pal.link_slow, 4 * f.scale);
    below = tr("crashed");
  }
  const std::string& name =
      r < static_cast<int>(f.s.rank_names.size()) ? f.s.rank_names[r] : std::string();
  if (!name.empty() && f.s.world <= 16) {  // who runs it, above the disc
    const ImVec2 ns = ImGui::CalcTextSize(name.c_str());
    f.dl->AddText({c.x - ns.x / 2, c.y - f.node_r - ns.y - 2}, pal.text, name.c_str());
  }
  if (!below.empty() && f.s.world <= 16) {
    const ImVec2 bs = ImGui::CalcTextSize(below.c_str());
    const float gap = halo ? 0.5f * f.font : 2;
    f.dl->AddText({c.x - bs.x / 2, c.y + f.node_r + gap}, pal.dim_text, below.c_str());
  }
}

// Every rank, ringed in its group's colour while a partition splits them.
// The switches: small squares, the higher levels smaller, over their links.
void draw_switches(const Frame& f) {
  for (size_t i = 0; i < f.tree.switches.size(); ++i) {
    const ImVec2 c = f.switch_at(int(i));
    const float k = f.node_r * (f.tree.level[i] == 1 ? 0.45f : 0.38f);
    f.dl->AddRectFilled({c.x - k, c.y - k}, {c.x + k, c.y + k}, f.pal.panel, 0.2f * k);
    f.dl->AddRect({c.x - k, c.y - k}, {c.x + k, c.y + k}, f.pal.dim_text, 0.2f * k, 0,
                  1.5f * f.scale);
  }
}

void draw_ranks(const Frame& f) {
  std::vector<Rgba> halo(f.s.world, 0);
  for (size_t g = 0; g < f.s.partition.size(); ++g)
    for (int r : f.s.partition[g])
      if (r < f.s.world) halo[r] = group_colour(g);
  for (int r = 0; r < f.s.world; ++r)
    draw_rank(f, r, halo[r]);
}

// The top of the footer's line `line` (0: the first).
float footer_y(const Frame& f, int line) {
  return f.top.y + f.avail.y - (f.footer_lines - line) * (f.font + 4);
}

// `text` cut to `width` pixels, with "..." where it was cut.
std::string fitted(std::string text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  while (!text.empty() && ImGui::CalcTextSize((text + "...").c_str()).x > width) {
    text.pop_back();
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
      text.pop_back();  // a whole UTF-8 character
  }
  return text + "...";
}

// "partition: {0,1} | {2,3} until 300 ms" (each group in its colour), or "links down:
// 0-1, 2-3 until 300 ms": the footer's first line.
void draw_outages(const Frame& f) {
  const Snapshot& s = f.s;
  if (s.links_down.empty()) return;
  ImVec2 at{f.top.x + 6, footer_y(f, 0)};
  const auto piece = [&](const std::string& text, Rgba colour) {
    f.dl->AddText(at, colour, text.c_str());
    at.x += ImGui::CalcTextSize(text.c_str()).x;
  };
  if (!s.partition.empty()) {
    piece(std::string(tr("partition:")) + " ", f.pal.link_slow);
    for (size_t g = 0; g < s.partition.size(); ++g) {
      if (g) piece(" | ", f.pal.text);
      piece(fmt::format("{{{}}}", fmt::join(s.partition[g], ",")), group_colour(g));
    }
  } else {
    std::vector<std::string> names;
    for (const auto& [a, b] : cut_pairs(s))
      names.push_back(fmt::format("{}-{}", a, b));
    if (names.size() > 6) names.resize(6), names.back() = "...";
    piece(fmt::format("{} {}", tr("links down:"), fmt::join(names, ", ")), f.pal.link_slow);
  }
  if (s.links_down_until_s < 1e299)
    piece(fmt::format(fmt::runtime(tr(" until {}")), format_seconds(s.links_down_until_s)),
          f.pal.link_slow);
  else
    piece(std::string(" ") + tr("(for good)"), f.pal.link_slow);
}

// ---------------------------------------------------------------------------------------
// [caption and legend]
// ---------------------------------------------------------------------------------------

// Where the nodes are drawn, in words that do not read as an algorithm: "ring layout" under
// the tree all_reduce read as a contradiction.
const char* layout_caption(Layout layout) {
  switch (layout) {
    case Layout::star:
      return tr("rank 0 in the middle");
    case Layout::grid:
      return tr("nodes on a grid");
    default:
      return tr("nodes on a circle");
  }
}

// Caption, two lines: what is in flight and the time; the layout and the network as the
// run describes it. Legend: the operations on screen and the mark of resent messages at the
// top, while there are some; the mark of lost ones in the footer, above the caption.
void draw_caption_and_legend(const Frame& f, const PacketScene& scene) {
  const Snapshot& s = f.s;
  const std::string link = s.network.empty() ? tr("links as recorded") : s.network;
  const float width = f.avail.x - 12;
  const std::string now =
      fmt::format("{}  |  t = {} ({})", in_flight_caption(scene), format_seconds(s.now_s),
                  s.time_base == TimeBase::model ? tr("model time") : tr("network time"));
  std::string network = fmt::format("{}{}  |  {}", layout_caption(f.layout),
                                    f.tree.empty() ? "" : tr(", switches inside"), link);
  if (s.summary.groups >= 2)  // what a disc stands for, first: where the line is cut, it stays
    network =
        fmt::format(fmt::runtime(tr("nodes are groups of ranks (node 1: ranks {}-{})  |  {}")),
                    summary_group_first(1, s.summary.ranks, s.summary.groups),
                    summary_group_first(2, s.summary.ranks, s.summary.groups) - 1, network);
  f.dl->AddText({f.top.x + 6, footer_y(f, f.footer_lines - 2)}, f.pal.text,
                fitted(now, width).c_str());
  f.dl->AddText({f.top.x + 6, footer_y(f, f.footer_lines - 1)}, f.pal.dim_text,
                fitted(network, width).c_str());
  std::set<const char*> ops;
  bool resent = false;
  for (int index : s.in_flight) {
    ops.insert(s.messages[index].op);
    resent = resent || s.messages[index].retransmits > 0;
  }
  const float r = 0.35f * f.font, x = f.top.x + 4 + r;
  float y = f.top.y + 4;
  const auto entry = [&](Rgba colour, const char* text) {
    f.dl->AddCircleFilled({x, y + f.font / 2}, r, colour);
    f.dl->AddText({x + r + 6, y}, f.pal.text, text);
    y += f.font + 2;
  };
  for (const char* op : ops)
    entry(colour_for_op(op), op);
  if (resent) entry(f.pal.link_slow, tr("red rim: lost on the way, resent"));
  if (s.lost.empty()) return;
  y = footer_y(f, f.footer_lines - 3);
  entry(f.pal.node_crashed, tr("grey, crossed: lost, never received"));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// [view]
// ---------------------------------------------------------------------------------------

void draw_topology(const Snapshot& s, Commands& commands, TopologyLayers& layers) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  if (avail.x < 20 || avail.y < 20) return;
  if (s.world == 0) {
    ImGui::TextWrapped(
        "%s", tr(s.classroom.active ? "No run yet: the laptops that join are listed in the "
                                      "controls, which start a training run or a lesson on them."
                                    : "No ranks yet: start a run or open a trace."));
    return;
  }
  const Frame f = frame_of(s, top, avail);
  const PacketScene scene = packet_scene(f);
  draw_links_and_packets(f, scene, layers);
  draw_switches(f);
  draw_ranks(f);
  draw_outages(f);
  draw_caption_and_legend(f, scene);
  ImGui::InvisibleButton("topology_canvas", avail);
  const int hovered = hovered_message(scene);
  if (hovered >= 0 && ImGui::IsItemHovered()) {
    message_tooltip(s, s.messages[hovered], mark_of_message(scene, hovered));
    if (ImGui::IsItemClicked())
      commands.push(Command{.kind = CommandKind::select_message, .index = hovered});
  }
}

}  // namespace dsgd::gui
