// `dsgd trace merge OUT IN...` joins per-rank Chrome traces (e.g. one per MPI rank) into one
// with the message arrows drawn across them; `dsgd trace check FILE` prints what a trace
// holds and its inconsistencies (exit 2 when it has any); `dsgd trace summarize IN OUT`
// writes a run of many ranks as lanes of groups of ranks (core/io/trace_summary.h). Not a viewer:
// open the file in the Perfetto UI (ui.perfetto.dev) or chrome://tracing.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dsgd::cli {

struct TraceFlags {
  std::string merge_output;
  std::vector<std::string> merge_inputs;
  std::string check_file;
  std::string summarize_input, summarize_output;
  int groups = 32;  // kSummaryGroups
};

void add_trace_command(CLI::App& app, TraceFlags& flags);
// Runs the trace subcommand that was parsed; returns the exit code.
int run_trace(const CLI::App& app, const TraceFlags& flags);

}  // namespace dsgd::cli
