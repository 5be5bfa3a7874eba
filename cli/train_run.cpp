#include "cli/train_run.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "cli/device_choice.h"
#include "core/errors.h"
#include "core/train/config_hash.h"

namespace dsgd::cli {

TrainConfig build_train_config(const TrainFlags& f) {
  TrainConfig c;
  c.model = ModelSpec::parse(f.model);
  c.global_batch = f.batch;
  c.sgd = {.lr = static_cast<float>(f.lr),
           .momentum = static_cast<float>(f.momentum),
           .weight_decay = static_cast<float>(f.weight_decay),
           .nesterov = f.nesterov};
  if (f.steps > 0 && f.epochs > 0) throw UsageError("give --steps or --epochs, not both");
  c.steps = f.steps;
  c.epochs = f.steps > 0 ? 0 : (f.epochs > 0 ? f.epochs : 5);
  c.seed = f.seed;
  c.shuffle = !f.no_shuffle;
  if (f.allreduce == "nccl") {
    // NCCL sums the gradients on the GPUs (cli/device_choice.h); everything else the
    // trainer reduces (the evaluation's sums) takes dsgd's automatic choice.
    if (f.device == "cpu")
      throw UsageError(
          "--allreduce nccl sums the gradients on GPUs: add --device cuda, or use --allreduce "
          "auto, naive, ring, tree, halving_doubling or native");
    c.allreduce = Algorithm::automatic;
  } else {
    try {
      c.allreduce = parse_algorithm(f.allreduce);
    } catch (const UsageError&) {
      throw UsageError(fmt::format(
          "unknown algorithm '{}': use auto, naive, ring, tree, halving_doubling, native, or "
          "nccl with --device cuda",
          f.allreduce));
    }
  }
  c.eval_every = f.eval_every;
  return c;
}

void check_output_path(const std::string& path, const char* flag) {
  if (path.empty()) return;
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("{} {}: directory '{}' does not exist; create it first", flag,
                                 path, dir.string()));
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{} {}: directory '{}' is not writable", flag, path, dir.string()));
  if (std::filesystem::is_directory(p, ec))
    throw UsageError(fmt::format("{} {}: is a directory; give a file name", flag, path));
}

TrainInputs load_train_inputs(const TrainFlags& f) {
  if (!(f.lr > 0) || !std::isfinite(f.lr))
    throw UsageError(fmt::format("--lr {}: the learning rate must be a positive number", f.lr));
  TrainInputs in;
  in.config = build_train_config(f);
  in.config.device = make_device_factory(f, in.config);  // checks --device first
  check_output_path(f.save, "--save");
  check_output_path(f.metrics, "--metrics");
  check_output_path(f.trace, "--trace");
  // linear is a regression model (MSE) on data that have targets (synthetic, CSV); on
  // image data it regresses one-hot labels, a classic first exercise.
  const bool regression = uses_mse(in.config.model) &&
                          (f.data.rfind("csv", 0) == 0 || f.data.rfind("synthetic", 0) == 0);
  in.data = load_dataset(f.data, {.task = regression ? Task::regression : Task::classification});
  validate(in.config, in.data);
  if (!f.init.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(f.init, ec))
      throw UsageError(fmt::format("--init {}: is a directory; give a .npz file", f.init));
    in.init = read_npz(f.init);
    // Check names and shapes now, with a clear message, before any node starts.
    Mlp probe =
        Mlp::from_spec(in.config.model, in.data.features, model_outputs(in.config.model, in.data));
    probe.load_state(in.init, "--init " + f.init);
    // NaN or Inf parameters (a diverged run's --save) would only train to NaN.
    for (const NamedTensor& t : in.init)
      for (int64_t i = 0; i < t.tensor.numel(); ++i)
        if (!std::isfinite(t.tensor[i]))
          throw DataError(fmt::format(
              "--init {}: {} holds {} at index {}; give parameters saved from a run that did "
              "not diverge, or leave out --init",
              f.init, t.name, std::isnan(t.tensor[i]) ? "NaN" : "Inf", i));
  }
  in.fingerprint = config_fingerprint(in.config) * 0x100000001b3ULL ^ dataset_fingerprint(in.data);
  return in;
}

TrainResult run_training_on(Communicator& comm, const TrainInputs& in, const TrainHooks& hooks) {
  return train(comm, in.data, in.config, in.init.empty() ? nullptr : &in.init, hooks);
}

}  // namespace dsgd::cli
