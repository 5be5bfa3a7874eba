#include "core/io/metrics.h"

#include <nlohmann/json.hpp>

#include "core/io/atomic_file.h"

namespace dsgd {

std::string to_json_line(const StepMetrics& m) {
  nlohmann::ordered_json j;
  j["step"] = m.step;
  j["epoch"] = m.epoch;
  j["loss"] = m.loss;
  if (m.train_accuracy) j["train_accuracy"] = *m.train_accuracy;
  if (m.test_loss) j["test_loss"] = *m.test_loss;
  if (m.test_accuracy) j["test_accuracy"] = *m.test_accuracy;
  j["wall_s"] = m.wall_s;
  if (m.model_s >= 0) j["model_s"] = m.model_s;
  j["compute_s"] = m.compute_s;
  j["comm_s"] = m.comm_s;
  j["bytes_sent"] = m.bytes_sent;
  if (m.staleness) j["staleness"] = *m.staleness;
  return j.dump();
}

MetricsWriter::MetricsWriter(const std::string& path) : file_(std::make_unique<AtomicFile>(path)) {}
MetricsWriter::~MetricsWriter() = default;

void MetricsWriter::write(const StepMetrics& m) {
  file_->stream() << to_json_line(m) << '\n';
}

void MetricsWriter::commit() {
  file_->commit();
}

}  // namespace dsgd
