// The shape of a topology that SimGrid builds as a cluster zone (fat-tree, torus, dragonfly),
// in SimGrid's own notation (its platform files' topo_parameters), and the shape dsgd picks
// from the node count when none is given. Parsing and checking only; sim/simgrid/sg_platform
// builds the zone. Simulated nodes do not model these topologies.
//   fat-tree   "levels;down,...;up,...;count,..."   e.g. 2;4,4;1,4;1,1 (16 hosts)
//   torus      "x,y,z,..."                           e.g. 4,4,4 (64 hosts)
//   dragonfly  "groups,links;chassis,links;routers,links;nodes"   e.g. 3,1;4,1;5,1;2 (120)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/network.h"

namespace dsgd::sim {

// The numbers of each ';'-separated part, in order.
using ClusterShape = std::vector<std::vector<unsigned>>;

// True for fat-tree, torus and dragonfly.
bool is_cluster_topology(Topology t);

// The shape `text` for topology t, checked (parts and counts as above, every number at
// least 1); UsageError naming the form otherwise.
ClusterShape parse_shape(Topology t, const std::string& text);
// How many hosts (leaves) the shape has.
uint64_t shape_hosts(Topology t, const ClusterShape& shape);
std::string shape_text(const ClusterShape& shape);

// The shape a run of `nodes` uses: `text` when given (UsageError when its hosts are not
// `nodes`), otherwise one dsgd picks: a fat-tree of 1 to 3 levels with at most 16 hosts or
// children per switch where the count allows, full bisection (as many links up as down); a
// torus of up to 3 dimensions as equal as the count allows; a dragonfly of 4 factors, the
// largest its routers per chassis (a dragonfly's groups may not outnumber them).
ClusterShape resolve_shape(Topology t, const std::string& text, int nodes);

// "fat-tree 3;16,16,16;1,16,16;1,1,1" for display: the topology and its shape, the one given
// or the one dsgd picks for `nodes`.
std::string describe_topology(const NetworkConfig& network, int nodes);

// A --topology value or a scenario's topology: a name, and for the cluster topologies an
// optional ":shape" (UsageError for an unknown name or a malformed shape). And back.
void set_topology(NetworkConfig& network, const std::string& text);
std::string topology_text(const NetworkConfig& network);

}  // namespace dsgd::sim
