// Horovod's state.sync() for dsgd's trainer: rank 0's training state (step, data position,
// loss, parameters, SGD momentum) made every rank's, over the Communicator. Elastic runs of
// processes need it: after a membership change only rank 0 holds the commit or checkpoint the
// survivors go on from.
#pragma once

#include "core/train/trainer.h"

namespace dsgd {

// Called on every rank: returns rank 0's `state` (which it must give; the others pass null
// and learn the shapes from config and data). Three broadcasts: a header, the parameters,
// and the momentum when there is one.
TrainState share_state(Communicator& comm, const TrainConfig& config, const Dataset& data,
                       const TrainState* state);

}  // namespace dsgd
