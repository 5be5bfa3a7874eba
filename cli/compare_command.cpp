#include "cli/compare_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/compare_plot.h"
#include "cli/progress.h"
#include "cli/train_command.h"
#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/nn/blas.h"
#include "core/train/train_inputs.h"
#include "sim/cluster.h"
#include "sim/elastic.h"
#include "sim/link_model.h"

namespace dsgd::cli {
namespace {

constexpr unsigned kRunFlagGroups =
    sim::kBackendFlag | sim::kTrainingFlags | sim::kClusterFlags | sim::kElasticFlags;

// One run of the comparison, as it went.
struct CompareRun {
  std::string label;
  sim::RunSpec spec;
  std::optional<TrainResult> result;  // empty when it failed
  std::string failure;                // what stopped it
  std::vector<StepMetrics> steps;     // rank 0's
  double wall_s = 0;
};

// The run description of one --runs value ("": none): the shared flags, then the run's own
// (which win).
sim::RunSpec spec_of_run(const std::vector<std::string>& shared, const std::string& run) {
  CLI::App app{"dsgd compare", "dsgd compare"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  sim::RunFlags flags;
  sim::add_run_flags(app, flags, kRunFlagGroups, sim::RunSpec{});
  std::vector<std::string> args = shared;
  for (std::string& a : run_arguments(run))
    args.push_back(std::move(a));
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const std::string where = run.empty() ? "" : fmt::format("--runs \"{}\": ", run);
    throw UsageError(
        fmt::format("{}{}; the flags are dsgd train's (see 'dsgd train --help')", where, e.what()));
  }
  if (flags.elastic == "restart")
    throw UsageError(fmt::format(
        "{}--elastic restart starts again from checkpoints, which dsgd compare does not write: "
        "compare --elastic in-process, or run dsgd train --elastic restart",
        run.empty() ? "" : fmt::format("--runs \"{}\": ", run)));
  if (run.empty()) return sim::build_run_spec(flags, sim::RunSpec{});
  try {
    return sim::build_run_spec(flags, sim::RunSpec{});
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--runs \"{}\": {}", run, e.what()));
  }
}

CompareRun run_one(const std::string& label, const sim::RunSpec& spec, bool quiet) {
  CompareRun out{.label = label, .spec = spec};
  TrainInputs inputs = load_inputs(spec);
  const int64_t steps = total_steps(inputs.config, inputs.data);
  if (inputs.config.eval_every == 0)  // enough points for a curve
    inputs.config.eval_every = std::max<int64_t>(1, steps / 25);
  sim::ClusterOptions options{spec.cluster};
  options.pairs =
      static_cast<int64_t>(training_pairs(inputs.config, inputs.data, spec.cluster.nodes).size());
  if (!quiet) fmt::print(stderr, "{}\n", label);
  Progress progress(steps, quiet);
  const Clock::time_point start = Clock::now();
  const auto train_rank = [&](Communicator& comm, const sim::ElasticRound* round) {
    TrainHooks hooks;
    if (comm.rank() == 0)
      hooks.on_step = [&](const StepMetrics& m) {
        out.steps.push_back(m);
        if (round) out.steps.back().wall_s += round->wall_start_s;  // from the first round's start
        progress.update(m);
      };
    if (round) sim::add_round_hooks(hooks, comm, *round);
    TrainResult r = run_training_on(comm, inputs, hooks, round ? round->resume : nullptr);
    if (comm.rank() == 0) out.result = std::move(r);
  };
  try {
    if (spec.elastic.policy == sim::ElasticPolicy::none)
      sim::run_cluster(options, [&](Communicator& comm) { train_rank(comm, nullptr); });
    else
      sim::run_elastic(
          options, spec.elastic,
          [&](Communicator& comm, const sim::ElasticRound& round) { train_rank(comm, &round); },
          [] { return std::optional<TrainState>(); });
  } catch (const Error& e) {                 // a crash fault, a lost peer: the others still compare
    if (e.exit_code() == kExitUsage) throw;  // a run that cannot start is the user's to fix
    out.failure = e.what();
    out.result.reset();
  }
  progress.finish();
  if (out.result && spec.elastic.policy != sim::ElasticPolicy::none)
    sim::count_every_round(*out.result, out.steps);
  out.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

// Model time (or, where the backend has none, wall time) of the first evaluation at or above
// `target` percent; and that evaluation's step.
std::optional<std::pair<double, int64_t>> time_to(const CompareRun& run, double target) {
  for (const StepMetrics& m : run.steps)
    if (m.test_accuracy && *m.test_accuracy * 100 >= target - 1e-9)
      return std::pair{m.model_s >= 0 ? m.model_s : m.wall_s, m.step};
  return std::nullopt;
}

double default_target(const std::vector<CompareRun>& runs) {
  double target = 100;
  for (const CompareRun& r : runs)
    if (r.result && r.result->test_accuracy)
      target = std::min(target, *r.result->test_accuracy * 100);
  return target;
}

// Whether the run's last loss is rank 0's slice's alone (the trainer's rule).
bool own_slice(const CompareRun& r) {
  return r.result && reports_own_slice(sim::train_config(r.spec), r.result->steps - 1);
}

void print_row(const CompareRun& r, double target, size_t width) {
  if (!r.result) {
    fmt::print("{:<{}}  failed: {}\n", r.label, width, r.failure);
    return;
  }
  const TrainResult& t = *r.result;
  const auto reached = time_to(r, target);
  fmt::print("{:<{}}  {:>9.4f}{}  {:>7.2f} %  {:>7.1f} s  {:>9.2f} s  {:>9.1f} MB  {}\n", r.label,
             width, t.final_loss, own_slice(r) ? "*" : " ", t.test_accuracy.value_or(0) * 100,
             r.wall_s, t.model_s, t.bytes_sent / 1e6,
             reached ? fmt::format("{:.2f} s (step {})", reached->first, reached->second)
                     : std::string("not reached"));
}

void print_table(const std::vector<CompareRun>& runs, double target) {
  size_t width = 3;
  for (const CompareRun& r : runs)
    width = std::max(width, r.label.size());
  fmt::print("\n{:<{}}  {:>10}  {:>9}  {:>9}  {:>11}  {:>12}  to {:.2f} % (model time)\n", "run",
             width, "final loss", "test acc", "wall", "model time", "rank 0 sent", target);
  for (const CompareRun& r : runs)
    print_row(r, target, width);
  if (std::any_of(runs.begin(), runs.end(), own_slice))
    fmt::print("* rank 0's slice of the last batch: the run did not sum the loss over the ranks\n");
}

std::vector<Curve> curves_of(const std::vector<CompareRun>& runs) {
  std::vector<Curve> curves;
  for (const CompareRun& r : runs) {
    Curve c{.label = r.label};
    for (const StepMetrics& m : r.steps) {
      const double t = m.model_s >= 0 ? m.model_s : m.wall_s;
      c.step.push_back(double(m.step)), c.model_s.push_back(t), c.loss.push_back(m.loss);
      if (!m.test_accuracy) continue;
      c.eval_step.push_back(double(m.step)), c.eval_model_s.push_back(t);
      c.accuracy.push_back(*m.test_accuracy * 100);
    }
    curves.push_back(std::move(c));
  }
  return curves;
}

std::string runs_json(const std::vector<CompareRun>& runs, double target) {
  nlohmann::json out = {{"target_accuracy", target}, {"runs", nlohmann::json::array()}};
  for (const CompareRun& r : runs) {
    nlohmann::json run = {{"label", r.label},
                          {"spec", nlohmann::json::parse(sim::run_spec_json(r.spec))},
                          {"wall_s", r.wall_s}};
    if (!r.result) run["failure"] = r.failure;
    nlohmann::json steps = nlohmann::json::array();
    for (const StepMetrics& m : r.steps) {
      nlohmann::json s = {{"step", m.step},
                          {"loss", m.loss},
                          {"model_s", m.model_s},
                          {"wall_s", m.wall_s},
                          {"bytes_sent", m.bytes_sent}};
      if (m.test_accuracy) s["test_accuracy"] = *m.test_accuracy;
      steps.push_back(std::move(s));
    }
    run["steps"] = std::move(steps);
    out["runs"].push_back(std::move(run));
  }
  return out.dump(1);
}

// Everything that can be refused is, before the first run starts.
std::vector<sim::RunSpec> check_all(const CompareFlags& f) {
  for (const std::string& plot : f.plots) {
    if (!plot.ends_with(".png") && !plot.ends_with(".svg"))
      throw UsageError(fmt::format("--plot {}: name a .png or .svg file", plot));
    if (!can_plot())
      throw UsageError(fmt::format(
          "--plot {}: this dsgd cannot draw plots (built without PLplot, or no "
          "plplot-driver-cairo here); run scripts/setup.sh (and rebuild), or drop --plot",
          plot));
    sim::check_output_path(plot, "--plot");
  }
  sim::check_output_path(f.json, "--json");
  if (!(f.target_accuracy >= 0 && f.target_accuracy <= 100))
    throw UsageError(
        fmt::format("--target-accuracy {}: give a percentage, 0 to 100", f.target_accuracy));
  spec_of_run(f.shared, "");  // the flags of every run, on their own: errors without a run
  std::vector<sim::RunSpec> specs;
  for (const std::string& run : f.runs) {
    specs.push_back(spec_of_run(f.shared, run));
    if (specs.back().backend != sim::Backend::sim)
      throw UsageError("dsgd compare runs on simulated nodes only; drop --backend");
    try {
      validate_config(sim::train_config(specs.back()));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--runs \"{}\": {}", run, e.what()));
    }
  }
  return specs;
}

}  // namespace

namespace {

// The long names of dsgd train's flags a run may set ("compress", "powersgd-start", ...).
const std::set<std::string>& run_flag_names() {
  static const std::set<std::string> names = [] {
    CLI::App app;
    sim::RunFlags flags;
    sim::add_run_flags(app, flags, kRunFlagGroups, sim::RunSpec{});
    std::set<std::string> out;
    for (const CLI::Option* o : app.get_options())
      for (const std::string& n : o->get_lnames())
        out.insert(n);
    return out;
  }();
  return names;
}

}  // namespace

std::vector<std::string> run_arguments(const std::string& run) {
  std::vector<std::string> args;
  if (run == "sync" || run.empty()) return args;
  for (size_t at = 0; at <= run.size();) {
    const size_t comma = std::min(run.find(',', at), run.size());
    const std::string item = run.substr(at, comma - at);
    at = comma + 1;
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (run_flag_names().contains(name)) {
      args.push_back("--" + name);
      if (eq != std::string::npos) args.push_back(item.substr(eq + 1));
      continue;
    }
    // Not a flag: a comma inside the last flag's value (model=mlp:128,64).
    if (args.empty() || args.back().starts_with("--"))
      throw UsageError(fmt::format(
          "--runs \"{}\": \"{}\" is not a flag of dsgd train; write flag=value items, comma "
          "separated, without dashes (compress=powersgd:2,powersgd-start=20), or sync",
          run, item));
    args.back() += "," + item;
  }
  return args;
}

void add_compare_command(CLI::App& app, CompareFlags& f) {
  CLI::App* c = app.add_subcommand(
      "compare", "Train several configurations on the same data and cluster, and compare them");
  c->add_option("--runs", f.runs,
                "The runs: sync, or flag=value items of dsgd train, comma separated "
                "(compress=powersgd:2,powersgd-start=20)")
      ->required()
      ->expected(1, -1);
  c->add_option("--target-accuracy", f.target_accuracy,
                "Report the model time each run took to reach this test accuracy, in % "
                "(default: the lowest final accuracy among the runs)");
  c->add_option("--plot", f.plots, "Write the curves to FILE.png or FILE.svg (repeatable)");
  c->add_option("--json", f.json, "Write every run's curves to FILE (JSON)");
  c->add_flag("--quiet,-q", f.quiet, "No progress bars");
  c->allow_extras();
  c->footer(
      "Every other flag is dsgd train's and applies to every run (--data, --model, --nodes, "
      "--steps,\n--latency, --bandwidth, --straggler, --crash, ...); a run's own items win. "
      "Runs are simulated, one\nafter another, from the same seed.");
}

int run_compare(CLI::App& app, CompareFlags& f) {
  f.shared = app.get_subcommand("compare")->remaining();
  const std::vector<sim::RunSpec> specs = check_all(f);
  set_blas_threads(1);
  std::vector<CompareRun> runs;
  for (size_t i = 0; i < specs.size(); ++i)
    runs.push_back(run_one(f.runs[i], specs[i], f.quiet));
  const double target = f.target_accuracy > 0 ? f.target_accuracy : default_target(runs);
  const sim::RunSpec& first = specs.front();
  const std::string title = fmt::format("{} on {}, {} nodes, {}", first.model, first.data,
                                        first.cluster.nodes, sim::describe_network(first.cluster));
  fmt::print("\ndsgd compare: {}", title);
  print_table(runs, target);
  if (!f.json.empty()) {  // first: the curves are kept whatever happens to a plot
    write_file_atomic(f.json, runs_json(runs, target));
    fmt::print("curves           {}\n", f.json);
  }
  for (const std::string& plot : f.plots) {
    write_plot(plot, curves_of(runs), title);
    fmt::print("plot             {}\n", plot);
  }
  return kExitOk;
}

}  // namespace dsgd::cli
