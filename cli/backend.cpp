#include "cli/backend.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "core/errors.h"
#ifdef DSGD_HAVE_MPI
#include "core/mpi/run_rank.h"
#endif
#ifdef DSGD_HAVE_SIMGRID
#include "sim/simgrid/sg_cluster.h"
#endif

namespace dsgd::cli {

namespace {

// The size and rank of the job this process was started in by a launcher (mpirun, srun),
// from the environment it sets; {1, 0} when none did.
std::pair<int, int> launcher_job() {
  const std::pair<const char*, const char*> vars[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
      {"PMI_SIZE", "PMI_RANK"},
      {"SLURM_NTASKS", "SLURM_PROCID"}};
  for (const auto& [size_var, rank_var] : vars) {
    const char* size = std::getenv(size_var);
    const char* rank = std::getenv(rank_var);
    if (size && std::atoi(size) > 1) return {std::atoi(size), rank ? std::atoi(rank) : 0};
  }
  return {1, 0};
}

// Simulated nodes under mpirun -np 2 would be two independent simulations writing the same
// files: refused, once (by the launcher's rank 0; the others exit with the same code).
void refuse_simulation_under_launcher(const std::string& backend) {
  const auto [size, rank] = launcher_job();
  if (size <= 1) return;
  if (rank != 0) throw ReportedByRankZero(kExitUsage);
  throw UsageError(fmt::format(
      "this process is one of {} that a launcher started (mpirun, srun), but --backend {} "
      "simulates a whole cluster in each of them: add --backend mpi, or run dsgd without the "
      "launcher",
      size, backend));
}

bool asks_for_mpi(int argc, char** argv) {
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--backend=mpi" ||
        (arg == "--backend" && k + 1 < argc && std::string(argv[k + 1]) == "mpi"))
      return true;
  }
  return false;
}

}  // namespace

int report_error(const Error& error, int argc, char** argv) {
#ifdef DSGD_HAVE_MPI
  if (launcher_job().first > 1 && asks_for_mpi(argc, argv) && !mpi::mpi_has_started()) {
    try {
      mpi::report_startup_error(error);
    } catch (const ReportedByRankZero& reported) {
      return reported.exit_code();
    } catch (const std::exception&) {  // MPI could not start: say it here after all
    }
  }
#endif
  std::string what = error.what();
  // Bad usage or input is one line on stderr, whatever a library put in the message.
  if (error.exit_code() == kExitUsage) std::replace(what.begin(), what.end(), '\n', ' ');
  fmt::print(stderr, "dsgd: error: {}\n", what);
  return error.exit_code();
}

SimgridRun simgrid_run(const sim::RunSpec& spec, std::vector<sim::LinkUse>* links) {
  return {.phantom = spec.phantom,
          .measured_compute = spec.measured_compute,
          .lv08 = spec.lv08,
          .links = links};
}

bool run_on_backend(const std::string& backend, const sim::ClusterOptions& sim_options,
                    const sim::NodeFunction& fn, const RunChecks& checks,
                    const SimgridRun& simgrid) {
  if (backend == "sim") {
    refuse_simulation_under_launcher(backend);
    if (checks.check_world) checks.check_world(sim_options.nodes);
    if (checks.own_ranks) checks.own_ranks(0, sim_options.nodes);
    sim::run_cluster(sim_options, fn);
    return true;
  }
  if (backend == "mpi") {
#ifdef DSGD_HAVE_MPI
    return mpi::run_rank({.timeout = sim_options.timeout,
                          .events = sim_options.events,
                          .preflight = {.config_hash = checks.config_hash,
                                        .data_hash = checks.data_hash,
                                        .config = checks.config},
                          .nodes = checks.nodes,
                          .check_world = checks.check_world,
                          .own_ranks = checks.own_ranks,
                          .own_only = checks.own_only},
                         fn);
#else
    throw UsageError(
        "--backend mpi: this dsgd was built without the MPI backend "
        "(apt-get install libopenmpi-dev, then reconfigure); use --backend sim");
#endif
  }
  if (backend == "simgrid") {
    refuse_simulation_under_launcher(backend);
    if (checks.check_world) checks.check_world(sim_options.nodes);
    if (checks.own_ranks) checks.own_ranks(0, sim_options.nodes);
    sim::RoundRunner rounds = simgrid_rounds(simgrid);
    std::vector<int> members(static_cast<size_t>(sim_options.nodes));
    std::iota(members.begin(), members.end(), 0);
    rounds.run(sim_options, members, fn);
    return true;
  }
  throw UsageError(fmt::format("--backend {}: use sim, mpi or simgrid", backend));
}

sim::RoundRunner simgrid_rounds(const SimgridRun& simgrid) {
#ifdef DSGD_HAVE_SIMGRID
  const sim::sg::SgOptions options{.phantom = simgrid.phantom,
                                   .compute = simgrid.measured_compute
                                                  ? sim::sg::ComputeModel::measured
                                                  : sim::sg::ComputeModel::flops,
                                   .lv08 = simgrid.lv08,
                                   .step = simgrid.step};
  // The engine and platform of the first round, which has every node.
  auto rounds = std::make_shared<std::unique_ptr<sim::sg::SgRounds>>();
  return {.run =
              [rounds, options, links = simgrid.links](const sim::ClusterOptions& round,
                                                       const std::vector<int>& members,
                                                       const sim::NodeFunction& fn) {
                if (!*rounds) *rounds = std::make_unique<sim::sg::SgRounds>(round, options);
                sim::sg::SgResult result = (*rounds)->run(round, members, fn);
                if (links) *links = std::move(result.links);
              },
          .one_clock = true};
#else
  (void)simgrid;
  throw UsageError(
      "--backend simgrid: this dsgd was built without the SimGrid backend "
      "(apt-get install libsimgrid-dev, then reconfigure); use --backend sim");
#endif
}

}  // namespace dsgd::cli
