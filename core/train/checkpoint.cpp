// P = parameters. A checkpoint is an .npz: the parameters under their --save names,
// `optimizer.momentum_buffer.npy` (P) and `checkpoint.json`, a raw entry (np.load gives
// its bytes) with everything else. Floats are stored as their exact bits (.npy '<f4'), and
// the JSON's numbers print with enough digits to round-trip.
#include "core/train/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/fnv1a.h"
#include "core/io/npz.h"

namespace dsgd {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "dsgd-checkpoint";
constexpr int kVersion = 1;
constexpr const char* kMetaEntry = "checkpoint.json";
constexpr const char* kMomentumEntry = "optimizer.momentum_buffer";

std::string hex(uint64_t v) {
  return fmt::format("{:016x}", v);
}

// Names, shapes and values' bits of every tensor: a damaged file fails this check even
// where the zip's own CRC would not be consulted.
uint64_t tensors_checksum(const std::vector<NamedTensor>& params,
                          const std::vector<float>& momentum) {
  Fnv1a h;
  for (const NamedTensor& t : params) {
    h.text(t.name);
    for (int64_t d : t.tensor.shape())
      h.u64(static_cast<uint64_t>(d));
    for (float v : t.tensor.span())
      h.f32(v);
  }
  h.u64(momentum.size());
  for (float v : momentum)
    h.f32(v);
  return h.value();
}

json config_json(const CheckpointConfig& c) {
  json j = {{"model", c.model},
            {"data", c.data},
            {"data_hash", hex(c.data_hash)},
            {"batch", c.batch},
            {"lr", c.lr},
            {"momentum", c.momentum},
            {"dampening", c.dampening},
            {"weight_decay", c.weight_decay},
            {"nesterov", c.nesterov},
            {"seed", c.seed},
            {"shuffle", c.shuffle},
            {"allreduce", c.allreduce},
            {"world", c.world}};
  if (c.bucket_bytes > 0) {
    j["bucket_bytes"] = c.bucket_bytes;
    j["first_bucket_bytes"] = c.first_bucket_bytes;
  }
  return j;
}

uint64_t parse_hex(const json& j) {
  const std::string s = j.get<std::string>();
  size_t used = 0;
  const uint64_t v = std::stoull(s, &used, 16);
  if (used != s.size() || s.size() != 16) throw std::invalid_argument("not 16 hex digits");
  return v;
}

CheckpointConfig config_from_json(const json& j) {
  CheckpointConfig c;
  c.model = j.at("model").get<std::string>();
  c.data = j.at("data").get<std::string>();
  c.data_hash = parse_hex(j.at("data_hash"));
  c.batch = j.at("batch").get<int64_t>();
  c.lr = j.at("lr").get<float>();
  c.momentum = j.at("momentum").get<float>();
  c.dampening = j.at("dampening").get<float>();
  c.weight_decay = j.at("weight_decay").get<float>();
  c.nesterov = j.at("nesterov").get<bool>();
  c.seed = j.at("seed").get<uint64_t>();
  c.shuffle = j.at("shuffle").get<bool>();
  c.allreduce = j.at("allreduce").get<std::string>();
  c.world = j.at("world").get<int>();
  c.bucket_bytes = j.value("bucket_bytes", int64_t{0});
  c.first_bucket_bytes = j.value("first_bucket_bytes", int64_t{0});
  return c;
}

// "P: not a .npz archive (...); save parameters with ..." -> "not a .npz archive (...)":
// the caller names the file and says what to do instead.
std::string reason_only(const std::string& what, const std::string& path) {
  const std::string prefix = path + ": ";
  std::string why = what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
  return why.substr(0, why.find("; "));
}

// "ckpt-" + 10 digits + ".npz", exactly what checkpoint_file_name writes.
bool is_checkpoint_name(const std::string& name) {
  constexpr std::string_view kPrefix = "ckpt-", kSuffix = ".npz";
  constexpr size_t kDigits = 10;
  if (name.size() != kPrefix.size() + kDigits + kSuffix.size()) return false;
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  if (name.compare(kPrefix.size() + kDigits, kSuffix.size(), kSuffix) != 0) return false;
  return std::all_of(name.begin() + kPrefix.size(), name.begin() + kPrefix.size() + kDigits,
                     [](char ch) { return ch >= '0' && ch <= '9'; });
}

}  // namespace

uint64_t CheckpointConfig::hash() const {
  Fnv1a h;
  h.text(model);
  h.u64(data_hash);
  h.u64(static_cast<uint64_t>(batch));
  h.f32(lr);
  h.f32(momentum);
  h.f32(dampening);
  h.f32(weight_decay);
  h.u64(nesterov);
  h.u64(seed);
  h.u64(shuffle);
  h.text(allreduce);
  h.u64(static_cast<uint64_t>(world));
  if (bucket_bytes > 0) {
    h.u64(static_cast<uint64_t>(bucket_bytes));
    h.u64(static_cast<uint64_t>(first_bucket_bytes));
  }
  return h.value();
}

CheckpointConfig checkpoint_config(const TrainConfig& config, const Dataset& data, int world) {
  return {.model = config.model.str(),
          .data = data.name,
          .data_hash = dataset_fingerprint(data),
          .batch = config.global_batch,
          .lr = config.sgd.lr,
          .momentum = config.sgd.momentum,
          .dampening = config.sgd.dampening,
          .weight_decay = config.sgd.weight_decay,
          .nesterov = config.sgd.nesterov,
          .seed = config.seed,
          .shuffle = config.shuffle,
          .allreduce = to_string(config.allreduce),
          .world = world,
          .bucket_bytes = config.bucket_bytes,
          .first_bucket_bytes = config.bucket_bytes > 0 ? config.first_bucket_bytes : 0};
}

namespace {
// FNV-1a 64 of the metadata as nlohmann writes it compactly (keys sorted), without its own
// checksum: a changed step or position is caught even where the zip's CRC was made anew.
uint64_t meta_checksum(const json& meta) {
  Fnv1a h;
  h.raw(meta.dump());
  return h.value();
}
}  // namespace

std::string checkpoint_file_name(int64_t step) {
  return fmt::format("ckpt-{:010d}.npz", step);
}

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  const TrainState& s = c.state;
  json meta = {
      {"format", kFormat},
      {"version", kVersion},
      {"step", s.step},
      {"epoch", s.epoch},
      {"loss", std::isfinite(s.loss) ? json(s.loss) : json(nullptr)},
      // The next batch is batch `next_step` of the sampler; its generator for an epoch e
      // is Rng(seed, e + 1) (core/data/sampler.h), so (seed, epoch) is the random state.
      {"data_position",
       {{"next_step", s.step}, {"epoch", s.epoch}, {"batch_in_epoch", s.batch_in_epoch}}},
      {"random_state", {{"seed", c.config.seed}, {"sampler_stream", s.epoch + 1}}},
      {"config", config_json(c.config)},
      {"config_hash", hex(c.config.hash())},
      {"tensors_fnv1a", hex(tensors_checksum(s.params, s.momentum))},
  };
  meta["meta_fnv1a"] = hex(meta_checksum(meta));
  std::vector<NamedTensor> tensors = s.params;
  if (!s.momentum.empty())
    tensors.push_back(
        {kMomentumEntry, Tensor({static_cast<int64_t>(s.momentum.size())}, s.momentum)});
  write_npz(path, tensors, {{kMetaEntry, meta.dump(2) + "\n"}});
}

Checkpoint read_checkpoint(const std::string& path) {
  auto damaged = [&](const std::string& why) {
    return DataError(fmt::format(
        "checkpoint {} is damaged or not a dsgd checkpoint: {}; resume from another one", path,
        why));
  };
  NpzArchive archive;
  try {
    archive = read_npz_archive(path);
  } catch (const DataError& e) {
    if (!fs::exists(path))
      throw DataError(fmt::format("checkpoint {} does not exist; check the path", path));
    throw damaged(reason_only(e.what(), path));
  }
  auto meta_it = std::find_if(archive.blobs.begin(), archive.blobs.end(),
                              [](const NpzBlob& b) { return b.name == kMetaEntry; });
  if (meta_it == archive.blobs.end()) throw damaged(fmt::format("it has no {}", kMetaEntry));
  Checkpoint c;
  uint64_t saved_hash = 0, saved_checksum = 0;
  try {
    const json meta = json::parse(meta_it->bytes);
    if (meta.at("format") != kFormat) throw std::invalid_argument("wrong format");
    if (meta.at("version") != kVersion)
      throw damaged(fmt::format("version {} (this dsgd reads version {})",
                                meta.at("version").dump(), kVersion));
    c.config = config_from_json(meta.at("config"));
    c.state.step = meta.at("step").get<int64_t>();
    c.state.epoch = meta.at("epoch").get<int64_t>();
    c.state.batch_in_epoch = meta.at("data_position").at("batch_in_epoch").get<int64_t>();
    const json& loss = meta.at("loss");
    c.state.loss = loss.is_null() ? std::numeric_limits<double>::quiet_NaN() : loss.get<double>();
    saved_hash = parse_hex(meta.at("config_hash"));
    saved_checksum = parse_hex(meta.at("tensors_fnv1a"));
    json rest = meta;
    rest.erase("meta_fnv1a");
    if (parse_hex(meta.at("meta_fnv1a")) != meta_checksum(rest))
      throw damaged(fmt::format("{} does not match its checksum (meta_fnv1a)", kMetaEntry));
  } catch (const DataError&) {
    throw;
  } catch (const std::exception& e) {
    throw damaged(fmt::format("{} is malformed ({})", kMetaEntry, e.what()));
  }
  if (c.state.step < 1 || c.state.epoch < 0 || c.state.batch_in_epoch < 0)
    throw damaged(fmt::format("step {} epoch {} in {}", c.state.step, c.state.epoch, kMetaEntry));
  if (saved_hash != c.config.hash())
    throw damaged(fmt::format("config_hash {} does not match its configuration", hex(saved_hash)));
  for (NamedTensor& t : archive.tensors) {
    if (t.name == kMomentumEntry) {
      c.state.momentum.assign(t.tensor.span().begin(), t.tensor.span().end());
    } else {
      c.state.params.push_back(std::move(t));
    }
  }
  if (c.state.params.empty()) throw damaged("it holds no parameters");
  if (tensors_checksum(c.state.params, c.state.momentum) != saved_checksum)
    throw damaged("its tensors do not match their checksum");
  return c;
}

void check_same_config(const CheckpointConfig& saved, const CheckpointConfig& run,
                       const std::string& path) {
  if (saved.hash() == run.hash()) return;
  std::string what;
  auto differ = [&](const char* flag, const auto& there, const auto& here) {
    // (strings are compared as std::string, never as pointers)
    if (what.empty() && !(there == here))
      what = fmt::format("{} {} there, {} here", flag, there, here);
  };
  differ("--model", saved.model, run.model);
  if (what.empty() && saved.data_hash != run.data_hash)
    what = fmt::format("--data differs ({} there, {} here, or the same name with other contents)",
                       saved.data, run.data);
  differ("--batch", saved.batch, run.batch);
  differ("--lr", saved.lr, run.lr);
  differ("--momentum", saved.momentum, run.momentum);
  differ("--dampening", saved.dampening, run.dampening);
  differ("--weight-decay", saved.weight_decay, run.weight_decay);
  auto on_off = [](bool on) { return std::string(on ? "on" : "off"); };
  differ("--nesterov", on_off(saved.nesterov), on_off(run.nesterov));
  differ("--seed", saved.seed, run.seed);
  differ("shuffling", on_off(saved.shuffle), on_off(run.shuffle));
  differ("--allreduce", saved.allreduce, run.allreduce);
  differ("--nodes", saved.world, run.world);
  differ("--bucket-mb", bucket_mb_text(saved.bucket_bytes), bucket_mb_text(run.bucket_bytes));
  differ("--first-bucket-mb", bucket_mb_text(saved.first_bucket_bytes),
         bucket_mb_text(run.first_bucket_bytes));
  if (what.empty()) what = "the configuration hash differs";
  throw UsageError(fmt::format(
      "checkpoint {} is from a different run ({}); resume with that run's flags, or start "
      "afresh without --resume in another --checkpoint-dir",
      path, what));
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_checkpoint_name(name) && it->is_regular_file(ec)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());  // fixed-width step numbers: by step
  std::vector<std::string> paths;
  for (const std::string& name : names)
    paths.push_back((fs::path(dir) / name).string());
  return paths;
}

std::string save_checkpoint(const std::string& dir, const Checkpoint& checkpoint, int keep) {
  const std::string path = (fs::path(dir) / checkpoint_file_name(checkpoint.state.step)).string();
  write_checkpoint(path, checkpoint);
  std::vector<std::string> all = list_checkpoints(dir);
  const size_t kept = static_cast<size_t>(std::max(keep, 1));
  for (size_t i = 0; i + kept < all.size(); ++i) {
    std::error_code ec;
    fs::remove(all[i], ec);  // best effort: an old checkpoint left behind harms nothing
  }
  return path;
}

FoundCheckpoint find_latest_checkpoint(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw DataError(fmt::format(
        "--checkpoint-dir {}: no such directory, so nothing to resume; check the path, or "
        "drop --resume to start afresh",
        dir));
  std::vector<std::string> all = list_checkpoints(dir);
  if (all.empty())
    throw DataError(
        fmt::format("--checkpoint-dir {}: no checkpoint (ckpt-NNNNNNNNNN.npz) to resume from; drop "
                    "--resume to start afresh",
                    dir));
  FoundCheckpoint found;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      found.checkpoint = read_checkpoint(*it);
      found.path = *it;
      return found;
    } catch (const DataError& e) {
      found.skipped.push_back(e.what());
    }
  }
  throw DataError(
      fmt::format("--checkpoint-dir {}: all {} checkpoints are damaged (newest: {}); start afresh "
                  "without --resume",
                  dir, all.size(), found.skipped.front()));
}

}  // namespace dsgd
