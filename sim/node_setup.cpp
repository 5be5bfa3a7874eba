#include "sim/node_setup.h"

namespace dsgd::sim {

std::unique_ptr<SimNode> make_node(const ClusterOptions& options, int rank, Network& network,
                                   NetClock& clock, const NodeJob& job,
                                   const std::string& listen_address) {
  NodeOptions node_options = options.node_of(rank);
  if (!listen_address.empty()) node_options.listen_address = listen_address;
  auto node = std::make_unique<SimNode>(rank, options.nodes, node_options, network, clock);
  node->set_timeout(options.timeout);
  node->set_events(options.events);
  node->set_epoch(job.epoch);
  node->set_job(job.job);
  return node;
}

void connect_mesh(const std::vector<std::unique_ptr<SimNode>>& nodes) {
  const int n = static_cast<int>(nodes.size());
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i) {
      nodes[j]->connect(i, nodes[i]->port());
      nodes[i]->accept_one();
    }
}

void join_mesh(SimNode& node, const std::vector<PeerAddress>& peers) {
  for (int p = 0; p < node.rank(); ++p)
    node.connect(p, peers[p].port, peers[p].host);
  for (int p = node.rank() + 1; p < node.size(); ++p)
    node.accept_one();
}

bool run_node_function(SimNode& node, const NodeFunction& fn, std::chrono::milliseconds timeout) {
  try {
    fn(node);
    node.flush(Clock::now() + timeout);
  } catch (const NodeCrashed&) {
    node.crash();  // peers see the connections drop, as with a dead process
    return false;
  }
  return true;
}

}  // namespace dsgd::sim
