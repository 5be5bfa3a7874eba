#include "core/train/rank_setup.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "core/train/cpu_device.h"

namespace dsgd {

int64_t start(Communicator& comm, const TrainConfig& config, int64_t steps, Model& model, Sgd& sgd,
              const std::vector<NamedTensor>* init, const TrainState* resume,
              Algorithm broadcast_algorithm) {
  int64_t first_step = 0;
  if (resume) {
    if (resume->step < 0 || resume->step > steps)
      throw UsageError(fmt::format(
          "the checkpoint is at step {}, beyond this run's {} steps; resume with --steps {} "
          "or more",
          resume->step, steps, resume->step));
    model.load_state(resume->params, "checkpoint");
    if (!resume->momentum.empty()) sgd.set_momentum_buffer(resume->momentum, "checkpoint");
    first_step = resume->step;
  } else if (init) {
    model.load_state(*init, "--init");
  } else {
    model.init(config.seed);
  }
  broadcast(comm, model.values(), 0, {.algorithm = broadcast_algorithm});
  return first_step;
}

std::unique_ptr<ComputeDevice> make_device(Communicator& comm, const TrainConfig& config,
                                           const Dataset& data, Model& model, Sgd& sgd) {
  if (config.device && model.mlp_sizes().empty())
    throw UsageError(fmt::format("--model {} runs on --device cpu only", config.model.str()));
  std::unique_ptr<ComputeDevice> device =
      config.device ? config.device(comm, model.mlp_sizes(), config.sgd, kExtra)
                    : std::make_unique<CpuDevice>(model, sgd, uses_mse(config.model));
  device->load_data(data);
  device->set_params(model.values());
  if (sgd.has_momentum_buffer()) device->set_momentum(sgd.momentum_buffer());
  return device;
}

bool evaluates_after(const TrainConfig& config, int64_t step, int64_t steps, int64_t index_in_epoch,
                     int64_t batches_per_epoch) {
  if (step + 1 == steps) return true;
  if (config.eval_every > 0) return (step + 1) % config.eval_every == 0;
  return index_in_epoch == batches_per_epoch - 1;  // the epoch's end
}

}  // namespace dsgd
