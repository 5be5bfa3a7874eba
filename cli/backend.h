// Runs one function on every rank of the chosen backend: simulated nodes (threads of this
// process), MPI ranks (this process is one rank of an mpirun job) or SimGrid actors
// (sim/simgrid, virtual time).
#pragma once

#include <cstdint>
#include <string>

#include <functional>

#include "core/errors.h"
#include "core/train/config_hash.h"
#include "sim/cluster.h"
#include "sim/elastic.h"
#include "sim/run_spec.h"
#include "sim/link_use.h"
#include "sim/step_gate.h"

namespace dsgd::cli {

// What MPI ranks check together before `fn` runs (preflight, core/mpi/preflight.h).
// Ignored by the simulated backend, whose nodes share one process and one configuration.
struct RunChecks {
  uint64_t config_hash = 0;  // config_fingerprint(); 0: not checked
  ConfigFields config;       // config_fields(), to name the flag that differs
  uint64_t data_hash = 0;    // dataset_fingerprint(); 0: not checked
  int nodes = 0;             // --nodes as given: must equal the MPI world size; 0: any
  // More of what the world size must be; called once per run (MPI: on every rank together,
  // so that rank 0 reports a problem once). Throws UsageError.
  std::function<void(int world)> check_world;
  // Told dsgd's own ranks, [first, first + count), before `fn` runs: fewer than the world
  // in an MPI job that also runs other programs (mpirun ... : -np 1 python3 peer.py).
  std::function<void(int first, int count)> own_ranks;
  // MPI: `fn` runs among dsgd's own ranks only (mpi::RankRunOptions::own_only).
  bool own_only = false;
};

// What only a SimGrid run takes (the other backends refuse the first two before they get
// here): phantom payloads, measured compute, LV08 (sim::RunSpec), and where to put the bytes
// each link carried.
struct SimgridRun {
  bool phantom = false;
  bool measured_compute = false;
  bool lv08 = false;
  std::vector<sim::LinkUse>* links = nullptr;
  sim::StepGate* step = nullptr;  // step mode: every message waits for its step()
};
// What `spec` asks of a SimGrid run.
SimgridRun simgrid_run(const sim::RunSpec& spec, std::vector<sim::LinkUse>* links = nullptr);

// Returns true when this process hosts rank 0 (always for "sim"), which writes the
// outputs. UsageError for an unknown backend or one this build lacks.
// With "mpi" (mpi::run_rank, core/mpi/run_rank.h: how a failure ends the job),
// sim_options gives the timeout and the event sink only.
bool run_on_backend(const std::string& backend, const sim::ClusterOptions& sim_options,
                    const sim::NodeFunction& fn, const RunChecks& checks = {},
                    const SimgridRun& simgrid = {});

// The rounds of an elastic run on SimGrid (sim/elastic.h's RoundRunner): one simulation,
// started by the first round, the platform of its nodes. UsageError in a build without
// SimGrid.
sim::RoundRunner simgrid_rounds(const SimgridRun& simgrid);

// Prints `error` as dsgd's one line on stderr and returns its exit code. On a rank of a
// launcher's job that asked for --backend mpi (`argv`) before MPI started, the job's ranks
// report it together instead, so that it reaches the user once (mpi::report_startup_error).
int report_error(const Error& error, int argc, char** argv);

}  // namespace dsgd::cli
