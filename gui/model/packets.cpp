// Sections: [labels] [placing: one packet, merging, the labels' places] [caption].
#include "gui/model/packets.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "gui/model/message_text.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {

// ---------------------------------------------------------------------------------------
// [labels]
// ---------------------------------------------------------------------------------------

namespace {

// "rs 2/3": a phase's word and its step within the phase, when it has more than one.
std::string stepped(const char* word, const MessageView& m) {
  if (m.phase_step < 0 || m.phase_steps <= 1) return word;
  return fmt::format("{} {}/{}", word, m.phase_step + 1, m.phase_steps);
}

}  // namespace

std::string packet_label(const MessageView& m) {
  if (m.chunk >= 0)
    return m.segments > 1 ? fmt::format("c{}.{}", m.chunk, m.segment) : fmt::format("c{}", m.chunk);
  switch (m.phase) {
    case Phase::reduce_scatter:
      return stepped("rs", m);
    case Phase::all_gather:
      return stepped("ag", m);
    case Phase::exchange:
      return stepped("ex", m);
    case Phase::reduce:
      return stepped(tr("reduce"), m);
    case Phase::broadcast:
      return stepped(tr("bcast"), m);
    case Phase::round:
      return stepped(tr("round"), m);
    case Phase::fold:
      return tr("fold");
    case Phase::unfold:
      return tr("unfold");
    case Phase::to_root:
      return tr("to root");
    case Phase::from_root:
      return tr("from root");
    case Phase::p2p:
      return fmt::format("{} {}", tr("tag"), m.tag);
    case Phase::unknown:
      break;
  }
  return "?";
}

float packet_radius(uint64_t bytes, float font_px, bool crowded) {
  const double b = std::max<double>(1.0, static_cast<double>(bytes));
  // 64 B -> 0, 64 MB -> 1
  const double size = std::clamp((std::log2(b) - 6.0) / 20.0, 0.0, 1.0);
  return static_cast<float>(font_px * (crowded ? 0.3 + 0.15 * size : 0.5 + 0.25 * size));
}

// ---------------------------------------------------------------------------------------
// [placing]
// ---------------------------------------------------------------------------------------

namespace {

constexpr float kLane = 1.2f;   // each direction keeps this many radii left of the link
constexpr float kMerge = 1.5f;  // packets closer than this many radii are one mark

struct PlacedPacket {
  int index;  // into Snapshot::messages
  double progress;
  Vec2 at, dir;
  float r;
};

// Where message `index` is drawn: between the rims of its ranks' circles (its tip short of
// the receiver's), at its progress, in its direction's lane.
PlacedPacket place_one(const Snapshot& s, const PacketFrame& f, int index, bool crowded) {
  const MessageView& m = s.messages[index];
  double p = packet_progress(m.depart_s, m.arrive_s, s.now_s);
  if (m.estimated) p = std::min(p, 0.9);  // not received (yet): wait at the door
  const float r = packet_radius(m.bytes, f.font_px, crowded);
  const Vec2 a = f.ranks[m.src], b = f.ranks[m.dst];
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
  const Vec2 dir = len > 0 ? Vec2{dx / len, dy / len} : Vec2{1, 0};
  const float back = f.node_r + r + 1, front = f.node_r + kPacketTip * r + 1;
  Vec2 from = a, to = b;
  if (len > back + front) {
    from = {a.x + dir.x * back, a.y + dir.y * back};
    to = {b.x - dir.x * front, b.y - dir.y * front};
  } else {
    from = to = {(a.x + b.x) / 2, (a.y + b.y) / 2};
  }
  return {index, p, packet_position(from, to, p, kLane * r), dir, r};
}

// The label of messages drawn as one: theirs when they agree, else the chunk or the phase
// they share, else the front one's.
std::string group_label(const Snapshot& s, const std::vector<PlacedPacket>& group) {
  const MessageView& front = s.messages[group.front().index];
  std::string label = packet_label(front);
  bool same_label = true, same_chunk = front.chunk >= 0, same_phase = true;
  for (const PlacedPacket& p : group) {
    const MessageView& m = s.messages[p.index];
    same_label = same_label && packet_label(m) == label;
    same_chunk = same_chunk && m.chunk == front.chunk;
    same_phase = same_phase && m.phase == front.phase;
  }
  if (same_label) return label;
  if (same_chunk) return fmt::format("c{}", front.chunk);
  if (!same_phase) return label;
  MessageView phase_only = front;
  phase_only.phase_step = -1;
  return packet_label(phase_only);
}

// What goes wrong with a mark's messages, for its text.
std::string mark_note(const PacketMark& mark) {
  return delivery_note(mark.retransmits, mark.lost);
}

PacketMark mark_of(const Snapshot& s, const std::vector<PlacedPacket>& group, bool lost,
                   bool labelled) {
  const PlacedPacket& front = group.front();
  const int count = static_cast<int>(group.size());
  PacketMark mark{.message = front.index,
                  .count = count,
                  .at = front.at,
                  .dir = front.dir,
                  .r = front.r * std::min(1.35f, 1.0f + 0.08f * std::log2(float(count))),
                  .lost = lost};
  for (const PlacedPacket& p : group)
    mark.retransmits = std::max(mark.retransmits, s.messages[p.index].retransmits);
  if (!labelled) return mark;
  mark.label = group_label(s, group);
  if (count > 1) mark.badge = fmt::format("x{}", count);
  mark.note = mark_note(mark);
  return mark;
}

// Marks for `indices` (all lost, or all in flight): per link, front first, each packet
// joins the mark of the one in front when it lies within kMerge radii of it.
void add_marks(const Snapshot& s, const PacketFrame& f, const std::vector<int>& indices, bool lost,
               bool crowded, PacketScene& scene) {
  std::vector<PlacedPacket> placed;
  placed.reserve(indices.size());
  for (int index : indices)
    if (s.messages[index].src != s.messages[index].dst)
      placed.push_back(place_one(s, f, index, crowded));
  std::sort(placed.begin(), placed.end(), [&](const PlacedPacket& a, const PlacedPacket& b) {
    const MessageView &ma = s.messages[a.index], &mb = s.messages[b.index];
    return std::tie(ma.src, ma.dst, b.progress, a.index) <
           std::tie(mb.src, mb.dst, a.progress, b.index);
  });
  std::vector<PlacedPacket> group;
  const auto flush = [&] {
    if (!group.empty()) scene.marks.push_back(mark_of(s, group, lost, !crowded));
    group.clear();
  };
  for (const PlacedPacket& p : placed) {
    if (!group.empty()) {
      const MessageView &m = s.messages[p.index], &g = s.messages[group.front().index];
      const float d = std::hypot(p.at.x - group.front().at.x, p.at.y - group.front().at.y);
      if (m.src != g.src || m.dst != g.dst || d >= kMerge * group.front().r) flush();
    }
    group.push_back(p);
  }
  flush();
}

struct Area {
  float x0, y0, x1, y1;
  bool overlaps(const Area& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

bool covers_a_rank(const Area& b, const PacketFrame& f) {
  for (const Vec2& c : f.ranks) {
    const float nx = std::clamp(c.x, b.x0, b.x1), ny = std::clamp(c.y, b.y0, b.y1);
    if (std::hypot(c.x - nx, c.y - ny) < f.node_r) return true;
  }
  return false;
}

// Each mark's text beside it: on the side of its lane, else the other side, else ahead of
// it, behind it, or at a slant; left out where each would cover a rank, another packet or
// a label already placed.
void place_labels(const PacketFrame& f, PacketScene& scene) {
  std::vector<Area> taken;  // the packets', then the labels placed
  for (const PacketMark& m : scene.marks)
    taken.push_back({m.at.x - m.r, m.at.y - m.r, m.at.x + m.r, m.at.y + m.r});
  for (size_t i = 0; i < scene.marks.size(); ++i) {
    PacketMark& mark = scene.marks[i];
    const std::string text = mark.text();
    if (text.empty()) continue;
    const Vec2 size = f.text_size ? f.text_size(text) : Vec2{};
    const Vec2 l{mark.dir.y, -mark.dir.x}, d = mark.dir;  // left of, and along, its way
    const float gap = mark.r + 0.25f * f.font_px, tip = kPacketTip * mark.r + 0.25f * f.font_px;
    constexpr float k = 0.7071f;
    bool placed = false;
    for (const auto& [nx, ny, distance] :
         {std::tuple{l.x, l.y, gap}, std::tuple{-l.x, -l.y, gap}, std::tuple{d.x, d.y, tip},
          std::tuple{-d.x, -d.y, gap}, std::tuple{k * (l.x + d.x), k * (l.y + d.y), tip},
          std::tuple{k * (d.x - l.x), k * (d.y - l.y), tip},
          std::tuple{k * (l.x - d.x), k * (l.y - d.y), gap},
          std::tuple{-k * (l.x + d.x), -k * (l.y + d.y), gap}}) {
      const Vec2 anchor{mark.at.x + nx * distance, mark.at.y + ny * distance};
      const Area box{anchor.x + (nx - 1) / 2 * size.x, anchor.y + (ny - 1) / 2 * size.y,
                     anchor.x + (nx + 1) / 2 * size.x, anchor.y + (ny + 1) / 2 * size.y};
      const auto covers = [&](size_t j) { return j != i && taken[j].overlaps(box); };
      bool covered = covers_a_rank(box, f);
      for (size_t j = 0; j < taken.size() && !covered; ++j)
        covered = covers(j);
      if (covered) continue;
      taken.push_back(box);
      mark.label_at = {box.x0, box.y0};
      placed = true;
      break;
    }
    if (!placed) {
      mark.label.clear();
      mark.badge.clear();
      mark.note.clear();
    }
  }
}

}  // namespace

PacketScene place_packets(const Snapshot& s, const PacketFrame& f) {
  PacketScene scene;
  scene.in_flight = static_cast<int>(s.in_flight.size());
  scene.lost = static_cast<int>(s.lost.size());
  if (static_cast<int>(f.ranks.size()) < s.world) return scene;
  for (int index : s.in_flight)
    scene.to_itself += s.messages[index].src == s.messages[index].dst;
  const bool crowded = scene.in_flight - scene.to_itself + scene.lost > f.max_labels;
  add_marks(s, f, s.lost, true, crowded, scene);
  const size_t lost_marks = scene.marks.size();
  add_marks(s, f, s.in_flight, false, crowded, scene);
  scene.in_flight_marks = static_cast<int>(scene.marks.size() - lost_marks);
  if (!crowded) place_labels(f, scene);
  return scene;
}

std::string PacketMark::text() const {
  std::string t = label;
  for (const std::string* more : {&badge, &note})
    if (!more->empty()) t += (t.empty() ? "" : " ") + *more;
  return t;
}

// ---------------------------------------------------------------------------------------
// [caption]
// ---------------------------------------------------------------------------------------

std::string in_flight_caption(const PacketScene& scene) {
  const int drawn = scene.in_flight - scene.to_itself;
  std::string out;
  if (scene.to_itself > 0 && scene.in_flight_marks != drawn)
    out = fmt::format(fmt::runtime(tr("{} in flight, {} drawn as {} ({} to itself)")),
                      scene.in_flight, drawn, scene.in_flight_marks, scene.to_itself);
  else if (scene.to_itself > 0)
    out = fmt::format(fmt::runtime(tr("{} in flight, {} drawn ({} to itself)")), scene.in_flight,
                      drawn, scene.to_itself);
  else if (scene.in_flight_marks != scene.in_flight)
    out = fmt::format(fmt::runtime(tr("{} in flight, drawn as {}")), scene.in_flight,
                      scene.in_flight_marks);
  else
    out = fmt::format(fmt::runtime(tr("{} in flight")), scene.in_flight);
  if (scene.lost > 0) out += fmt::format(fmt::runtime(tr(", {} lost")), scene.lost);
  return out;
}

}  // namespace dsgd::gui
