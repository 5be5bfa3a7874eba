// Internal to core/data: one loader per dataset kind, called by load_dataset() after it
// has split the spec, plus helpers they share. Not part of the public API; include
// core/data/dataset.h instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/dataset.h"

namespace dsgd::data {

Dataset load_synthetic(std::string_view options, const std::string& spec, Task task);
Dataset load_fashion_mnist(const std::string& dir);
Dataset load_idx(const std::vector<std::string>& paths);
Dataset load_csv(const std::vector<std::string>& paths, Task task);

// Rows i % 10 == 9 of `all` go to test, the rest (in order) to train.
void hold_out_every_10th(const Split& all, Split& train, Split& test);

// C = max label + 1 over both splits (0 when both are empty).
int64_t count_classes(const Split& train, const Split& test);

}  // namespace dsgd::data
