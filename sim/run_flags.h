// The flags of a run description, shared by every command that starts a run (dsgd train,
// node, lesson, bench) and by dsgd-gui: one set of names, help texts, limits and
// messages. A command registers the groups it takes, parses, then builds its RunSpec with
// build_run_spec: its own defaults, under the scenario's cluster, under the flags given.
// Not a command line: each program owns its CLI::App; this only adds options to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/run_spec.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace dsgd::sim {

// What the user typed. Cluster values stay text until build_run_spec reads them, so that
// "not given" (empty) lets the scenario's value through.
struct RunFlags {
  // [training]
  std::string backend = "sim";
  std::string payload = "real";
  std::string compute = "flops";
  std::string network_model = "cm02";
  std::string model, data, init;
  int64_t batch = 0;
  double lr = 0, momentum = 0, weight_decay = 0;
  bool nesterov = false;
  int64_t steps = 0, epochs = 0, eval_every = 0;
  uint64_t seed = 0;
  bool no_shuffle = false;
  std::string allreduce, device;
  double bucket_mb = 0;
  double first_bucket_mb = -1;                  // -1: not given
  int64_t local_sgd = 0, local_sgd_start = -1;  // -1: not given
  std::string compress;
  int64_t powersgd_start = -1;  // -1: not given
  int parameter_servers = 0;
  int64_t max_staleness = -1;  // -1: not given (unbounded)
  // [cluster]
  int nodes = -1;  // -1: not given
  std::string scenario;
  std::string topology, latency, bandwidth, jitter, loss, timeout, eager_limit;
  std::vector<std::string> stragglers, crashes;
  double gflops = -1;     // -1: not given
  std::string elastic;    // "": not given
  int max_restarts = -1;  // -1: not given
  // [outputs]
  std::string save, metrics, trace;
  int trace_groups = -1;  // -1: not given
  std::string monitor;    // "": not given (DSGD_MONITOR then)
  CheckpointSpec checkpoint;
};

enum FlagGroup : unsigned {
  kTrainingFlags = 1,  // --model --data --batch --lr ... --allreduce --bucket-mb --device
  kClusterFlags = 2,   // --nodes --scenario --topology --latency ... --eager-limit --gflops
  kOutputFlags = 4,    // --save --metrics --trace
  kCheckpointFlags = 8,
  kBackendFlag = 16,   // --backend sim|mpi|simgrid --payload real|phantom --compute
  kElasticFlags = 32,  // --elastic --max-restarts
};

// The flags' values before parsing: `defaults` (so --help shows a command's own).
RunFlags run_flags(const RunSpec& defaults);
// Sets `flags` to run_flags(defaults) and adds the groups' options to `app`, writing into
// `flags` (which must outlive parsing).
void add_run_flags(CLI::App& app, RunFlags& flags, unsigned groups, const RunSpec& defaults);

// The run the flags describe: `defaults`, then the scenario's cluster (--scenario), then
// every flag given. One-line UsageError / DataError for a bad value, naming the flag:
// nodes 1..256 (simulated), a fault or outage naming a rank past the last, a deadline
// that is not positive, network flags with --backend mpi, --steps with --epochs, an output
// whose directory is missing or not writable, inconsistent checkpoint flags.
RunSpec build_run_spec(const RunFlags& flags, const RunSpec& defaults);

// --bucket-mb MB and --first-bucket-mb MB (-1: not given) as DDP reads them, checked:
// UsageError for a cap below 0 or above 1e6 MB, or a first cap without buckets.
void check_bucket_flags(double bucket_mb, double first_bucket_mb);

// A check for an integer flag: a whole number >= min, so that an explicit 0 or a negative
// value is refused ("--steps: 0 is not allowed; use 1 or more ...") instead of being read
// as "not given". `hint` ends the message (what the flag means, its default).
CLI::Validator integer_at_least(int64_t min, const std::string& hint);
// UsageError for an output path whose directory is missing or not writable, so that a long
// run does not fail at its very end.
void check_output_path(const std::string& path, const char* flag);

}  // namespace dsgd::sim
