// Model parameters <-> named tensors (the .npz layout of --init and --save).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/npz.h"
#include "core/nn/model.h"

namespace dsgd {

std::vector<NamedTensor> Model::state() const {
  std::vector<NamedTensor> out;
  out.reserve(params_.size());
  for (const ParamInfo& p : params_) {
    auto first = values_.begin() + p.offset;
    out.push_back({p.name, Tensor(p.shape, std::vector<float>(first, first + p.numel))});
  }
  return out;
}

void Model::load_state(const std::vector<NamedTensor>& tensors, const std::string& source) {
  const std::string hint = "train with the same --model and --data";
  std::set<std::string> seen;
  for (const NamedTensor& t : tensors) {
    if (!seen.insert(t.name).second)
      throw DataError(fmt::format("{}: {} appears twice", source, t.name));
  }
  // Check everything before copying anything, so a failed load leaves the model unchanged.
  std::vector<const NamedTensor*> found;
  for (const ParamInfo& p : params_) {
    auto it = std::find_if(tensors.begin(), tensors.end(),
                           [&](const NamedTensor& t) { return t.name == p.name; });
    if (it == tensors.end())
      throw DataError(fmt::format("{}: has no {}, the model needs one of shape {}; {}", source,
                                  p.name, shape_str(p.shape), hint));
    if (it->tensor.shape() != p.shape)
      throw DataError(fmt::format("{}: {} has shape {}, the model needs {}; {}", source, p.name,
                                  shape_str(it->tensor.shape()), shape_str(p.shape), hint));
    found.push_back(&*it);
  }
  if (tensors.size() != params_.size()) {
    for (const NamedTensor& t : tensors) {
      bool known = std::any_of(params_.begin(), params_.end(),
                               [&](const ParamInfo& p) { return p.name == t.name; });
      if (!known)
        throw DataError(
            fmt::format("{}: {} is not a parameter of this model (layers.0 to "
                        "layers.{}); {}",
                        source, t.name, num_layers() - 1, hint));
    }
  }
  for (size_t i = 0; i < params_.size(); ++i)
    std::copy(found[i]->tensor.data(), found[i]->tensor.data() + params_[i].numel,
              values_.begin() + params_[i].offset);
}

}  // namespace dsgd
