// Progress of a training run on the terminal: a one-line bar redrawn in place when stderr
// is a TTY, plain lines (about every 10 % and at each evaluation) when it is not, so logs
// of headless and cluster runs stay readable.
#pragma once

#include <cstdint>
#include <cstdio>

#include "core/train/trainer.h"

namespace dsgd::cli {

class Progress {
 public:
  Progress(int64_t total_steps, bool quiet, std::FILE* out = stderr);
  void update(const StepMetrics& m);
  void finish();  // ends the bar's line

 private:
  int64_t total_;
  bool quiet_;
  bool tty_;
  std::FILE* out_;
  int64_t next_line_step_ = 0;
  double last_draw_s_ = -1;
  bool drawn_ = false;
};

}  // namespace dsgd::cli
