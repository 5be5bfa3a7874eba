// The rules of dsgd's network model that apply to one directed link, shared by every
// backend that models the network (simulated nodes' Network, SimGrid's fabric), so a
// scenario means the same on both: a link's parameters after the node and link overrides
// and, between racks, the trunk; and each message's draws of jitter and loss, in send order
// on its link, deterministic for a seed.
#pragma once

#include <cstdint>

#include "sim/network.h"

namespace dsgd::sim {

// The rack of `rank` when `world` ranks are split into `racks` contiguous racks.
int rack_of(int rank, int racks, int world);

// The link src -> dst: the default, then the node overrides, then the link overrides, each
// in file order (the trunk not included).
LinkSpec overridden_link(const NetworkConfig& config, int src, int dst);

// `pair` (overridden_link's) as a message from src to dst meets it: on the racks topology,
// between two racks, the trunk's latency added and the slower of the two bandwidths.
LinkSpec through_trunk(const NetworkConfig& config, int world, int src, int dst, LinkSpec pair);

// What one message's draws add on its link: jitter, and a retransmission timeout for each
// time it is lost (at most 16).
struct LinkDraw {
  double extra_s = 0;
  int retransmits = 0;
};
// The state the draws of link src -> dst start from.
uint64_t link_rng_seed(uint64_t seed, int world, int src, int dst);
// The next message's draws on a link with parameters `link`, from its state `rng`.
LinkDraw draw_delay(const LinkSpec& link, double rto_s, uint64_t& rng);

}  // namespace dsgd::sim
