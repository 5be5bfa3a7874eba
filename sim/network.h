// Network: the simulated cluster's links, shared by all nodes of one process. For every
// message it computes when it arrives, on two clocks: the network clock (wall time that
// stops while paused and slows in slow motion) and model time (what the alpha-beta model
// says, deterministic for a seed). Topologies, per-link and per-node overrides, jitter,
// loss with retransmission, and links that go down are all here. Not a packet simulator:
// a message reserves every resource on its path for bytes / (slowest bandwidth) at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/link_model.h"

namespace dsgd::sim {

enum class Topology {
  mesh,     // every directed pair has its own link
  switch_,  // every node has an uplink and a downlink to one switch, shared by its messages
  racks,    // full mesh inside each rack; racks joined by one slower trunk per direction
  // Built by SimGrid (--backend simgrid only), each link --latency and --bandwidth, in the
  // shape NetworkConfig::shape says (sim/cluster_shape.h):
  fat_tree,   // hosts under leaf switches under spine switches, up to the top
  torus,      // hosts on a grid whose every row wraps around
  dragonfly,  // groups of chassis of routers of hosts
};
const char* to_string(Topology t);
// "mesh" | "switch" | "racks" | "fat-tree" | "torus" | "dragonfly" (no shape: set_topology).
Topology parse_topology(const std::string& text);

struct LinkSpec {
  double latency_s = 0;      // one-way
  double bandwidth_Bps = 0;  // 0 = unlimited
  double jitter_s = 0;       // extra one-way delay, uniform in [0, jitter_s], per message
  double loss = 0;           // probability a transmission is lost and resent after the RTO
};

// A link (or all links of a node) overridden: any field set replaces the default.
struct LinkOverride {
  int from = -1, to = -1;  // a directed link, or -1 for "any" (a node override sets one)
  std::optional<double> latency_s, bandwidth_Bps, jitter_s, loss;
};

// A period in which links carry nothing: messages wait (as TCP retransmits) until it ends.
struct Outage {
  std::vector<std::pair<int, int>> links;  // directed (from, to) pairs
  double from_s = 0;
  double until_s = 1e300;  // forever unless set
};

// When a message handed to the link src -> dst at time t leaves: t, or the end of the
// outages that hold the link then (they may chain); 1e299 or more: never.
double outage_end(const std::vector<Outage>& outages, int src, int dst, double t);

struct NetworkConfig {
  Topology topology = Topology::mesh;
  // fat-tree, torus, dragonfly: their shape in SimGrid's notation; empty: chosen from the
  // node count (sim/cluster_shape.h).
  std::string shape;
  LinkSpec link;  // every link by default
  std::vector<LinkOverride> overrides;
  int racks = 2;  // Topology::racks: ranks split into contiguous racks
  LinkSpec trunk{.latency_s = 0, .bandwidth_Bps = 0};  // Topology::racks: between racks
  double rto_s = 0.2;  // retransmission timeout after a loss (Linux's minimum RTO)
  uint64_t seed = 1;   // jitter and loss draws
  std::vector<Outage> outages;

  bool ideal() const;  // no latency, bandwidth, jitter, loss, outage anywhere
};

class Network {
 public:
  Network(NetworkConfig config, int world);

  struct Arrival {
    double net_s;         // network-clock time the message is delivered
    double model_s;       // model time it is delivered
    int retransmits = 0;  // times it was lost and sent again (each adds the RTO)
  };
  // A message of `bytes` from src to dst handed over at net_now_s / model_now_s. Thread-safe;
  // called by the sender's thread in send order, so draws and FIFO order are deterministic.
  Arrival schedule(int src, int dst, uint64_t bytes, double net_now_s, double model_now_s);

  // True when an outage holds the link src -> dst from network time t on, for ever.
  bool down_for_good(int src, int dst, double t) const;
  // The effective parameters of one directed link (after overrides), for display and tests.
  LinkSpec link(int src, int dst) const;
  // Replaces the default link (every link no override changes) from now on, for a class
  // that drags a slider: messages handed over later use it, those in flight keep their
  // arrival. Model time then depends on when it was called. Thread-safe.
  void set_default_link(const LinkSpec& link);
  const NetworkConfig& config() const { return config_; }
  int world() const { return world_; }
  bool ideal() const { return ideal_; }
  int rack_of(int rank) const;

 private:
  struct Resource {
    double bandwidth_Bps = 0;
    double busy_net_s = 0, busy_model_s = 0;
  };
  struct LinkState {
    uint64_t rng_state = 0;
    double last_net_s = 0, last_model_s = 0;  // FIFO: never deliver before the previous one
  };
  std::vector<int> path(int src, int dst) const;  // resource indices
  void derive_links();  // links_ and the resources' bandwidths from config_
  LinkSpec link_locked(int src, int dst) const;
  double outage_end(int src, int dst, double t) const;

  NetworkConfig config_;
  int world_;
  std::atomic<bool> ideal_;
  std::vector<LinkSpec> links_;  // world * world, effective per directed link
  std::vector<Resource> resources_;
  std::vector<LinkState> state_;  // world * world
  mutable std::mutex mutex_;
};

}  // namespace dsgd::sim
