#include "cli/rank_zero.h"

#include <optional>

#include "core/train/state_share.h"

namespace dsgd::cli {

TrainHooks rank_zero_hooks(Communicator& comm, const sim::RunSpec& spec,
                           const sim::CheckpointPlan& plan, RankZeroOutputs& out) {
  TrainHooks hooks;
  if (comm.rank() != 0) return hooks;
  hooks.on_step = [&out](const StepMetrics& m) {
    if (out.metrics) out.metrics->write(m);
    out.progress.update(m);
  };
  const sim::CheckpointSpec& c = spec.outputs.checkpoint;
  if (c.every > 0) {  // every rank holds the same state: rank 0 writes it
    CheckpointConfig saved = plan.run_config;
    saved.world = comm.size();
    hooks.checkpoint_every = c.every;
    hooks.on_checkpoint = [&out, &c, saved](const TrainState& state) {
      out.last_checkpoint = save_checkpoint(c.dir, {saved, state}, c.keep);
    };
  }
  return hooks;
}

void train_round(Communicator& comm, const sim::ElasticRound& round, const TrainInputs& inputs,
                 const sim::RunSpec& spec, const sim::CheckpointPlan& plan, RankZeroOutputs& out,
                 RankZeroResult& rank0) {
  TrainHooks hooks = rank_zero_hooks(comm, spec, plan, out);
  if (hooks.on_step)  // the metrics' wall time counts from the first round's start
    hooks.on_step = [&, rank_zero = std::move(hooks.on_step)](const StepMetrics& m) {
      StepMetrics since_start = m;
      since_start.wall_s += round.wall_start_s;
      rank_zero(since_start);
      rank0.steps.push_back(m);
    };
  sim::add_round_hooks(hooks, comm, round);
  std::optional<TrainState> shared;
  if (round.shares_state)
    shared =
        share_state(comm, inputs.config, inputs.data, comm.rank() == 0 ? round.resume : nullptr);
  const TrainState* resume = shared         ? &*shared
                             : round.resume ? round.resume
                             : plan.resume  ? &plan.resume->state
                                            : nullptr;
  TrainResult r = run_training_on(comm, inputs, hooks, resume);
  if (comm.rank() == 0) rank0.result = std::move(r), rank0.finished = true;
}

}  // namespace dsgd::cli
