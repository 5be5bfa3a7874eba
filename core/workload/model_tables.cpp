#include "core/workload/model_tables.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "core/workload/model_builders.h"

namespace dsgd {
namespace {

struct BuiltinModel {
  const char* name;
  Workload (*build)();
};

// The one list of built-in models: names, lookup and the error message all come from it.
constexpr BuiltinModel kBuiltinModels[] = {
    {"resnet50", resnet50_workload},
    {"bert-large", bert_large_workload},
    {"gpt2", gpt2_workload},
    {"gpt2-xl", gpt2_xl_workload},
};

}  // namespace

std::vector<std::string> builtin_workload_names() {
  std::vector<std::string> names;
  for (const BuiltinModel& model : kBuiltinModels)
    names.emplace_back(model.name);
  return names;
}

Workload builtin_workload(const std::string& name) {
  for (const BuiltinModel& model : kBuiltinModels)
    if (name == model.name) return model.build();
  throw UsageError(
      fmt::format("--workload {}: no such model; use {}, or a file in ASTRA-sim 1.0's format", name,
                  fmt::join(builtin_workload_names(), ", ")));
}

}  // namespace dsgd
