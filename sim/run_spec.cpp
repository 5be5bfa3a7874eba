// Sections: [train config] [labels] [json].
#include "sim/run_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "sim/cluster_shape.h"
#include "sim/link_model.h"

namespace dsgd::sim {

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::mpi:
      return "mpi";
    case Backend::simgrid:
      return "simgrid";
    case Backend::sim:
      break;
  }
  return "sim";
}

Backend parse_backend(const std::string& text, const char* flag) {
  for (Backend b : {Backend::sim, Backend::mpi, Backend::simgrid})
    if (text == to_string(b)) return b;
  throw UsageError(fmt::format("{} {}: use sim, mpi or simgrid", flag, text));
}

// ---------------------------------------------------------------------------------------
// [train config]
// ---------------------------------------------------------------------------------------

TrainConfig train_config(const RunSpec& s) {
  TrainConfig c;
  c.model = ModelSpec::parse(s.model);
  c.global_batch = s.batch;
  c.sgd = s.sgd;
  c.steps = s.steps;
  c.epochs = s.steps > 0 ? 0 : s.epochs;
  c.seed = s.seed;
  c.shuffle = s.shuffle;
  // With NCCL the GPUs sum the gradients; everything else the trainer reduces (the
  // evaluation's sums) takes dsgd's automatic choice.
  c.allreduce = s.nccl ? Algorithm::automatic : s.allreduce;
  c.eval_every = s.eval_every;
  c.local_period = s.local_sgd;
  c.local_start = s.local_sgd_start;
  if (!s.compress.empty()) c.compress = CompressSpec::parse(s.compress);
  c.powersgd_start = s.powersgd_start;
  c.parameter_servers = s.parameter_servers;
  c.max_staleness = s.max_staleness;
  if (s.bucket_mb > 0) {
    c.bucket_bytes = std::max<int64_t>(1, bucket_cap_bytes(s.bucket_mb));
    c.first_bucket_bytes = std::max<int64_t>(1, bucket_cap_bytes(s.first_bucket_mb));
  }
  return c;
}

std::string allreduce_name(const RunSpec& s) {
  return s.nccl ? "nccl" : to_string(s.allreduce);
}

// ---------------------------------------------------------------------------------------
// [labels]
// ---------------------------------------------------------------------------------------

namespace {

std::string say(const char* words, auto&&... args) {
  return fmt::format(fmt::runtime(words), args...);
}

// Which links an override changes: "link 0->1", "links from 2", "links to 3", "every link".
std::string override_links(const LinkOverride& o, const RunWords& w) {
  if (o.from >= 0 && o.to >= 0) return say(w.link, o.from, o.to);
  if (o.from >= 0) return say(w.links_from, o.from);
  if (o.to >= 0) return say(w.links_to, o.to);
  return w.every_link;
}

// The overrides themselves when there are few ("; link 0->1: latency 30 ms"), a count when
// there are many: a caption that says 10 ms must not hide the one link at 30 ms.
std::string describe_overrides(const std::vector<LinkOverride>& overrides, const RunWords& w) {
  constexpr size_t kListed = 3;
  if (overrides.size() > kListed) return ", " + say(w.link_overrides, overrides.size());
  std::string s;
  for (const LinkOverride& o : overrides) {
    std::vector<std::string> what;
    if (o.latency_s) what.push_back(say(w.latency, format_duration(*o.latency_s)));
    if (o.bandwidth_Bps) what.push_back(say(w.bandwidth, format_bandwidth(*o.bandwidth_Bps)));
    if (o.jitter_s) what.push_back(say(w.jitter, format_duration(*o.jitter_s)));
    if (o.loss) what.push_back(say(w.loss, *o.loss));
    s += fmt::format("; {}: {}", override_links(o, w), fmt::join(what, ", "));
  }
  return s;
}

}  // namespace

std::string describe_network(const ClusterOptions& c, const RunWords& w) {
  const LinkSpec& l = c.network.link;
  const char* latency = is_cluster_topology(c.network.topology) ? w.latency_per_link : w.latency;
  std::string s = fmt::format("{}, {}, {}", say(latency, format_duration(l.latency_s)),
                              say(w.bandwidth, format_bandwidth(l.bandwidth_Bps)),
                              describe_topology(c.network, c.nodes));
  if (l.jitter_s > 0) s += ", " + say(w.jitter, format_duration(l.jitter_s));
  if (l.loss > 0) s += ", " + say(w.loss, l.loss);
  s += describe_overrides(c.network.overrides, w);
  if (!c.node_overrides.empty()) s += ", " + say(w.faulty_nodes, c.node_overrides.size());
  if (!c.network.outages.empty()) s += ", " + say(w.outages, c.network.outages.size());
  return s;
}

std::string describe_run(const RunSpec& s, const RunWords& w) {
  const LinkSpec& l = s.cluster.network.link;
  std::string out = fmt::format("{}, {}", allreduce_name(s), say(w.nodes, s.cluster.nodes));
  if (s.bucket_mb > 0) out += ", " + say(w.buckets, s.bucket_mb);
  if (s.local_sgd > 0) out += ", " + say(w.local_sgd, s.local_sgd, s.local_sgd_start);
  if (!s.compress.empty()) out += ", " + say(w.compress, s.compress);
  if (s.parameter_servers > 0)
    out += ", " +
           say(w.servers, s.parameter_servers,
               s.max_staleness < 0 ? std::string(w.unbounded) : std::to_string(s.max_staleness));
  if (l.latency_s > 0) out += ", " + format_duration(l.latency_s);
  if (l.bandwidth_Bps > 0) out += ", " + format_bandwidth(l.bandwidth_Bps);
  bool straggler = false;
  for (const auto& [rank, node] : s.cluster.node_overrides)
    straggler |= node.straggler != 1.0;
  if (straggler) out += std::string(", ") + w.straggler;
  if (!s.scenario.empty()) {  // its name, unless the words already said it ("straggler")
    const auto slash = s.scenario.find_last_of('/');
    const std::string name = s.scenario.substr(slash == std::string::npos ? 0 : slash + 1);
    if (out.find(name) == std::string::npos) out += " (" + name + ")";
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// [json]
// ---------------------------------------------------------------------------------------

namespace {

using nlohmann::json;

json link_json(const LinkSpec& l) {
  return {{"latency_s", l.latency_s},
          {"bandwidth_Bps", l.bandwidth_Bps},
          {"jitter_s", l.jitter_s},
          {"loss", l.loss}};
}

LinkSpec link_from(const json& j) {
  LinkSpec l;
  l.latency_s = j.value("latency_s", 0.0);
  l.bandwidth_Bps = j.value("bandwidth_Bps", 0.0);
  l.jitter_s = j.value("jitter_s", 0.0);
  l.loss = j.value("loss", 0.0);
  return l;
}

json override_json(const LinkOverride& o) {
  json j = {{"from", o.from}, {"to", o.to}};
  if (o.latency_s) j["latency_s"] = *o.latency_s;
  if (o.bandwidth_Bps) j["bandwidth_Bps"] = *o.bandwidth_Bps;
  if (o.jitter_s) j["jitter_s"] = *o.jitter_s;
  if (o.loss) j["loss"] = *o.loss;
  return j;
}

std::optional<double> optional_number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

LinkOverride override_from(const json& j) {
  LinkOverride o{.from = j.value("from", -1), .to = j.value("to", -1)};
  o.latency_s = optional_number(j, "latency_s");
  o.bandwidth_Bps = optional_number(j, "bandwidth_Bps");
  o.jitter_s = optional_number(j, "jitter_s");
  o.loss = optional_number(j, "loss");
  return o;
}

json network_json(const NetworkConfig& n) {
  json overrides = json::array(), outages = json::array();
  for (const LinkOverride& o : n.overrides)
    overrides.push_back(override_json(o));
  for (const Outage& o : n.outages)
    outages.push_back({{"links", o.links}, {"from_s", o.from_s}, {"until_s", o.until_s}});
  return {{"topology", topology_text(n)},
          {"link", link_json(n.link)},
          {"overrides", overrides},
          {"racks", n.racks},
          {"trunk", link_json(n.trunk)},
          {"rto_s", n.rto_s},
          {"seed", n.seed},
          {"outages", outages}};
}

NetworkConfig network_from(const json& j) {
  NetworkConfig n;
  set_topology(n, j.value("topology", std::string("mesh")));
  n.link = link_from(j.value("link", json::object()));
  for (const json& o : j.value("overrides", json::array()))
    n.overrides.push_back(override_from(o));
  n.racks = j.value("racks", n.racks);
  n.trunk = link_from(j.value("trunk", json::object()));
  n.rto_s = j.value("rto_s", n.rto_s);
  n.seed = j.value("seed", n.seed);
  for (const json& o : j.value("outages", json::array()))
    n.outages.push_back({.links = o.at("links").get<std::vector<std::pair<int, int>>>(),
                         .from_s = o.value("from_s", 0.0),
                         .until_s = o.value("until_s", 1e300)});
  return n;
}

json node_json(const NodeOptions& n) {
  json j = {{"gflops", n.gflops}, {"eager_bytes", n.eager_bytes}, {"straggler", n.straggler}};
  if (n.crash_at_step) j["crash_at_step"] = *n.crash_at_step;
  if (n.crash_at_s) j["crash_at_s"] = *n.crash_at_s;
  return j;
}

NodeOptions node_from(const json& j, NodeOptions n) {
  n.gflops = j.value("gflops", n.gflops);
  n.eager_bytes = j.value("eager_bytes", n.eager_bytes);
  n.straggler = j.value("straggler", n.straggler);
  if (j.contains("crash_at_step")) n.crash_at_step = j.at("crash_at_step").get<int64_t>();
  if (j.contains("crash_at_s")) n.crash_at_s = j.at("crash_at_s").get<double>();
  return n;
}

json cluster_json(const ClusterOptions& c) {
  json faults = json::array();
  for (const auto& [rank, node] : c.node_overrides) {
    json f = node_json(node);
    f["rank"] = rank;
    faults.push_back(f);
  }
  return {{"nodes", c.nodes},
          {"timeout_s", c.timeout.count() / 1e3},
          {"network", network_json(c.network)},
          {"node", node_json(c.node)},
          {"faults", faults}};
}

ClusterOptions cluster_from(const json& j) {
  ClusterOptions c;
  c.nodes = j.value("nodes", c.nodes);
  c.timeout = std::chrono::milliseconds(
      static_cast<int64_t>(j.value("timeout_s", c.timeout.count() / 1e3) * 1e3));
  c.network = network_from(j.value("network", json::object()));
  c.node = node_from(j.value("node", json::object()), c.node);
  for (const json& f : j.value("faults", json::array()))
    c.node_overrides[f.at("rank").get<int>()] = node_from(f, c.node);
  return c;
}

json sgd_json(const SgdOptions& o) {
  return {{"lr", o.lr},
          {"momentum", o.momentum},
          {"dampening", o.dampening},
          {"weight_decay", o.weight_decay},
          {"nesterov", o.nesterov}};
}

SgdOptions sgd_from(const json& j, SgdOptions o) {
  o.lr = j.value("lr", o.lr);
  o.momentum = j.value("momentum", o.momentum);
  o.dampening = j.value("dampening", o.dampening);
  o.weight_decay = j.value("weight_decay", o.weight_decay);
  o.nesterov = j.value("nesterov", o.nesterov);
  return o;
}

RunSpec spec_from(const json& j) {
  RunSpec s;
  s.backend = parse_backend(j.value("backend", std::string("sim")), "backend");
  s.phantom = j.value("payload", std::string("real")) == "phantom";
  s.measured_compute = j.value("compute", std::string("flops")) == "measured";
  s.lv08 = j.value("network_model", std::string("cm02")) == "lv08";
  s.model = j.value("model", s.model);
  s.data = j.value("data", s.data);
  s.init = j.value("init", s.init);
  s.batch = j.value("batch", s.batch);
  s.sgd = sgd_from(j.value("sgd", json::object()), s.sgd);
  s.steps = j.value("steps", s.steps);
  s.epochs = j.value("epochs", s.epochs);
  s.seed = j.value("seed", s.seed);
  s.shuffle = j.value("shuffle", s.shuffle);
  s.eval_every = j.value("eval_every", s.eval_every);
  const std::string allreduce = j.value("allreduce", std::string("auto"));
  s.nccl = allreduce == "nccl";
  s.allreduce = s.nccl ? Algorithm::automatic : parse_algorithm(allreduce);
  s.bucket_mb = j.value("bucket_mb", s.bucket_mb);
  s.first_bucket_mb = j.value("first_bucket_mb", s.first_bucket_mb);
  s.local_sgd = j.value("local_sgd", s.local_sgd);
  s.local_sgd_start = j.value("local_sgd_start", s.local_sgd_start);
  s.compress = j.value("compress", s.compress);
  s.powersgd_start = j.value("powersgd_start", s.powersgd_start);
  s.parameter_servers = j.value("parameter_servers", s.parameter_servers);
  s.max_staleness = j.value("max_staleness", s.max_staleness);
  s.device = j.value("device", s.device);
  s.cluster = cluster_from(j.value("cluster", json::object()));
  s.scenario = j.value("scenario", s.scenario);
  s.elastic.policy = parse_elastic_policy(j.value("elastic", std::string("none")));
  s.elastic.max_restarts = j.value("max_restarts", s.elastic.max_restarts);
  return s;
}

}  // namespace

std::string run_spec_json(const RunSpec& s) {
  const json j = {{"backend", to_string(s.backend)},
                  {"payload", s.phantom ? "phantom" : "real"},
                  {"compute", s.measured_compute ? "measured" : "flops"},
                  {"network_model", s.lv08 ? "lv08" : "cm02"},
                  {"model", s.model},
                  {"data", s.data},
                  {"init", s.init},
                  {"batch", s.batch},
                  {"sgd", sgd_json(s.sgd)},
                  {"steps", s.steps},
                  {"epochs", s.epochs},
                  {"seed", s.seed},
                  {"shuffle", s.shuffle},
                  {"eval_every", s.eval_every},
                  {"allreduce", allreduce_name(s)},
                  {"bucket_mb", s.bucket_mb},
                  {"first_bucket_mb", s.first_bucket_mb},
                  {"local_sgd", s.local_sgd},
                  {"local_sgd_start", s.local_sgd_start},
                  {"compress", s.compress},
                  {"powersgd_start", s.powersgd_start},
                  {"parameter_servers", s.parameter_servers},
                  {"max_staleness", s.max_staleness},
                  {"device", s.device},
                  {"cluster", cluster_json(s.cluster)},
                  {"scenario", s.scenario},
                  {"elastic", to_string(s.elastic.policy)},
                  {"max_restarts", s.elastic.max_restarts}};
  return j.dump();
}

RunSpec run_spec_from_json(std::string_view text, const std::string& source) {
  try {
    const json j = json::parse(text.begin(), text.end());
    if (!j.is_object()) throw DataError("not a JSON object");
    return spec_from(j);
  } catch (const std::exception& e) {  // json's own errors, and parse_topology's
    throw DataError(
        fmt::format("{}: the run description is malformed ({}); write the trace "
                    "again with `dsgd train --trace FILE`",
                    source, e.what()));
  }
}

}  // namespace dsgd::sim
