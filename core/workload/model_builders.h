// Builders of the built-in tables, one per model, for model_tables.cpp to pick from by name.
// Internal to core/workload: callers use builtin_workload() (model_tables.h).
#pragma once

#include "core/workload/workload.h"

namespace dsgd {

// What every table assumes: float32 gradients, and plain SGD's update (w -= lr * g).
inline constexpr int64_t kBytesPerGrad = 4;
inline constexpr double kSgdFlopsPerParam = 2;

Workload resnet50_workload();    // resnet50_table.cpp
Workload bert_large_workload();  // transformer_table.cpp
Workload gpt2_workload();        // transformer_table.cpp
Workload gpt2_xl_workload();     // transformer_table.cpp

}  // namespace dsgd
