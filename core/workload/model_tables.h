// The built-in workload tables: real models whose per-layer flops and gradient bytes are
// computed from each architecture's definition (resnet50_table.cpp, transformer_table.cpp),
// with the paper and reference implementation whose parameter counts they match. Not a model
// zoo: no weights, no values, only what a step's timing depends on.
#pragma once

#include <string>
#include <vector>

#include "core/workload/workload.h"

namespace dsgd {

// "resnet50", "bert-large", "gpt2", "gpt2-xl", in that order.
std::vector<std::string> builtin_workload_names();

// The table named `name`. UsageError naming the built-in models (and ASTRA-sim files) when
// there is no such model.
Workload builtin_workload(const std::string& name);

}  // namespace dsgd
