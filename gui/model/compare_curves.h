// The runs of `dsgd compare --json FILE` as curves for the convergence view, which
// `dsgd-gui --compare FILE` overlays (beside the live or replayed run's own). Not the
// drawing: gui/views/view_plots.cpp.
#pragma once

#include <string>
#include <vector>

#include "gui/model/snapshot.h"

namespace dsgd::gui {

// One curve per run, labelled as the run was (`compress=fp16`), with every step's loss (the
// moving average `dsgd compare --plot` draws, core/smoothing.h) and model time, and the
// evaluations' test accuracy. DataError naming the file (and the run)
// when it is not such a file.
std::vector<Curve> load_compare_curves(const std::string& path);

}  // namespace dsgd::gui
