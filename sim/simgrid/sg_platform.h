// The SimGrid platform of a run: one host per rank, at its node's flop rate, joined as the
// run's NetworkConfig says. mesh: each host's link is a fat pipe (every flow gets the whole
// bandwidth, as a private link per pair would give it); switch: each host has an uplink and
// a downlink shared by its flows, at its node's bandwidth; racks: the hosts of each rack on
// fat pipes (a mesh), and between each ordered pair of racks one shared trunk; fat-tree,
// torus, dragonfly: SimGrid's cluster zones in the shape sim/cluster_shape.h resolves,
// every link full duplex at --bandwidth. Under CM02 the links carry no latency: the fabric
// adds it to each message (sg_fabric.h; on the cluster topologies, once per link of its
// route), so a message takes latency + bytes / bandwidth when nothing else shares its
// links, as dsgd's cost model says; under LV08 the links carry it (build_platform). Where a
// pair's link has a bandwidth of its own (a per-link or per-node override), the fabric
// scales each of its transfers' sizes to take, alone on its route, the time the pair's
// bandwidth gives (SimGrid 3.32 has no rate limit for host-to-host transfers). Once per
// simulation, before Engine::run.
#pragma once

#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/cluster.h"

namespace dsgd::sim::sg {

// UsageError for what the SimGrid backend does not model (overrides on the cluster
// topologies or under LV08), naming the setting.
void check_supported(const ClusterOptions& options, bool lv08);

// "0 = unlimited" has no SimGrid equivalent: a bandwidth no transfer notices (1 EB/s).
constexpr double kUnlimitedBps = 1e18;

struct SgPlatform {
  std::vector<simgrid::s4u::Host*> hosts;  // by rank
  // The run's network: each pair's link (sim/link_rules.h: overrides, trunk, jitter, loss)
  // and the outages.
  NetworkConfig network;
  // A message's latency: its pair's link's (mesh, switch, racks: end to end, as on
  // simulated nodes), or --latency for each link of its route (the cluster topologies:
  // latency_per_link), or none from the fabric (latency_in_links: LV08's links carry it).
  bool latency_per_link = false;
  bool latency_in_links = false;
  bool pair_bandwidths = false;  // a pair's bandwidth may differ from its route's
};

// latency_in_links: the links carry the latency (mesh and switch: half on each host's link;
// the cluster topologies: each link's), for SimGrid's LV08 model to scale it, and the
// platform's messages get none from the fabric; a pair's messages then pay it one after
// another instead of pipelining.
SgPlatform build_platform(const ClusterOptions& options, bool latency_in_links = false);

}  // namespace dsgd::sim::sg
