#include "core/mpi/mpi_session.h"

#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/interrupt.h"
#include "core/mpi/mpi_check.h"

namespace dsgd::mpi {
namespace {

// A signal handler can reach nothing but globals, so the SIGTERM line is prepared here when
// the session starts (formatting in the handler would not be async-signal-safe). Written
// once before the handler is installed, read only by the handler.
char g_sigterm_line[512];
size_t g_sigterm_length = 0;

extern "C" void on_sigterm(int) {
  ssize_t ignored = write(STDERR_FILENO, g_sigterm_line, g_sigterm_length);
  (void)ignored;
  _exit(kExitComm);
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

int local_rank_from_env() {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* value = std::getenv(var);
    if (!value || !*value) continue;
    char* end = nullptr;
    const long v = std::strtol(value, &end, 10);
    if (*end == '\0' && v >= 0 && v < (1 << 20)) return static_cast<int>(v);
  }
  return -1;
}

MpiSession::MpiSession(const SessionOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    throw UsageError("MPI is already initialised in this process: make one MpiSession only");
  int provided = MPI_THREAD_SINGLE;
  // Before MPI_ERRORS_RETURN is set, a failing MPI_Init aborts with MPI's own message.
  DSGD_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
  DSGD_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw CommError(
        "this MPI library does not support MPI_THREAD_SERIALIZED, which dsgd needs (its "
        "watchdog thread runs beside the thread that calls MPI, and --bucket-mb hands the "
        "calls to a communication thread)",
        -1);
  }
  DSGD_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  DSGD_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  host_ = host_name();
  if (options.report_sigterm) {
    const std::string line = fmt::format(
        "dsgd: rank {} (host {}): stopped by SIGTERM: mpirun stops every rank when one rank "
        "dies (its message names that rank) or when the job is cancelled\n",
        rank_, host_);
    if (interrupts_handled()) {  // dsgd's own handler thread says it, and cleans up
      set_interrupt_note(SIGTERM, line.substr(0, line.size() - 1));
      return;
    }
    g_sigterm_length = std::min(line.size(), sizeof g_sigterm_line);
    std::memcpy(g_sigterm_line, line.data(), g_sigterm_length);
    struct sigaction action = {};
    action.sa_handler = on_sigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    handles_sigterm_ = true;
  }
}

MpiSession::~MpiSession() {
  if (handles_sigterm_) std::signal(SIGTERM, SIG_DFL);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiSession::abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this is for the type system
}

}  // namespace dsgd::mpi
