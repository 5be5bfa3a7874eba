#include "sim/simgrid/sg_platform.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/cluster_shape.h"

namespace sg4 = simgrid::s4u;

namespace dsgd::sim::sg {

namespace {

// "0 = unlimited" has no SimGrid equivalent: a bandwidth no transfer notices (1 EB/s).
constexpr double kUnlimitedBps = 1e18;

[[noreturn]] void unsupported(const std::string& what) {
  throw UsageError(fmt::format(
      "--backend simgrid does not model {} yet: leave it out, or use --backend sim", what));
}

double bandwidth_of(const NetworkConfig& net) {
  return net.link.bandwidth_Bps > 0 ? net.link.bandwidth_Bps : kUnlimitedBps;
}

// mesh and switch: a star of one link per host, each of `latency_s`.
std::vector<sg4::Host*> build_star(const ClusterOptions& options, double latency_s) {
  const bool mesh = options.network.topology == Topology::mesh;
  const double bandwidth = bandwidth_of(options.network);
  sg4::NetZone* zone = sg4::create_star_zone("cluster");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(options.nodes);
  for (int r = 0; r < options.nodes; ++r) {
    sg4::Host* host = zone->create_host(fmt::format("rank{}", r), options.node_of(r).gflops * 1e9);
    std::vector<sg4::LinkInRoute> route;
    if (mesh) {
      sg4::Link* link = zone->create_link(fmt::format("link{}", r), bandwidth)
                            ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                            ->set_latency(latency_s);
      route.emplace_back(link);
    } else {
      sg4::SplitDuplexLink* link =
          zone->create_split_duplex_link(fmt::format("link{}", r), bandwidth);
      link->set_latency(latency_s);
      route.emplace_back(link, sg4::LinkInRoute::Direction::UP);
    }
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, route, true);
    hosts.push_back(host);
  }
  zone->seal();
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
  const double bandwidth = bandwidth_of(net);
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

void check_supported(const ClusterOptions& options) {
  const NetworkConfig& net = options.network;
  if (net.topology == Topology::racks) unsupported("the racks topology");
  if (!net.overrides.empty()) unsupported("per-link or per-node network overrides");
  if (net.link.jitter_s > 0) unsupported("jitter");
  if (net.link.loss > 0) unsupported("loss");
  if (!net.outages.empty()) unsupported("link outages");
  for (int r = 0; r < options.nodes; ++r) {
    const NodeOptions& node = options.node_of(r);
    if (node.crash_at_step || node.crash_at_s) unsupported(fmt::format("a crash (rank {})", r));
  }
  if (is_cluster_topology(net.topology)) resolve_shape(net.topology, net.shape, options.nodes);
}

SgPlatform build_platform(const ClusterOptions& options, bool latency_in_links) {
  const NetworkConfig& net = options.network;
  const double latency = net.link.latency_s;
  if (!is_cluster_topology(net.topology)) {
    if (latency_in_links) return {.hosts = build_star(options, latency / 2)};
    return {.hosts = build_star(options, 0), .latency_s = latency};
  }
  if (latency_in_links) return {.hosts = build_cluster(options, latency)};
  return {.hosts = build_cluster(options, 0), .latency_s = latency, .latency_per_link = true};
}

}  // namespace dsgd::sim::sg
