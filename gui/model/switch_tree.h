// The switches between the ranks, for the topology view to draw inside the ring of ranks as a
// radial tree: a fat-tree's levels of switches (SimGrid's XGFT: hosts under leaf switches
// under spines, each switch above the ranks it serves), the one switch of a switch topology
// at the centre, and a switch per rack with the trunks between racks. The ranks stay where
// the ring layout puts them, so messages are drawn as before, over the tree. Mesh links
// have no switch; a torus and a dragonfly are not drawn as trees (none is returned).
#pragma once

#include <utility>
#include <vector>

#include "gui/model/layout.h"
#include "sim/network.h"

namespace dsgd::gui {

struct SwitchTree {
  std::vector<Vec2> switches;                // in the unit square, as layout_positions
  std::vector<int> level;                    // each switch's: 1 above the ranks, 2 above those
  std::vector<std::pair<int, int>> uplinks;  // (rank, switch)
  std::vector<std::pair<int, int>> trunks;   // (switch, switch): a level and the next, racks
  bool empty() const { return switches.empty(); }
};

// The tree of `network` for `world` ranks on the ring layout (layout_positions); empty for
// topologies without one, and for more than `max_switches` switches (too many to see).
SwitchTree switch_tree(const sim::NetworkConfig& network, int world, int max_switches = 48);

}  // namespace dsgd::gui
