#include "core/train/config_hash.h"

#include <fmt/format.h>

#include "core/fnv1a.h"

namespace dsgd {

ConfigFields config_fields(const TrainConfig& c) {
  const auto on_off = [](bool on) { return std::string(on ? "on" : "off"); };
  ConfigFields fields{
      {"--model", c.model.str()},
      {"--batch", std::to_string(c.global_batch)},
      {"--lr", fmt::format("{}", c.sgd.lr)},  // shortest text that reads back the same float
      {"--momentum", fmt::format("{}", c.sgd.momentum)},
      {"--dampening", fmt::format("{}", c.sgd.dampening)},
      {"--weight-decay", fmt::format("{}", c.sgd.weight_decay)},
      {"--nesterov", on_off(c.sgd.nesterov)},
      {"--steps", std::to_string(c.steps)},
      {"--epochs", std::to_string(c.epochs)},
      {"--seed", std::to_string(c.seed)},
      {"shuffling", on_off(c.shuffle)},
      {"--allreduce", to_string(c.allreduce)},
      {"--eval-every", std::to_string(c.eval_every)},
  };
  // Local SGD and compression change the updates, buckets the all_reduce's rounding. Each is only
  // named when set, so that the fingerprint of a run without them is what it always was.
  if (c.local_period > 0) {
    fields.push_back({"--local-sgd", std::to_string(c.local_period)});
    fields.push_back({"--local-sgd-start", std::to_string(c.local_start)});
  }
  if (c.bucket_bytes > 0) {
    fields.push_back({"--bucket-mb", bucket_mb_text(c.bucket_bytes)});
    fields.push_back({"--first-bucket-mb", bucket_mb_text(c.first_bucket_bytes)});
  }
  if (c.compress.kind != CompressSpec::Kind::none)
    fields.push_back({"--compress", c.compress.str()});
  if (c.parameter_servers > 0) {
    fields.push_back({"--parameter-servers", std::to_string(c.parameter_servers)});
    fields.push_back({"--max-staleness", std::to_string(c.max_staleness)});
  }
  if (c.compress.kind == CompressSpec::Kind::powersgd)
    fields.push_back({"--powersgd-start", std::to_string(c.powersgd_start)});
  return fields;
}

uint64_t config_fingerprint(const TrainConfig& c) {
  Fnv1a h;
  for (const auto& [flag, value] : config_fields(c)) {
    h.text(flag);
    h.text(value);
  }
  return h.value();
}

std::string first_difference(const ConfigFields& theirs, int their_rank, const ConfigFields& ours,
                             int our_rank) {
  for (size_t i = 0; i < theirs.size() && i < ours.size(); ++i)
    if (theirs[i] != ours[i])
      return fmt::format("{} {} on rank {}, {} on rank {}", theirs[i].first, theirs[i].second,
                         their_rank, ours[i].second, our_rank);
  return theirs.size() == ours.size() ? "" : "the flags differ";
}

}  // namespace dsgd
