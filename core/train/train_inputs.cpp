#include "core/train/train_inputs.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/train/config_hash.h"

namespace dsgd {

namespace {

uint64_t max_parameter_bytes(const Model& model) {
  int64_t largest = 0;
  for (const ParamInfo& p : model.params())
    largest = std::max(largest, p.numel);
  return static_cast<uint64_t>(largest) * sizeof(double) + 65536;
}

}  // namespace

TrainInputs load_train_inputs(const TrainConfig& config, const std::string& data_spec,
                              const std::string& init_path) {
  TrainInputs in;
  in.config = config;
  // linear is a regression model (MSE) on data that have targets (synthetic, CSV); on
  // image data it regresses one-hot labels, a classic first exercise.
  const bool regression = uses_mse(in.config.model) &&
                          (data_spec.rfind("csv", 0) == 0 || data_spec.rfind("synthetic", 0) == 0);
  in.data = load_dataset(data_spec, {.task = regression ? Task::regression : Task::classification});
  validate(in.config, in.data);
  if (!init_path.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(init_path, ec))
      throw UsageError(fmt::format("--init {}: is a directory; give a .npz file", init_path));
    // Check names and shapes now, with a clear message, before any node starts; no entry may
    // be larger than the largest parameter as float64 with a generous .npy header.
    Model probe = Model::from_spec(in.config.model, in.data.features,
                                   model_outputs(in.config.model, in.data));
    in.init = read_npz(init_path, max_parameter_bytes(probe));
    probe.load_state(in.init, "--init " + init_path);
    // NaN or Inf parameters (a diverged run's --save) would only train to NaN.
    for (const NamedTensor& t : in.init)
      for (int64_t i = 0; i < t.tensor.numel(); ++i)
        if (!std::isfinite(t.tensor[i]))
          throw DataError(fmt::format(
              "--init {}: {} holds {} at index {}; give parameters saved from a run that did "
              "not diverge, or leave out --init",
              init_path, t.name, std::isnan(t.tensor[i]) ? "NaN" : "Inf", i));
  }
  in.fingerprint = config_fingerprint(in.config) * 0x100000001b3ULL ^ dataset_fingerprint(in.data);
  return in;
}

TrainResult run_training_on(Communicator& comm, const TrainInputs& in, const TrainHooks& hooks,
                            const TrainState* resume) {
  return train(comm, in.data, in.config, in.init.empty() ? nullptr : &in.init, hooks, resume);
}

}  // namespace dsgd
