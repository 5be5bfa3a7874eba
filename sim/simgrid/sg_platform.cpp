#include "sim/simgrid/sg_platform.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/cluster_shape.h"
#include "sim/link_rules.h"

namespace sg4 = simgrid::s4u;

namespace dsgd::sim::sg {

namespace {

[[noreturn]] void unsupported(const std::string& what,
                              const std::string& fix = "leave it out, or use --backend sim") {
  throw UsageError(fmt::format("--backend simgrid does not model {} yet: {}", what, fix));
}

double bandwidth_of(const LinkSpec& link) {
  return link.bandwidth_Bps > 0 ? link.bandwidth_Bps : kUnlimitedBps;
}

sg4::Host* create_host(sg4::NetZone* zone, const ClusterOptions& options, int rank) {
  return zone->create_host(fmt::format("rank{}", rank), options.node_of(rank).gflops * 1e9);
}

// A host's link in a mesh (or a rack, a mesh of its own): a fat pipe, so every flow gets
// the whole bandwidth, as a private link per pair would give it.
sg4::LinkInRoute mesh_link(sg4::NetZone* zone, const ClusterOptions& options, int rank,
                           double latency_s) {
  const double bandwidth = bandwidth_of(options.network.link);
  return sg4::LinkInRoute(zone->create_link(fmt::format("link{}", rank), bandwidth)
                              ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                              ->set_latency(latency_s));
}

// A host's uplink and downlink to the switch, shared by its flows, at its node's bandwidth
// (sim/network.cpp: the links to and from the next rank, after the overrides).
sg4::LinkInRoute switch_link(sg4::NetZone* zone, const ClusterOptions& options, int rank,
                             double latency_s) {
  const int next = (rank + 1) % options.nodes;
  sg4::SplitDuplexLink* link = zone->create_split_duplex_link(fmt::format("link{}", rank), 1);
  link->get_link_up()->set_bandwidth(bandwidth_of(overridden_link(options.network, rank, next)));
  link->get_link_down()->set_bandwidth(bandwidth_of(overridden_link(options.network, next, rank)));
  link->set_latency(latency_s);
  return sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP);
}

// mesh and switch: a star of one link per host, each of `latency_s`.
std::vector<sg4::Host*> build_star(const ClusterOptions& options, double latency_s) {
  const bool mesh = options.network.topology == Topology::mesh;
  sg4::NetZone* zone = sg4::create_star_zone("cluster");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(options.nodes);
  for (int r = 0; r < options.nodes; ++r) {
    sg4::Host* host = create_host(zone, options, r);
    const sg4::LinkInRoute link =
        mesh ? mesh_link(zone, options, r, latency_s) : switch_link(zone, options, r, latency_s);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {link}, true);
    hosts.push_back(host);
  }
  zone->seal();
  return hosts;
}

// racks: a zone per rack, its hosts a mesh (mesh_link, `latency_s` each), reached through
// a router; between the routers of each ordered pair of racks a shared trunk at the
// trunk's bandwidth, carrying `trunk_latency_s`.
std::vector<sg4::Host*> build_racks(const ClusterOptions& options, double latency_s,
                                    double trunk_latency_s) {
  const NetworkConfig& net = options.network;
  const int racks = std::clamp(net.racks, 1, options.nodes);
  sg4::NetZone* root = sg4::create_full_zone("cluster");
  std::vector<sg4::NetZone*> zones;
  std::vector<simgrid::kernel::routing::NetPoint*> routers;
  for (int k = 0; k < racks; ++k) {
    zones.push_back(sg4::create_star_zone(fmt::format("rack{}", k))->set_parent(root));
    routers.push_back(zones.back()->create_router(fmt::format("rack{}-router", k)));
  }
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < options.nodes; ++r) {
    sg4::NetZone* zone = zones[rack_of(r, racks, options.nodes)];
    hosts.push_back(create_host(zone, options, r));
    zone->add_route(hosts.back()->get_netpoint(), nullptr, nullptr, nullptr,
                    {mesh_link(zone, options, r, latency_s)}, true);
  }
  for (sg4::NetZone* zone : zones)
    zone->seal();
  for (int a = 0; a < racks; ++a)
    for (int b = 0; b < racks; ++b) {
      if (a == b) continue;
      sg4::Link* trunk = root->create_link(fmt::format("trunk{}-{}", a, b), bandwidth_of(net.trunk))
                             ->set_latency(trunk_latency_s);
      root->add_route(zones[a]->get_netpoint(), zones[b]->get_netpoint(), routers[a], routers[b],
                      {sg4::LinkInRoute(trunk)}, false);
    }
  root->seal();
  return hosts;
}

// fat-tree, torus, dragonfly: SimGrid's cluster zone, its leaf `id` the host of rank id, each
// link of `latency_s`.
std::vector<sg4::Host*> build_cluster(const ClusterOptions& options, double latency_s) {
  const NetworkConfig& net = options.network;
  const ClusterShape s = resolve_shape(net.topology, net.shape, options.nodes);
  std::vector<sg4::Host*> hosts(options.nodes);
  auto netpoint = [&options, &hosts](sg4::NetZone* zone, const std::vector<unsigned long>&,
                                     unsigned long id) {
    const int rank = static_cast<int>(id);
    hosts[rank] =
        zone->create_host(fmt::format("rank{}", rank), options.node_of(rank).gflops * 1e9);
    return std::pair<simgrid::kernel::routing::NetPoint*, simgrid::kernel::routing::NetPoint*>{
        hosts[rank]->get_netpoint(), nullptr};
  };
  const sg4::ClusterCallbacks callbacks(netpoint);
  const double bandwidth = bandwidth_of(net.link);
  constexpr auto kDuplex = sg4::Link::SharingPolicy::SPLITDUPLEX;
  sg4::NetZone* zone = nullptr;
  if (net.topology == Topology::fat_tree) {
    const sg4::FatTreeParams params(s[0][0], s[1], s[2], s[3]);
    zone = sg4::create_fatTree_zone("cluster", nullptr, params, callbacks, bandwidth, latency_s,
                                    kDuplex);
  } else if (net.topology == Topology::torus) {
    const std::vector<unsigned long> dims(s[0].begin(), s[0].end());
    zone =
        sg4::create_torus_zone("cluster", nullptr, dims, callbacks, bandwidth, latency_s, kDuplex);
  } else {
    const sg4::DragonflyParams params({s[0][0], s[0][1]}, {s[1][0], s[1][1]}, {s[2][0], s[2][1]},
                                      s[3][0]);
    zone = sg4::create_dragonfly_zone("cluster", nullptr, params, callbacks, bandwidth, latency_s,
                                      kDuplex);
  }
  zone->seal();
  return hosts;
}

}  // namespace

void check_supported(const ClusterOptions& options, bool lv08) {
  const NetworkConfig& net = options.network;
  if (is_cluster_topology(net.topology) && !net.overrides.empty())
    unsupported(
        fmt::format("per-link or per-node overrides on --topology {}", to_string(net.topology)),
        "use --topology mesh, switch or racks, or --backend sim");
  if (lv08 && !net.overrides.empty())
    unsupported("per-link or per-node overrides under --network-model lv08",
                "use --network-model cm02, or --backend sim");
  if (is_cluster_topology(net.topology)) resolve_shape(net.topology, net.shape, options.nodes);
}

SgPlatform build_platform(const ClusterOptions& options, bool latency_in_links) {
  const NetworkConfig& net = options.network;
  const double latency = net.link.latency_s;
  SgPlatform p{.network = net, .latency_in_links = latency_in_links};
  if (is_cluster_topology(net.topology)) {
    p.hosts = build_cluster(options, latency_in_links ? latency : 0);
    p.latency_per_link = !latency_in_links;
    return p;
  }
  // With overrides a pair's bandwidth may differ from its route's (sim/network.cpp times a
  // message at its pair's bandwidth).
  p.pair_bandwidths = !net.overrides.empty();
  const double host_latency = latency_in_links ? latency / 2 : 0;
  p.hosts = net.topology == Topology::racks
                ? build_racks(options, host_latency, latency_in_links ? net.trunk.latency_s : 0)
                : build_star(options, host_latency);
  return p;
}

}  // namespace dsgd::sim::sg
