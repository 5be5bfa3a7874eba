// MetricsWriter: one JSON object per line (JSONL) per training step, for plotting and for
// scripts. Written through an AtomicFile: the file appears, complete, when the run ends
// (commit), and a failed run leaves no half-written file behind.
#pragma once

#include <memory>
#include <string>

#include "core/train/trainer.h"

namespace dsgd {

class AtomicFile;

class MetricsWriter {
 public:
  explicit MetricsWriter(const std::string& path);  // DataError if it cannot be created
  ~MetricsWriter();
  // {"step":1,"epoch":0,"loss":2.3,"train_accuracy":0.1,"test_loss":..,"test_accuracy":..,
  //  "wall_s":..,"model_s":..,"compute_s":..,"comm_s":..,"bytes_sent":..}; test_* only when
  //  evaluated, model_s only on a backend with a model clock (the simulator).
  void write(const StepMetrics& m);
  void commit();

 private:
  std::unique_ptr<AtomicFile> file_;
};

std::string to_json_line(const StepMetrics& m);

}  // namespace dsgd
