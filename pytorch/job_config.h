// What a PyTorch program's dsgd job is, read from the environment so that the program
// itself does not change: the network and its faults (DSGD_SCENARIO, a scenario file, and
// DSGD_TOPOLOGY, DSGD_LATENCY, DSGD_BANDWIDTH, DSGD_JITTER, DSGD_LOSS, DSGD_EAGER_LIMIT,
// DSGD_STRAGGLERS, DSGD_CRASH over it, as `dsgd node`'s flags of the same names), the
// all_reduce algorithm (DSGD_ALLREDUCE) and the trace each rank writes (DSGD_TRACE), plus
// where rank 0's rendezvous listens (DSGD_LISTEN, default 127.0.0.1).
#pragma once

#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <string>

#include "core/comm/collectives.h"
#include "sim/run_spec.h"

namespace dsgd::pytorch {

struct JobConfig {
  sim::RunSpec spec;  // spec.cluster: the network, `world` nodes, the deadline of every wait
  std::string trace;  // "": none; else each rank writes per_rank_path(trace, rank)
  boost::asio::ip::address listen;
};

// From the environment, for a group of `world` ranks whose waits end after `timeout` (the
// timeout of init_process_group). UsageError naming the variable for a bad value.
JobConfig job_config_from_env(int world, std::chrono::milliseconds timeout);

}  // namespace dsgd::pytorch
