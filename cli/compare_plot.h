// The plots of `dsgd compare`: training loss (a moving average, as TensorBoard smooths it,
// on a log scale where it spans decades) and test accuracy, each against
// steps and against model time, one curve per run, drawn with PLplot (Debian's
// libplplot-dev, with its Cairo driver for PNG and SVG). Not the table: compare_command.cpp.
#pragma once

#include <string>
#include <vector>

namespace dsgd::cli {

struct Curve {
  std::string label;
  std::vector<double> step, model_s, loss;                // every step
  std::vector<double> eval_step, eval_model_s, accuracy;  // every evaluation (percent)
};

// Whether this build draws plots (it was built with PLplot).
bool can_plot();
// Writes the four panels to `path`, PNG or SVG by its extension (UsageError otherwise, or
// when the build has no PLplot); `title` heads the figure.
void write_plot(const std::string& path, const std::vector<Curve>& curves,
                const std::string& title);

}  // namespace dsgd::cli
