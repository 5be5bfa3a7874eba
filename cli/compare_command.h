// `dsgd compare`: several training configurations on the same data, seed and simulated
// cluster, one after another, then a table (final loss, test accuracy, wall time, model
// time, bytes rank 0 sent, model time to a target accuracy), plots of loss and accuracy
// against steps and model time (cli/compare_plot.h) and, on request, every curve as JSON.
// Each --runs value adds flags of dsgd train to the ones given for all runs:
//   dsgd compare --data fashion-mnist --latency 5ms --runs sync compress=fp16 local-sgd=8
// Not a benchmark of dsgd itself: bench/ measures the code; this compares training modes.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dsgd::cli {

struct CompareFlags {
  std::vector<std::string> runs;   // "sync" | "flag=value[,flag[=value]...]"
  double target_accuracy = 0;      // percent; 0: the lowest final accuracy of the runs
  std::vector<std::string> plots;  // .png / .svg
  std::string json;
  bool quiet = false;
  std::vector<std::string> shared;  // dsgd train's flags for every run (CLI11's extras)
};

void add_compare_command(CLI::App& app, CompareFlags& flags);
int run_compare(CLI::App& app, CompareFlags& flags);

// The dsgd train arguments of one --runs value: "compress=powersgd:2,powersgd-start=20" is
// {"--compress", "powersgd:2", "--powersgd-start", "20"}; "sync" (and "") is none. A comma
// starts a new item only before a flag's name, so values keep theirs ("model=mlp:128,64").
// UsageError for an item that is neither a flag nor part of a value.
std::vector<std::string> run_arguments(const std::string& run);

}  // namespace dsgd::cli
