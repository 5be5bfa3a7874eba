#include "core/train/state_share.h"

#include <array>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/comm/byte_floats.h"
#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/nn/model.h"

namespace dsgd {
namespace {

// step, epoch, batch_in_epoch, loss (its bits) and the momentum's length, as 64-bit words.
constexpr size_t kHeaderWords = 5;
using Header = std::array<uint64_t, kHeaderWords>;

Header header_of(const TrainState& s) {
  return {static_cast<uint64_t>(s.step), static_cast<uint64_t>(s.epoch),
          static_cast<uint64_t>(s.batch_in_epoch), std::bit_cast<uint64_t>(s.loss),
          static_cast<uint64_t>(s.momentum.size())};
}

// Rank 0's header, on every rank.
Header share_header(Communicator& comm, const TrainState* state, Algorithm algorithm) {
  Header h{};
  std::array<uint8_t, sizeof(Header)> bytes{};
  if (comm.rank() == 0) {
    h = header_of(*state);
    std::memcpy(bytes.data(), h.data(), bytes.size());
  }
  std::vector<float> floats = bytes_to_floats(bytes);
  broadcast(comm, floats, 0, {.algorithm = algorithm});
  floats_to_bytes(floats, bytes);
  std::memcpy(h.data(), bytes.data(), bytes.size());
  return h;
}

}  // namespace

TrainState share_state(Communicator& comm, const TrainConfig& config, const Dataset& data,
                       const TrainState* state) {
  if (comm.rank() == 0 && !state) throw std::logic_error("share_state: rank 0 gives no state");
  Model model = Model::from_spec(config.model, data.features, model_outputs(config.model, data));
  const Algorithm algorithm =
      training_algorithms(config, comm.size(), model.num_params()).broadcast;
  const Header h = share_header(comm, state, algorithm);
  if (comm.rank() == 0) model.load_state(state->params, "the state to share");
  broadcast(comm, model.values(), 0, {.algorithm = algorithm});
  TrainState shared{.step = static_cast<int64_t>(h[0]),
                    .epoch = static_cast<int64_t>(h[1]),
                    .batch_in_epoch = static_cast<int64_t>(h[2]),
                    .loss = std::bit_cast<double>(h[3]),
                    .params = model.state()};
  if (h[4] != 0 && h[4] != static_cast<uint64_t>(model.num_params()))
    throw CommError(fmt::format("rank {}: rank 0's momentum holds {} floats, not the model's {}",
                                comm.rank(), h[4], model.num_params()),
                    0);
  if (comm.rank() == 0) shared.momentum = state->momentum;
  shared.momentum.resize(h[4]);
  if (h[4] > 0) broadcast(comm, shared.momentum, 0, {.algorithm = algorithm});
  return shared;
}

}  // namespace dsgd
