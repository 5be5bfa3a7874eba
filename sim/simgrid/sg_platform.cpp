#include "sim/simgrid/sg_platform.h"

#include <string>

#include <fmt/format.h>

#include "core/errors.h"

namespace sg4 = simgrid::s4u;

namespace dsgd::sim::sg {

namespace {

// "0 = unlimited" has no SimGrid equivalent: a bandwidth no transfer notices (1 EB/s).
constexpr double kUnlimitedBps = 1e18;

[[noreturn]] void unsupported(const std::string& what) {
  throw UsageError(fmt::format(
      "--backend simgrid does not model {} yet: leave it out, or use --backend sim", what));
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
}

std::vector<sg4::Host*> build_platform(const ClusterOptions& options) {
  const NetworkConfig& net = options.network;
  const bool mesh = net.topology == Topology::mesh;
  const double bandwidth = net.link.bandwidth_Bps > 0 ? net.link.bandwidth_Bps : kUnlimitedBps;
  sg4::NetZone* zone = sg4::create_star_zone("cluster");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(options.nodes);
  for (int r = 0; r < options.nodes; ++r) {
    sg4::Host* host = zone->create_host(fmt::format("rank{}", r), options.node_of(r).gflops * 1e9);
    std::vector<sg4::LinkInRoute> route;
    if (mesh) {
      sg4::Link* link = zone->create_link(fmt::format("link{}", r), bandwidth)
                            ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
      route.emplace_back(link);
    } else {
      sg4::SplitDuplexLink* link =
          zone->create_split_duplex_link(fmt::format("link{}", r), bandwidth);
      route.emplace_back(link, sg4::LinkInRoute::Direction::UP);
    }
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, route, true);
    hosts.push_back(host);
  }
  zone->seal();
  return hosts;
}

}  // namespace dsgd::sim::sg
