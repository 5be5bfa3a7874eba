// Asynchronous SGD with parameter servers (TrainConfig::parameter_servers = S). The last S
// ranks are servers, each holding a contiguous shard of the parameters and its SGD momentum;
// the first W = R - S ranks are workers. Each step a worker sends every server one message:
// its gradient of the previous step (the push) and a request for the parameters of the next
// (the pull). A server applies each gradient as it arrives, one torch.optim.SGD step on its
// shard (as TensorFlow's asynchronous parameter servers apply each worker's update), and
// answers a pull once the stale-synchronous bound allows it: a worker may start step c once
// every worker has pushed its step c - T - 1 (T = max_staleness; T = 0 is synchronous, T < 0
// unbounded). So a straggler slows only itself, until the bound makes the others wait.
//
// Worker w of W takes slice w of global batch c at its step c, its gradient scaled by 1/B,
// so a step's W pushes add up to synchronous SGD's gradient: with momentum 0 and T = 0 the
// run is synchronous SGD on W ranks, to float rounding of the order the pushes land in.
// With momentum the server's momentum sees W smaller updates a step, not one sum.
// After the last step the servers broadcast their shards: every rank ends with the same
// parameters, evaluated together.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/comm/collective_pairs.h"
#include "core/train/trainer.h"

namespace dsgd {

struct ServerLayout {
  int workers = 0, servers = 0;
  bool is_server(int rank) const { return rank >= workers; }
  int server_rank(int j) const { return workers + j; }
  // [begin, end) of server j's shard of `params` parameters.
  std::pair<int64_t, int64_t> shard(int j, int64_t params) const;
};

// The pairs the workers and servers talk over: every worker with every server.
std::vector<RankPair> server_pairs(ServerLayout layout);

// UsageError unless 1 <= servers < world.
ServerLayout server_layout(int world, int servers);

// train() with config.parameter_servers > 0 (no resume, no checkpoints).
TrainResult train_with_servers(Communicator& comm, const Dataset& data, const TrainConfig& config,
                               const std::vector<NamedTensor>* init, const TrainHooks& hooks);

}  // namespace dsgd
