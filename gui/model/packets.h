// Packets on screen: where the topology view draws the messages in flight and those lost, in
// pixels, pointing the way they travel, merged into one mark with a count where they would
// cover each other on one link, and labelled with their place in their collective (the
// fold's phase, step and chunk: "c3", "rs 2/3", "reduce 1/3", "to root"). A label that would
// cover another label or a rank is left out (the tooltip still has it).
// Not drawing: no ImGui here, so the tests check what the view draws.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gui/model/layout.h"
#include "gui/model/snapshot.h"

namespace dsgd::gui {

// A message's short label, in the window's language (tr()): the ring's chunk ("c3"; "c3.1"
// for its second segment), its phase and step in that phase ("rs 2/3", "ag 1/3", "reduce
// 1/3", "bcast 2/3", "round 1/2"), "fold", "unfold", "to root", "from root"; a user
// message its tag ("tag 5").
std::string packet_label(const MessageView& m);

// A packet's radius in pixels: half a line of text (`font_px`) for a small message, up to
// three quarters of one for 64 MB; smaller when `crowded` (too many to label).
float packet_radius(uint64_t bytes, float font_px, bool crowded);

// A packet is drawn as a drop: a disc and a tip this many radii ahead of its centre.
inline constexpr float kPacketTip = 2.1f;

struct PacketMark {
  int message = -1;     // the one in front (index into Snapshot::messages): label, tooltip
  int count = 1;        // how many messages it stands for
  Vec2 at, dir;         // centre and unit direction of travel, pixels
  float r = 0;          // radius, pixels
  bool lost = false;    // its messages never arrive (MessageView::lost)
  int retransmits = 0;  // the most any of its messages was lost and sent again
  // Its text, "" when left out (crowded, or no room): packet_label, the count of a merged
  // mark ("x16"), and what went wrong ("lost", "resent", "resent 2x"), in that order.
  std::string label, badge, note;
  Vec2 label_at;  // the text's top-left corner, pixels

  std::string text() const;  // label, badge and note, joined by spaces
};

struct PacketScene {
  std::vector<PacketMark> marks;  // lost ones first, then those in flight
  int in_flight = 0;              // Snapshot::in_flight
  int to_itself = 0;              // of them, from a rank to itself: not drawn
  int in_flight_marks = 0;        // marks the others are drawn as
  int lost = 0;                   // Snapshot::lost
};

// What the scene needs of the view.
struct PacketFrame {
  std::vector<Vec2> ranks;                            // centres, pixels
  float node_r = 20;                                  // the ranks' radius, pixels
  float font_px = 16;                                 // a line of text, pixels
  std::function<Vec2(const std::string&)> text_size;  // a label's box, pixels
  int max_labels = 64;  // more in flight than this: no labels, smaller packets
};

PacketScene place_packets(const Snapshot& s, const PacketFrame& f);

// The topology caption's count, in the window's language: "8 in flight"; "16 in flight,
// drawn as 3" when marks were merged; "8 in flight, 7 drawn (1 to itself)"; then ", 3 lost".
std::string in_flight_caption(const PacketScene& scene);

}  // namespace dsgd::gui
