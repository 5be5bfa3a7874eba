#include "sim/link_rules.h"

#include <algorithm>

#include "core/data/rng.h"

namespace dsgd::sim {

int rack_of(int rank, int racks, int world) {
  return static_cast<int>(int64_t(rank) * std::max(racks, 1) / world);
}

namespace {

void apply(LinkSpec& l, const LinkOverride& o) {
  if (o.latency_s) l.latency_s = *o.latency_s;
  if (o.bandwidth_Bps) l.bandwidth_Bps = *o.bandwidth_Bps;
  if (o.jitter_s) l.jitter_s = *o.jitter_s;
  if (o.loss) l.loss = *o.loss;
}

}  // namespace

LinkSpec overridden_link(const NetworkConfig& config, int src, int dst) {
  LinkSpec l = config.link;
  for (int pass = 0; pass < 2; ++pass)
    for (const LinkOverride& o : config.overrides) {
      const bool node_override = o.from < 0 || o.to < 0;
      if (node_override == (pass == 0) && (o.from < 0 || o.from == src) &&
          (o.to < 0 || o.to == dst))
        apply(l, o);
    }
  return l;
}

LinkSpec through_trunk(const NetworkConfig& config, int world, int src, int dst, LinkSpec l) {
  if (config.topology != Topology::racks ||
      rack_of(src, config.racks, world) == rack_of(dst, config.racks, world))
    return l;
  l.latency_s += config.trunk.latency_s;
  if (config.trunk.bandwidth_Bps > 0)
    l.bandwidth_Bps = l.bandwidth_Bps > 0 ? std::min(l.bandwidth_Bps, config.trunk.bandwidth_Bps)
                                          : config.trunk.bandwidth_Bps;
  return l;
}

uint64_t link_rng_seed(uint64_t seed, int world, int src, int dst) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + uint64_t(src) * world + dst + 1;
  return data::splitmix64(state);
}

LinkDraw draw_delay(const LinkSpec& link, double rto_s, uint64_t& rng) {
  auto uniform = [&] { return static_cast<double>(data::splitmix64(rng) >> 11) * 0x1.0p-53; };
  LinkDraw d;
  if (link.jitter_s > 0) d.extra_s += uniform() * link.jitter_s;
  if (link.loss > 0)
    for (; d.retransmits < 16 && uniform() < link.loss; ++d.retransmits)
      d.extra_s += rto_s;
  return d;
}

}  // namespace dsgd::sim
