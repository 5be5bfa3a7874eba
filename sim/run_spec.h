// RunSpec: everything that decides a run, as one value: what is trained (model, data, SGD,
// length, seed), how gradients are summed (algorithm, device), where it runs (backend,
// nodes, network, topology, faults, deadline) and what it writes. Built and validated in
// one place (run_flags.h: flags over a scenario over a command's defaults); dsgd train,
// dsgd node, dsgd lesson, dsgd bench and dsgd-gui all take it, and a trace records it
// (run_spec_json) so that a replay shows the recorded run's settings.
// Not a launcher: sim::run_cluster, dsgd node and the MPI backend run what it describes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/comm/collectives.h"
#include "core/nn/sgd.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"
#include "sim/elastic.h"

namespace dsgd::sim {

// Where the ranks run: simulated nodes (threads over loopback TCP, in real time), MPI ranks,
// or SimGrid actors (virtual time, sim/simgrid).
enum class Backend { sim, mpi, simgrid };
const char* to_string(Backend backend);
// "sim" | "mpi" | "simgrid"; UsageError naming `flag` otherwise.
Backend parse_backend(const std::string& text, const char* flag = "--backend");

struct CheckpointSpec {
  int64_t every = 0;  // write one every K steps; 0: none
  std::string dir;
  int keep = 3;  // the newest N are kept
  bool resume = false;
  std::string resume_path;  // empty: the newest intact one in dir
};

struct Outputs {
  std::string save;     // final parameters (.npz)
  std::string metrics;  // one JSON line per step
  std::string trace;    // Chrome trace
  // The trace's lanes as groups of consecutive ranks (core/io/trace_summary.h): -1, the
  // default, groups above kMaxTraceLanes ranks; 0: a lane per rank.
  int trace_groups = -1;
  // An observer to stream the events to as they happen ("HOST:PORT", sim/monitor_sink.h);
  // empty: none.
  std::string monitor;
  CheckpointSpec checkpoint;
};

struct RunSpec {
  Backend backend = Backend::sim;
  // SimGrid only (--payload phantom): messages carry their size alone and reductions are
  // skipped (Communicator::phantom), for buffers that would not fit once per rank.
  bool phantom = false;
  // SimGrid only (--compute measured): compute takes the CPU time this process spent on it
  // (times a straggler's factor) instead of its flops at the node's GFLOP/s.
  bool measured_compute = false;
  // SimGrid only (--network-model lv08): SimGrid's LV08 model with its corrections instead
  // of CM02 without them (sim/simgrid/sg_cluster.h).
  bool lv08 = false;
  // What is trained.
  std::string model = "mlp:64";  // ModelSpec text
  std::string data = "synthetic";
  std::string init;  // parameters to start from (.npz); empty: seeded
  int64_t batch = 256;
  SgdOptions sgd{.lr = 0.1f, .momentum = 0.9f};
  int64_t steps = 0;   // > 0: exactly this many ...
  int64_t epochs = 5;  // ... else this many passes over the data
  uint64_t seed = 0;
  bool shuffle = true;
  int64_t eval_every = 0;  // 0: at each epoch's end
  // How the gradients are summed, and where each rank computes.
  Algorithm allreduce = Algorithm::automatic;
  bool nccl = false;              // the GPUs sum the gradients themselves (--allreduce nccl)
  double bucket_mb = 0;           // > 0: DDP's buckets of this cap, reduced during backward
  double first_bucket_mb = 1;     // the first bucket's cap (DDP's _DEFAULT_FIRST_BUCKET_BYTES)
  int64_t local_sgd = 0;          // > 0: post-local SGD, averaging every this many steps ...
  int64_t local_sgd_start = 0;    // ... from this step (counting from 0) on
  std::string compress;           // a DDP communication hook (CompressSpec text); "": none
  int64_t powersgd_start = 1000;  // with compress powersgd: PowerSGDState's start_powerSGD_iter
  int parameter_servers = 0;      // > 0: asynchronous SGD, these last ranks serving shards ...
  int64_t max_staleness = -1;     // ... workers at most this many steps ahead (-1: unbounded)
  std::string device = "cpu";     // cpu | cuda | cuda:K
  // Where it runs. On MPI ranks only `cluster.nodes` (0: as many as mpirun starts) and
  // `cluster.timeout` mean anything: the network is the real one.
  ClusterOptions cluster;
  std::string scenario;  // the scenario file the cluster came from, "" for none
  ElasticSpec elastic;   // what the others do when a node dies (simulated nodes)
  Outputs outputs;
};

// The trainer's configuration of `spec` (without a device factory: that needs the
// backend, see cli/device_choice.h). One place, for every command and the GUI.
TrainConfig train_config(const RunSpec& spec);
// The --allreduce value: an algorithm's name, or "nccl".
std::string allreduce_name(const RunSpec& spec);

// The words the two descriptions below are made of, as fmt formats (English by default; the
// GUI passes its language's). Names (ring, mesh) and units stay as they are.
struct RunWords {
  const char* nodes = "{} nodes";
  const char* straggler = "straggler";
  const char* latency = "latency {}";
  const char* latency_per_link = "latency {} a link";  // fat-tree, torus, dragonfly: per hop
  const char* bandwidth = "bandwidth {}";
  const char* jitter = "jitter {}";
  const char* loss = "loss {:g}";
  const char* link = "link {}->{}";
  const char* links_from = "links from {}";
  const char* links_to = "links to {}";
  const char* every_link = "every link";
  const char* link_overrides = "{} link overrides";
  const char* faulty_nodes = "faulty nodes: {}";
  const char* outages = "outages: {}";
  const char* buckets = "{:g} MB buckets";
  const char* local_sgd = "local SGD every {} steps from step {}";
  const char* compress = "{} compression";
  const char* servers = "parameter servers {}, max staleness {}";
  const char* unbounded = "unbounded";
};

// "latency 2 ms, bandwidth 1 Gbit/s, mesh" (with jitter, loss, overrides, faults when set).
std::string describe_network(const ClusterOptions& cluster, const RunWords& words = {});
// A short label for curves and titles: "ring, 4 nodes, 2 ms, 1 Gbit/s".
std::string describe_run(const RunSpec& spec, const RunWords& words = {});

// The run description as a JSON object (as a trace records it), and back. The reader
// takes what it knows and fails with DataError naming `source` for malformed values.
std::string run_spec_json(const RunSpec& spec);
RunSpec run_spec_from_json(std::string_view json, const std::string& source);

}  // namespace dsgd::sim
