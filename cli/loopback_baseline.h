// The loopback baseline of `dsgd bench collective`: N TCP connections on 127.0.0.1
// arranged as the ring r -> r+1, every one pumping bytes at once, one thread per node
// (as a simulated node has one I/O thread). Its throughput per flow is the most a ring
// collective over simulated nodes can hope for on this machine. Not a network test: it
// measures the kernel's loopback and the CPUs, for comparison within one run.
#pragma once

#include <cstddef>

namespace dsgd::cli {

struct LoopbackBaseline {
  int flows = 0;
  double seconds = 0;        // measured interval
  double mean_flow_Bps = 0;  // bytes per second per flow, averaged over flows
  double min_flow_Bps = 0;   // the slowest flow
};

// Pumps for `seconds` after a short warm-up, writing `chunk_bytes` at a time.
// Throws CommError if the sockets cannot be set up. flows must be >= 2.
LoopbackBaseline measure_loopback_ring(int flows, double seconds = 0.3,
                                       size_t chunk_bytes = 256 * 1024);

}  // namespace dsgd::cli
