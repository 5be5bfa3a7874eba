// The switches the topology view draws inside the ring of ranks (gui/model/switch_tree.h):
// a switch topology's one, a rack's, and a fat-tree's levels wired as SimGrid's XGFT, each
// switch above the ranks it serves; none for a mesh or a torus, or when too many to see.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>

#include "gui/model/switch_tree.h"
#include "sim/network.h"

using namespace dsgd;
using namespace dsgd::gui;

namespace {

sim::NetworkConfig network_of(sim::Topology topology, const std::string& shape = "") {
  sim::NetworkConfig n;
  n.topology = topology;
  n.shape = shape;
  return n;
}

double from_centre(Vec2 p) {
  return std::hypot(p.x - 0.5, p.y - 0.5);
}

double distance(Vec2 a, Vec2 b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

}  // namespace

TEST_CASE("a switch topology and racks: a switch above each group of ranks", "[gui]") {
  const SwitchTree one = switch_tree(network_of(sim::Topology::switch_), 5);
  REQUIRE(one.switches.size() == 1);
  CHECK(from_centre(one.switches[0]) < 1e-6);
  CHECK(one.uplinks.size() == 5);
  CHECK(one.trunks.empty());
  sim::NetworkConfig racks = network_of(sim::Topology::racks);
  racks.racks = 2;
  const SwitchTree two = switch_tree(racks, 5);
  REQUIRE(two.switches.size() == 2);
  CHECK(two.trunks == std::vector<std::pair<int, int>>{{0, 1}});
  // Ranks 0-2 in the first rack and 3-4 in the second, as the simulator splits them.
  const std::vector<std::pair<int, int>> uplinks{{0, 0}, {1, 0}, {2, 0}, {3, 1}, {4, 1}};
  CHECK(two.uplinks == uplinks);
  const std::vector<Vec2> ranks = layout_positions(Layout::ring, 5);
  for (const auto& [rank, sw] : two.uplinks)  // nearer its own rack's switch
    CHECK(distance(ranks[size_t(rank)], two.switches[size_t(sw)]) <
          distance(ranks[size_t(rank)], two.switches[size_t(1 - sw)]));
}

TEST_CASE("a fat-tree's switches are wired as SimGrid's XGFT, leaves above their ranks", "[gui]") {
  // 2 levels, 4 ranks per leaf, 4 leaves per spine; one uplink per rank, four per leaf.
  const SwitchTree t = switch_tree(network_of(sim::Topology::fat_tree, "2;4,4;1,4;1,1"), 16);
  REQUIRE(t.switches.size() == 8);
  CHECK(std::count(t.level.begin(), t.level.end(), 1) == 4);
  CHECK(std::count(t.level.begin(), t.level.end(), 2) == 4);
  REQUIRE(t.uplinks.size() == 16);
  for (const auto& [rank, leaf] : t.uplinks)
    CHECK(leaf == rank / 4);
  CHECK(t.trunks.size() == 16);
  std::set<std::pair<int, int>> trunks(t.trunks.begin(), t.trunks.end());
  for (int leaf = 0; leaf < 4; ++leaf)
    for (int spine = 4; spine < 8; ++spine)
      CHECK(trunks.count({leaf, spine}) == 1);
  const std::vector<Vec2> ranks = layout_positions(Layout::ring, 16);
  for (const auto& [rank, leaf] : t.uplinks) {  // the leaf nearest its ranks
    CHECK(from_centre(t.switches[size_t(leaf)]) > from_centre(t.switches[4]));
    for (int other = 0; other < 4; ++other)
      if (other != leaf)
        CHECK(distance(ranks[size_t(rank)], t.switches[size_t(leaf)]) <
              distance(ranks[size_t(rank)], t.switches[size_t(other)]));
  }
}

TEST_CASE("a fat-tree whose ranks have two leaves each", "[gui]") {
  // 4 ranks, 2 per leaf pair: each rank links to 2 leaves, each leaf to 2 of 4 spines.
  const SwitchTree t = switch_tree(network_of(sim::Topology::fat_tree, "2;2,2;2,2;1,1"), 4);
  REQUIRE(t.switches.size() == 8);
  CHECK(t.uplinks.size() == 8);
  CHECK(t.trunks.size() == 8);
  std::map<int, int> children;  // of each switch, ranks or switches
  for (const auto& [rank, sw] : t.uplinks)
    ++children[sw];
  for (const auto& [low, high] : t.trunks)
    ++children[high];
  for (int sw = 0; sw < 8; ++sw)
    CHECK(children[sw] == 2);
}

TEST_CASE("no switch tree for a mesh, a torus or too many switches", "[gui]") {
  CHECK(switch_tree(network_of(sim::Topology::mesh), 8).empty());
  CHECK(switch_tree(network_of(sim::Topology::torus), 8).empty());
  CHECK(switch_tree(network_of(sim::Topology::fat_tree, "2;4,4;1,4;1,1"), 16, 7).empty());
  CHECK(switch_tree(network_of(sim::Topology::fat_tree, "2;4,4;1,4;1,1"), 12).empty());  // 16 hosts
  CHECK_FALSE(switch_tree(network_of(sim::Topology::fat_tree), 8).empty());  // dsgd's shape
}
