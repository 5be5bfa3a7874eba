// Simulated nodes with ports of their own, as under dsgd node, in this test's process: each
// is told every rank's address (what the rendezvous gives) and started. A node's frames
// leave when its thread pumps (a wait, or flush), so a test that drives several nodes from
// one thread flushes a sender before it waits on the receiver.
#pragma once

#include <vector>

#include "sim/node.h"

namespace dsgd::test {

// `by_rank[r]` is rank r; `others` (intruders claiming a rank) get the same table.
inline void start_listening(const std::vector<sim::SimNode*>& by_rank,
                            const std::vector<sim::SimNode*>& others = {}) {
  std::vector<sim::PeerAddress> table;
  for (const sim::SimNode* node : by_rank)
    table.push_back({.host = "127.0.0.1", .port = node->port()});
  for (const auto* group : {&by_rank, &others})
    for (sim::SimNode* node : *group) {
      node->set_peer_addresses(table);
      node->start();
    }
}

}  // namespace dsgd::test
