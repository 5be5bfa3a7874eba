#include "sim/node_setup.h"

namespace dsgd::sim {

std::unique_ptr<SimNode> make_node(const ClusterOptions& options, int rank, Network& network,
                                   NetClock& clock, const NodeJob& job, LoopbackHub* hub,
                                   const std::string& listen_address) {
  NodeOptions node_options = options.node_of(rank);
  if (!listen_address.empty()) node_options.listen_address = listen_address;
  auto node =
      hub ? std::make_unique<SimNode>(rank, options.nodes, node_options, network, clock, *hub)
          : std::make_unique<SimNode>(rank, options.nodes, node_options, network, clock);
  node->set_timeout(options.timeout);
  node->set_events(options.events);
  node->set_epoch(job.epoch);
  node->set_job(job.job);
  return node;
}

bool run_node_function(SimNode& node, const NodeFunction& fn, std::chrono::milliseconds timeout) {
  try {
    fn(node);
    node.check_sends();
    node.flush(Clock::now() + timeout);
  } catch (const NodeCrashed&) {
    node.crash();  // peers see the connections drop, as with a dead process
    return false;
  }
  return true;
}

}  // namespace dsgd::sim
