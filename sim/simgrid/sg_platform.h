// The SimGrid platform of a run: one host per rank, at its node's flop rate, joined as the
// run's NetworkConfig says. mesh: each host's link is a fat pipe (every flow gets the whole
// bandwidth, as a private link per pair would give it); switch: each host has an uplink and
// a downlink (split duplex) shared by its flows; fat-tree, torus, dragonfly: SimGrid's
// cluster zones in the shape sim/cluster_shape.h resolves, every link full duplex at
// --bandwidth. Under CM02 the links carry no latency: the fabric adds it to each message
// (sg_fabric.h; on the cluster topologies, once per link of its route), so a message takes
// latency + bytes / bandwidth when nothing else shares its links, as dsgd's cost model
// says; under LV08 the links carry it (build_platform). Once per simulation, before
// Engine::run.
#pragma once

#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/cluster.h"

namespace dsgd::sim::sg {

// UsageError for what the SimGrid backend does not model (a racks topology, per-link
// overrides, jitter, loss, outages, crashes), naming the setting.
void check_supported(const ClusterOptions& options);

struct SgPlatform {
  std::vector<simgrid::s4u::Host*> hosts;  // by rank
  // A message's latency: latency_s (mesh, switch: end to end, as on simulated nodes), or
  // latency_s for each link of its route (the cluster topologies: --latency is per hop).
  double latency_s = 0;
  bool latency_per_link = false;
};

// latency_in_links: the links carry the latency (mesh and switch: half on each host's link;
// the cluster topologies: each link's), for SimGrid's LV08 model to scale it, and the
// platform's messages get none from the fabric; a pair's messages then pay it one after
// another instead of pipelining.
SgPlatform build_platform(const ClusterOptions& options, bool latency_in_links = false);

}  // namespace dsgd::sim::sg
