// R = world size. Resources: mesh and racks keep one per directed pair (R*R, index
// src*R+dst); switch keeps an uplink and a downlink per node; racks add one trunk per
// direction between each pair of racks.
#include "sim/network.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/link_rules.h"

namespace dsgd::sim {

const char* to_string(Topology t) {
  switch (t) {
    case Topology::mesh:
      return "mesh";
    case Topology::switch_:
      return "switch";
    case Topology::racks:
      return "racks";
    case Topology::fat_tree:
      return "fat-tree";
    case Topology::torus:
      return "torus";
    case Topology::dragonfly:
      return "dragonfly";
  }
  return "?";
}

Topology parse_topology(const std::string& text) {
  if (text == "mesh") return Topology::mesh;
  if (text == "switch") return Topology::switch_;
  if (text == "racks") return Topology::racks;
  if (text == "fat-tree") return Topology::fat_tree;
  if (text == "torus") return Topology::torus;
  if (text == "dragonfly") return Topology::dragonfly;
  throw UsageError(fmt::format(
      "unknown topology '{}': use mesh, switch or racks (any backend), or fat-tree, torus or "
      "dragonfly (--backend simgrid)",
      text));
}

bool NetworkConfig::ideal() const {
  auto idle = [](const LinkSpec& l) {
    return l.latency_s == 0 && l.bandwidth_Bps == 0 && l.jitter_s == 0 && l.loss == 0;
  };
  if (!idle(link) || !outages.empty()) return false;
  if (topology == Topology::racks && !idle(trunk)) return false;
  for (const auto& o : overrides)
    if (o.latency_s.value_or(0) || o.bandwidth_Bps.value_or(0) || o.jitter_s.value_or(0) ||
        o.loss.value_or(0))
      return false;
  return true;
}

Network::Network(NetworkConfig config, int world)
    : config_(std::move(config)), world_(world), ideal_(config_.ideal()) {
  if (config_.topology >= Topology::fat_tree)
    throw UsageError(fmt::format(
        "--topology {} is built by SimGrid only: add --backend simgrid, or use --topology switch",
        to_string(config_.topology)));
  if (config_.topology == Topology::racks && (config_.racks < 1 || config_.racks > world))
    throw UsageError(
        fmt::format("racks = {}: use 1 to {} racks for {} nodes", config_.racks, world, world));
  state_.resize(size_t(world) * world);
  for (int s = 0; s < world; ++s)
    for (int d = 0; d < world; ++d)
      state_[size_t(s) * world + d].rng_state = link_rng_seed(config_.seed, world, s, d);
  // Resources: their count here, their bandwidths from the links.
  if (config_.topology == Topology::switch_)
    resources_.resize(2 * size_t(world));
  else
    resources_.resize(size_t(world) * world +
                      (config_.topology == Topology::racks ? config_.racks * config_.racks : 0));
  derive_links();
}

void Network::derive_links() {
  const int world = world_;
  links_.resize(size_t(world) * world);
  for (int s = 0; s < world; ++s)
    for (int d = 0; d < world; ++d)
      links_[size_t(s) * world + d] = overridden_link(config_, s, d);
  if (config_.topology == Topology::switch_) {
    // Uplink of node i (index 2i) and downlink (2i+1), with the node's link bandwidth.
    for (int i = 0; i < world; ++i) {
      resources_[2 * i].bandwidth_Bps = links_[size_t(i) * world + (i + 1) % world].bandwidth_Bps;
      resources_[2 * i + 1].bandwidth_Bps =
          links_[size_t((i + 1) % world) * world + i].bandwidth_Bps;
    }
    return;
  }
  for (size_t i = 0; i < links_.size(); ++i)
    resources_[i].bandwidth_Bps = links_[i].bandwidth_Bps;
  // Racks: one trunk per ordered pair of racks, after the pairwise links.
  for (size_t i = links_.size(); i < resources_.size(); ++i)
    resources_[i].bandwidth_Bps = config_.trunk.bandwidth_Bps;
}

void Network::set_default_link(const LinkSpec& link) {
  std::lock_guard lock(mutex_);
  config_.link = link;
  derive_links();
  ideal_ = config_.ideal();
}

int Network::rack_of(int rank) const {
  return sim::rack_of(rank, config_.racks, world_);
}

LinkSpec Network::link(int src, int dst) const {
  std::lock_guard lock(mutex_);
  return link_locked(src, dst);
}

LinkSpec Network::link_locked(int src, int dst) const {
  return through_trunk(config_, world_, src, dst, links_[size_t(src) * world_ + dst]);
}

std::vector<int> Network::path(int src, int dst) const {
  switch (config_.topology) {
    case Topology::mesh:
      return {src * world_ + dst};
    case Topology::switch_:
      return {2 * src, 2 * dst + 1};
    case Topology::racks: {
      const int a = rack_of(src), b = rack_of(dst);
      if (a == b) return {src * world_ + dst};
      return {src * world_ + dst, world_ * world_ + a * config_.racks + b};
    }
    case Topology::fat_tree:
    case Topology::torus:
    case Topology::dragonfly:
      break;  // refused by the constructor
  }
  return {};
}

double outage_end(const std::vector<Outage>& outages, int src, int dst, double t) {
  // Messages handed over during an outage leave when it ends (outages may chain).
  bool moved = true;
  while (moved) {
    moved = false;
    for (const auto& o : outages) {
      if (t < o.from_s || t >= o.until_s) continue;
      for (auto [f, d] : o.links)
        if (f == src && d == dst) {
          t = o.until_s;
          moved = true;
        }
    }
  }
  return t;
}

double Network::outage_end(int src, int dst, double t) const {
  return sim::outage_end(config_.outages, src, dst, t);
}

bool Network::down_for_good(int src, int dst, double t) const {
  return outage_end(src, dst, t) >= 1e299;
}

Network::Arrival Network::schedule(int src, int dst, uint64_t bytes, double net_now_s,
                                   double model_now_s) {
  if (ideal_) return {.net_s = net_now_s, .model_s = model_now_s};
  std::lock_guard lock(mutex_);
  const LinkSpec l = link_locked(src, dst);
  LinkState& st = state_[size_t(src) * world_ + dst];
  // Per-message draws, in send order on this link: deterministic for a seed.
  const LinkDraw draw = draw_delay(l, config_.rto_s, st.rng_state);
  const double extra = draw.extra_s;
  const int retransmits = draw.retransmits;

  const std::vector<int> hops = path(src, dst);
  // The slowest bandwidth on the path sets the transfer time; every resource on the path
  // is reserved for it, starting when all of them are free.
  auto transfer = [&](double now, bool model) {
    double start = outage_end(src, dst, now);
    for (int r : hops)
      start = std::max(start, model ? resources_[r].busy_model_s : resources_[r].busy_net_s);
    const double seconds = l.bandwidth_Bps > 0 ? double(bytes) / l.bandwidth_Bps : 0.0;
    for (int r : hops)
      (model ? resources_[r].busy_model_s : resources_[r].busy_net_s) = start + seconds;
    return start + seconds;
  };
  Arrival a{.retransmits = retransmits};
  a.net_s = std::max(transfer(net_now_s, false) + l.latency_s + extra, st.last_net_s);
  a.model_s = std::max(transfer(model_now_s, true) + l.latency_s + extra, st.last_model_s);
  st.last_net_s = a.net_s;
  st.last_model_s = a.model_s;
  return a;
}

}  // namespace dsgd::sim
