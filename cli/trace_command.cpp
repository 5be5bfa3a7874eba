#include "cli/trace_command.h"

#include <filesystem>

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/io/trace.h"
#include "core/io/trace_summary.h"

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
  CLI::App* summarize = t->add_subcommand(
      "summarize",
      "Write a trace of many ranks as lanes of groups of consecutive ranks, their messages "
      "between groups joined per collective (what dsgd-gui opens for over 64 ranks)");
  summarize->add_option("input", f.summarize_input, "The trace to summarize (.json)")
      ->required()
      ->check(CLI::ExistingFile);
  summarize->add_option("output", f.summarize_output, "The summarized trace to write (.json)")
      ->required();
  summarize->add_option("--groups", f.groups, "Lanes: groups of consecutive ranks")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxTraceLanes));
}

namespace {

int run_summarize(const TraceFlags& f) {
  if (std::filesystem::exists(f.summarize_output) &&
      std::filesystem::equivalent(f.summarize_input, f.summarize_output))
    throw UsageError(fmt::format("trace summarize: the output {} is the input; write another file",
                                 f.summarize_output));
  const TraceEvents in = load_trace_events(f.summarize_input);
  if (in.summary.ranks > 0)
    throw UsageError(fmt::format(
        "trace summarize: {} is a summary already ({} ranks in {} groups); summarize the full "
        "trace",
        f.summarize_input, in.summary.ranks, in.summary.groups));
  if (f.groups >= in.world)
    throw UsageError(fmt::format(
        "trace summarize: {} holds {} ranks; give --groups {} or fewer (a lane per group)",
        f.summarize_input, in.world, in.world - 1));
  SummaryCounts n;
  write_file_atomic(f.summarize_output, summarized_trace_json(in, f.groups, &n));
  const int small = in.world / f.groups, large = (in.world + f.groups - 1) / f.groups;
  fmt::print(
      "{}: {} ranks in {} groups of {} ranks; {} messages between groups joined into {}, {} "
      "inside groups left out\n",
      f.summarize_output, in.world, f.groups,
      small == large ? fmt::format("{}", small) : fmt::format("{}-{}", small, large), n.between,
      n.joined, n.inside);
  return kExitOk;
}

}  // namespace

int run_trace(const CLI::App& app, const TraceFlags& f) {
  const CLI::App* t = app.get_subcommand("trace");
  if (t->got_subcommand("summarize")) return run_summarize(f);
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
