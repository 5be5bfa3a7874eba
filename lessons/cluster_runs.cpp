#include "lessons/cluster_runs.h"

#include "sim/control.h"

namespace dsgd::lessons {

double step_model_s(const Dataset& data, TrainConfig config, sim::ClusterOptions options) {
  config.steps = 4;  // the last step ends the run: leave it out
  config.eval_every = 0;
  sim::SimControl control;
  control.set_speed(50);
  options.control = &control;
  double t1 = 0, t3 = 0;
  sim::run_cluster(options, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0)
      hooks.on_step = [&](const StepMetrics& m) {
        if (m.step == 1) t1 = comm.model_s();
        if (m.step == 3) t3 = comm.model_s();
      };
    train(comm, data, config, nullptr, hooks);
  });
  return (t3 - t1) / 2;
}

std::vector<float> flat_params(const std::vector<NamedTensor>& params) {
  std::vector<float> out;
  for (const NamedTensor& t : params)
    out.insert(out.end(), t.tensor.span().begin(), t.tensor.span().end());
  return out;
}

}  // namespace dsgd::lessons
