// The SimGrid platform of a run: one host per rank, at its node's flop rate, joined as the
// run's NetworkConfig says. mesh: each host's link is a fat pipe (every flow gets the whole
// bandwidth, as a private link per pair would give it); switch: each host has an uplink and
// a downlink (split duplex) shared by its flows. The links carry no latency: the fabric adds
// it to each message (sg_fabric.h), so a message takes latency + bytes / bandwidth when
// nothing else shares its links, as dsgd's cost model says. Must be called once per
// simulation, before Engine::run.
#pragma once

#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/cluster.h"

namespace dsgd::sim::sg {

// UsageError for what the SimGrid backend does not model (a racks topology, per-link
// overrides, jitter, loss, outages, crashes), naming the setting.
void check_supported(const ClusterOptions& options);

std::vector<simgrid::s4u::Host*> build_platform(const ClusterOptions& options);

}  // namespace dsgd::sim::sg
