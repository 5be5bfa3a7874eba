// Datasets for training: a train split and a held-out test split of float32 feature rows
// with class labels (classification) or float targets (regression), loaded from a spec
// string such as "synthetic", "fashion-mnist", "csv:data.csv" or "idx:IMAGES,LABELS".
// Everything is loaded into memory; this is not a streaming loader.
// N = samples in a split, D = features, C = classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace dsgd {

enum class Task { classification, regression };

struct Split {
  Tensor x;                     // (N, D) float32 features
  std::vector<int32_t> labels;  // (N) class ids in [0, C), classification only
  std::vector<float> targets;   // (N) regression targets, regression only
  int64_t size() const { return x.shape().empty() ? 0 : x.dim(0); }
};

struct Dataset {
  std::string name;  // "synthetic", "fashion-mnist", "csv:PATH", "idx:PATH"
  Task task = Task::classification;
  int64_t features = 0;  // D
  int64_t classes = 0;   // C for classification; 1 for regression
  Split train, test;     // test = the held-out split used for accuracy
};

struct DataOptions {
  Task task = Task::classification;
};

// Valid specs (kHelp below spells them out for --help and error messages):
//   synthetic[:key=value,...]  keys train (8192), test (2048), features (32), classes (10),
//       noise (0.3), seed (1). Each class is a mixture of 3 Gaussian blobs whose centres lie
//       in a random 8-dimensional subspace, so the classes are not linearly separable: an
//       MLP 32-128-10 trained with SGD (lr 0.1, batch 256, 30 epochs) reaches ~98% test
//       accuracy, a linear softmax model ~75%. The data depend only on these keys (never on
//       the training seed) and are identical on every platform.
//       With Task::regression: targets = x.w + b + noise * N(0, 1) for a fixed random teacher.
//   fashion-mnist[:DIR]  the four IDX files from DIR (default /usr/share/datasets/fashion-
//       mnist, from `apt-get install dataset-fashion-mnist`), 60000 train / 10000 test,
//       D = 784 pixels scaled to [0, 1], C = 10.
//   idx:IMAGES,LABELS[,TEST_IMAGES,TEST_LABELS]  MNIST-format files, gzip or plain, unsigned
//       byte images (any shape, flattened, scaled to [0, 1]) and labels; C = max label + 1.
//   csv:PATH | csv:TRAIN,TEST  lines "f1,...,fD,label"; an optional header line; blank lines
//       and lines starting with '#' skipped. Classification labels are integers in
//       [0, 65535], C = max label + 1; regression labels are float targets.
// With a single file (csv:PATH, idx:IMAGES,LABELS) the test split is every 10th sample
// (indices i % 10 == 9) and the train split the other samples in file order.
// Throws UsageError for a bad spec and DataError for missing or malformed files.
Dataset load_dataset(const std::string& spec, const DataOptions& options = {});

inline constexpr const char* kDataSpecHelp =
    "synthetic[:key=value,...] | fashion-mnist[:DIR] | csv:PATH | csv:TRAIN,TEST | "
    "idx:IMAGES,LABELS[,TEST_IMAGES,TEST_LABELS]";

// FNV-1a 64 of the contents (task, D, C, both splits' shapes, features, labels, targets) in a
// fixed little-endian byte order, so ranks on different hosts can check that they train on
// the same data. The name and the file paths are not part of it.
uint64_t dataset_fingerprint(const Dataset& dataset);

}  // namespace dsgd
