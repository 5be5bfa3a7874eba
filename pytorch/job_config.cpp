#include "pytorch/job_config.h"

#include <cstdlib>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/run_flags.h"

namespace dsgd::pytorch {
namespace {

// The variables, and the `dsgd node` flag each stands for (the errors name the flag).
struct Variable {
  const char* name;
  const char* flag;
  std::string sim::RunFlags::*field;
};
const Variable kVariables[] = {
    {"DSGD_SCENARIO", "--scenario", &sim::RunFlags::scenario},
    {"DSGD_TOPOLOGY", "--topology", &sim::RunFlags::topology},
    {"DSGD_LATENCY", "--latency", &sim::RunFlags::latency},
    {"DSGD_BANDWIDTH", "--bandwidth", &sim::RunFlags::bandwidth},
    {"DSGD_JITTER", "--jitter", &sim::RunFlags::jitter},
    {"DSGD_LOSS", "--loss", &sim::RunFlags::loss},
    {"DSGD_EAGER_LIMIT", "--eager-limit", &sim::RunFlags::eager_limit},
    {"DSGD_ALLREDUCE", "--allreduce", &sim::RunFlags::allreduce},
    {"DSGD_TRACE", "--trace", &sim::RunFlags::trace},
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// "a,b" -> {"a", "b"}.
std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// The message of an error about a flag, about its variable instead.
std::string in_env_terms(std::string message) {
  for (const Variable& v : kVariables)
    for (size_t at = message.find(v.flag); at != std::string::npos; at = message.find(v.flag, at))
      message.replace(at, std::string(v.flag).size(), v.name);
  for (const auto& [flag, name] :
       {std::pair{"--straggler", "DSGD_STRAGGLERS"}, {"--crash", "DSGD_CRASH"}})
    for (size_t at = message.find(flag); at != std::string::npos; at = message.find(flag, at))
      message.replace(at, std::string(flag).size(), name);
  return "dsgd backend: " + message;
}

}  // namespace

JobConfig job_config_from_env(int world, std::chrono::milliseconds timeout) {
  sim::RunSpec defaults;
  defaults.cluster.nodes = world;
  sim::RunFlags flags = sim::run_flags(defaults);
  for (const Variable& v : kVariables)
    if (const std::string value = env(v.name); !value.empty()) flags.*v.field = value;
  flags.stragglers = split_commas(env("DSGD_STRAGGLERS"));
  flags.crashes = split_commas(env("DSGD_CRASH"));
  flags.nodes = world;
  JobConfig config;
  try {
    config.spec = sim::build_run_spec(flags, defaults);
  } catch (const UsageError& e) {
    throw UsageError(in_env_terms(e.what()));
  } catch (const DataError& e) {
    throw DataError(in_env_terms(e.what()));
  }
  config.spec.cluster.timeout = timeout;
  config.trace = config.spec.outputs.trace;
  const std::string listen = env("DSGD_LISTEN");
  boost::system::error_code ec;
  config.listen = boost::asio::ip::make_address(listen.empty() ? "127.0.0.1" : listen, ec);
  if (ec)
    throw UsageError(fmt::format(
        "dsgd backend: DSGD_LISTEN={}: not an IP address; use 127.0.0.1 or 0.0.0.0", listen));
  return config;
}

}  // namespace dsgd::pytorch
