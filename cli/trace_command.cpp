#include "cli/trace_command.h"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/trace.h"

namespace dsgd::cli {

void add_trace_command(CLI::App& app, TraceFlags& f) {
  CLI::App* t = app.add_subcommand("trace", "Merge or check Chrome/Perfetto trace files");
  t->require_subcommand(1);
  CLI::App* merge = t->add_subcommand(
      "merge", "Join per-rank traces into one, drawing the message arrows between them");
  merge->add_option("output", f.merge_output, "The merged trace to write (.json)")->required();
  merge->add_option("inputs", f.merge_inputs, "Trace files to join, one or more")
      ->required()
      ->check(CLI::ExistingFile);
  CLI::App* check = t->add_subcommand(
      "check",
      "Check that every send has one arrow to its receive, slices nest, time runs forward");
  check->add_option("file", f.check_file, "The trace to check (.json)")
      ->required()
      ->check(CLI::ExistingFile);
}

int run_trace(const CLI::App& app, const TraceFlags& f) {
  const CLI::App* t = app.get_subcommand("trace");
  if (t->got_subcommand("merge")) {
    merge_traces(f.merge_inputs, f.merge_output);
    const TraceCheck c = check_trace_file(f.merge_output);
    fmt::print("merged {} file{} into {}: {} ranks, {} sends, {} receives, {} arrows\n",
               f.merge_inputs.size(), f.merge_inputs.size() == 1 ? "" : "s", f.merge_output,
               c.ranks, c.sends, c.receives, c.flows);
    if (c.external_sends + c.external_receives > 0)
      fmt::print("  {} sends and {} receives have their other end in a file not given\n",
                 c.external_sends, c.external_receives);
    return kExitOk;
  }
  const TraceCheck c = check_trace_file(f.check_file);
  fmt::print("{}: {} ranks, {} slices, {} sends, {} receives, {} arrows\n", f.check_file, c.ranks,
             c.slices, c.sends, c.receives, c.flows);
  if (c.external_sends + c.external_receives > 0)
    fmt::print(
        "  {} sends and {} receives have their other end in another rank's file "
        "(dsgd trace merge joins them)\n",
        c.external_sends, c.external_receives);
  if (c.ok()) {
    fmt::print("  ok\n");
    return kExitOk;
  }
  for (const std::string& problem : c.problems)
    fmt::print("  problem: {}\n", problem);
  return kExitUsage;
}

}  // namespace dsgd::cli
