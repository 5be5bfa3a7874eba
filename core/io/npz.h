// NumPy .npz archives of named float32 tensors: the format of --init and --save, so that
// np.load / np.savez and torch state dicts (via numpy) read and write the same files.
// Only float32 C-order arrays are written; float64 is accepted on read and narrowed.
// Not a general NumPy reader: integer, complex, structured and Fortran-order arrays are refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace dsgd {

struct NamedTensor {
  std::string name;  // "layers.0.weight": the archive entry without its ".npy" suffix
  Tensor tensor;
};

// Reads every entry of the archive, in archive order. Throws DataError naming the file and
// the entry for a missing file, a non-zip file, an entry that is not a float32/float64
// little-endian C-order .npy array, or one that declares more than `max_entry_bytes`
// (checked before anything is inflated: a 200-byte archive may claim 4 GiB).
inline constexpr uint64_t kNoNpzLimit = ~uint64_t{0};
std::vector<NamedTensor> read_npz(const std::string& path, uint64_t max_entry_bytes = kNoNpzLimit);

// An archive entry kept as raw bytes rather than a .npy array: a document beside the
// tensors (a checkpoint's JSON). Its name is the whole entry name ("checkpoint.json");
// np.load returns its bytes.
struct NpzBlob {
  std::string name;
  std::string bytes;
};

struct NpzArchive {
  std::vector<NamedTensor> tensors;  // the NAME.npy entries, in archive order
  std::vector<NpzBlob> blobs;        // every other entry
};

// As read_npz, but entries that are not NAME.npy are returned as blobs instead of refused.
NpzArchive read_npz_archive(const std::string& path, uint64_t max_entry_bytes = kNoNpzLimit);

// Writes an uncompressed archive with one NAME.npy (NPY format 1.0, '<f4') per tensor, in
// the given order, atomically (see AtomicFile). Identical input gives identical bytes.
// Throws UsageError for an empty or duplicate name, DataError when the file cannot be written.
void write_npz(const std::string& path, const std::vector<NamedTensor>& tensors);
// The same, followed by `extra` entries stored as they are (names unique, not ending .npy).
void write_npz(const std::string& path, const std::vector<NamedTensor>& tensors,
               const std::vector<NpzBlob>& extra);

// The .npy encoding of one tensor and its inverse; `where` names the source in errors
// ("params.npz: entry 'layers.0.weight'").
std::string encode_npy(const Tensor& tensor);
Tensor decode_npy(std::string_view bytes, const std::string& where);

}  // namespace dsgd
