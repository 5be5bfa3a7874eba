#include "gui/model/settings.h"

#include "gui/model/layout.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {

const char* to_string(RunMode mode) {
  return mode == RunMode::train ? "training" : "all_reduce demo";
}

sim::RunSpec gui_run_defaults() {
  sim::RunSpec d;
  d.model = "mlp:32";
  d.steps = 300;
  d.epochs = 0;
  d.allreduce = Algorithm::ring;
  d.cluster.network.link = {.latency_s = 2e-3, .bandwidth_Bps = 125e6};
  d.cluster.timeout = std::chrono::hours(1);
  return d;
}

namespace {

// The words of sim's run descriptions, each through tr().
sim::RunWords run_words() {
  return {.nodes = tr("{} nodes"),
          .straggler = tr("straggler"),
          .latency = tr("latency {}"),
          .latency_per_link = tr("latency {} a link"),
          .bandwidth = tr("bandwidth {}"),
          .jitter = tr("jitter {}"),
          .loss = tr("loss {:g}"),
          .link = tr("link {}->{}"),
          .links_from = tr("links from {}"),
          .links_to = tr("links to {}"),
          .every_link = tr("every link"),
          .link_overrides = tr("{} link overrides"),
          .faulty_nodes = tr("faulty nodes: {}"),
          .outages = tr("outages: {}"),
          .buckets = tr("{:g} MB buckets"),
          .local_sgd = tr("local SGD every {} steps from step {}"),
          .compress = tr("{} compression"),
          .servers = tr("parameter servers {}, max staleness {}"),
          .unbounded = tr("unbounded")};
}

}  // namespace

std::string describe(const SimSettings& s) {
  return sim::describe_run(s.run, run_words());
}

std::string network_caption(const sim::ClusterOptions& cluster) {
  return sim::describe_network(cluster, run_words());
}

double straggler_of(const sim::RunSpec& run, int rank) {
  auto it = run.cluster.node_overrides.find(rank);
  return it == run.cluster.node_overrides.end() ? 1.0 : it->second.straggler;
}

std::optional<int64_t> crash_step_of(const sim::RunSpec& run, int rank) {
  auto it = run.cluster.node_overrides.find(rank);
  if (it == run.cluster.node_overrides.end()) return std::nullopt;
  return it->second.crash_at_step;
}

namespace {
// The rank's override, made from the default node when it has none yet.
sim::NodeOptions& node_of(sim::RunSpec& run, int rank) {
  return run.cluster.node_overrides.try_emplace(rank, run.cluster.node).first->second;
}
}  // namespace

void set_straggler(sim::RunSpec& run, int rank, double factor) {
  node_of(run, rank).straggler = factor;
}

void set_crash_step(sim::RunSpec& run, int rank, std::optional<int64_t> step) {
  node_of(run, rank).crash_at_step = step;
}

const char* to_string(Layout layout) {
  switch (layout) {
    case Layout::automatic:
      return "auto";
    case Layout::ring:
      return "ring";
    case Layout::star:
      return "star";
    case Layout::grid:
      return "grid";
  }
  return "?";
}

const char* to_string(View view) {
  switch (view) {
    case View::all:
      return "all";
    case View::topology:
      return "topology";
    case View::convergence:
      return "convergence";
    case View::timeline:
      return "timeline";
    case View::gradients:
      return "gradients";
    case View::controls:
      return "controls";
    case View::lesson:
      return "lesson";
    case View::messages:
      return "messages";
    case View::time:
      return "time";
  }
  return "?";
}

std::optional<View> parse_view(const std::string& text) {
  for (View v : {View::all, View::topology, View::convergence, View::timeline, View::gradients,
                 View::controls, View::lesson, View::messages, View::time})
    if (text == to_string(v)) return v;
  return std::nullopt;
}

}  // namespace dsgd::gui
