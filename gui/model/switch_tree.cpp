#include "gui/model/switch_tree.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/cluster_shape.h"
#include "sim/link_rules.h"

namespace dsgd::gui {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Where the ring layout puts position `r` of `world` (a fraction of a rank between two), at
// `radius` from the centre: rank 0 at the top, clockwise.
Vec2 on_ring(double r, int world, double radius) {
  const double a = 2 * kPi * r / world - kPi / 2;
  return {static_cast<float>(0.5 + radius * std::cos(a)),
          static_cast<float>(0.5 + radius * std::sin(a))};
}

// Level l's radius of `levels`: the leaves (level 1) near the ranks' circle (0.45), the top
// level near the centre, so that the links between levels run mostly towards the centre.
double radius_of(int l, int levels) {
  return levels <= 1 ? 0.30 : 0.30 - (l - 1) * 0.22 / (levels - 1);
}

uint64_t product(const std::vector<unsigned>& v, size_t from, size_t to) {
  uint64_t p = 1;
  for (size_t i = from; i < to && i < v.size(); ++i)
    p *= v[i];
  return p;
}

// A fat-tree XGFT(h; m; w) (SimGrid's "h;m1,..;w1,..;p1,.."): a node of level l is (A, B),
// A the index of its a-digits a_h..a_{l+1} (a_{l+1} fastest), B of its b-digits b_l..b_1 (b_1
// fastest). A node (A, B) of level l links to the w_{l+1} nodes (A / m_{l+1}, B + k W_l) of
// level l + 1, W_l = w_1 ... w_l. Level 0 is the ranks (A = rank, B = 0). A switch sits above
// the ranks of its subtree, its siblings (the same A) spread over them.
SwitchTree fat_tree(const sim::ClusterShape& shape, int world, int max_switches) {
  const int h = static_cast<int>(shape[0][0]);
  const std::vector<unsigned>& m = shape[1];
  const std::vector<unsigned>& w = shape[2];
  SwitchTree tree;
  std::vector<int> first(static_cast<size_t>(h) + 1, 0);  // index of level l's first switch
  uint64_t total = 0;
  for (int l = 1; l <= h; ++l)
    total += product(m, size_t(l), size_t(h)) * product(w, 0, size_t(l));
  if (total > uint64_t(max_switches)) return {};
  for (int l = 1; l <= h; ++l) {
    first[size_t(l)] = static_cast<int>(tree.switches.size());
    const uint64_t a_count = product(m, size_t(l), size_t(h));
    const uint64_t b_count = product(w, 0, size_t(l));
    const uint64_t subtree = product(m, 0, size_t(l));  // ranks under one A
    for (uint64_t a = 0; a < a_count; ++a)
      for (uint64_t b = 0; b < b_count; ++b) {
        const double start = double(a * subtree);
        const double at = start + double(subtree - 1) * (double(b) + 0.5) / double(b_count);
        tree.switches.push_back(
            on_ring(b_count == 1 || subtree > 1 ? at : start, world, radius_of(l, h)));
        tree.level.push_back(l);
      }
  }
  for (int l = 0; l < h; ++l) {  // links from level l to level l + 1
    const uint64_t a_count = l == 0 ? uint64_t(world) : product(m, size_t(l), size_t(h));
    const uint64_t b_count = product(w, 0, size_t(l));
    const uint64_t b_upper = product(w, 0, size_t(l) + 1);
    for (uint64_t a = 0; a < a_count; ++a)
      for (uint64_t b = 0; b < b_count; ++b)
        for (uint64_t k = 0; k < w[size_t(l)]; ++k) {
          const int upper =
              first[size_t(l) + 1] + int((a / m[size_t(l)]) * b_upper + b + k * b_count);
          if (l == 0)
            tree.uplinks.push_back({int(a), upper});
          else
            tree.trunks.push_back({first[size_t(l)] + int(a * b_count + b), upper});
        }
  }
  return tree;
}

// A switch per rack (the ranks Network puts in it: sim::rack_of) above its ranks, each rack's
// joined to every other's by a trunk; one rack: the centre.
SwitchTree racks(int world, int count, bool trunks) {
  SwitchTree tree;
  std::vector<double> sum(size_t(count), 0);
  std::vector<int> ranks(size_t(count), 0);
  for (int r = 0; r < world; ++r) {
    const int g = sim::rack_of(r, count, world);
    tree.uplinks.push_back({r, g});
    sum[size_t(g)] += r, ++ranks[size_t(g)];
  }
  for (int g = 0; g < count; ++g) {
    tree.switches.push_back(count == 1 ? Vec2{0.5f, 0.5f}
                                       : on_ring(sum[size_t(g)] / std::max(ranks[size_t(g)], 1),
                                                 world, radius_of(1, 2)));
    tree.level.push_back(1);
  }
  for (int a = 0; trunks && a < count; ++a)
    for (int b = a + 1; b < count; ++b)
      tree.trunks.push_back({a, b});
  return tree;
}

}  // namespace

SwitchTree switch_tree(const sim::NetworkConfig& network, int world, int max_switches) {
  if (world < 2) return {};
  switch (network.topology) {
    case sim::Topology::switch_:
      return racks(world, 1, false);
    case sim::Topology::racks: {
      const int count = std::clamp(network.racks, 1, world);
      return count > max_switches ? SwitchTree{} : racks(world, count, true);
    }
    case sim::Topology::fat_tree:
      try {
        return fat_tree(sim::resolve_shape(network.topology, network.shape, world), world,
                        max_switches);
      } catch (const std::exception&) {
        return {};  // a shape the run's world does not fit: drawn without its switches
      }
    default:
      return {};
  }
}

}  // namespace dsgd::gui
