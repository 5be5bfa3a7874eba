#include "cli/workload_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace dsgd::cli {

namespace {

struct Spread {
  double min = 0, mean = 0, max = 0;
};

template <typename Get>
Spread spread(const std::vector<StepTimes>& ranks, Get get) {
  Spread s{.min = get(ranks.front()), .max = get(ranks.front())};
  for (const StepTimes& t : ranks) {
    s.min = std::min(s.min, get(t));
    s.max = std::max(s.max, get(t));
    s.mean += get(t) / double(ranks.size());
  }
  return s;
}

std::string ms(double s) {
  return fmt::format("{:.3f}", s * 1e3);
}

}  // namespace

std::string workload_step_rows(const WorkloadResult& r) {
  std::string s = fmt::format("#{:>5} {:>12} {:>32} {:>12}\n", "step", "compute ms",
                              "exposed comm ms: min/mean/max", "step ms");
  for (size_t step = 0; step < r.times.size(); ++step) {
    const std::vector<StepTimes>& ranks = r.times[step];
    const Spread compute = spread(ranks, [](const StepTimes& t) { return t.compute_s; });
    const Spread exposed = spread(ranks, [](const StepTimes& t) { return t.exposed_s(); });
    const Spread total = spread(ranks, [](const StepTimes& t) { return t.total_s; });
    s +=
        fmt::format(" {:>5} {:>12} {:>32} {:>12}\n", step + 1, ms(compute.mean),
                    fmt::format("{} / {} / {}", ms(exposed.min), ms(exposed.mean), ms(exposed.max)),
                    ms(total.max));
  }
  return s;
}

std::string workload_rank_rows(const WorkloadResult& r) {
  std::string s = fmt::format("#{:>5} {:>7} {:>12} {:>16} {:>12}\n", "step", "rank", "compute ms",
                              "exposed comm ms", "step ms");
  for (size_t step = 0; step < r.times.size(); ++step)
    for (size_t rank = 0; rank < r.times[step].size(); ++rank) {
      const StepTimes& t = r.times[step][rank];
      s += fmt::format(" {:>5} {:>7} {:>12} {:>16} {:>12}\n", step + 1, rank, ms(t.compute_s),
                       ms(t.exposed_s()), ms(t.total_s));
    }
  return s;
}

std::string busiest_links(const WorkloadResult& r, int count) {
  if (r.links.empty() || count <= 0) return "";
  std::string s =
      fmt::format("# busiest links ({} carried data; rate = bytes / {} s of model time)\n",
                  r.links.size(), fmt::format("{:.6g}", r.model_s));
  s += fmt::format("#{:>23} {:>14} {:>10} {:>10}\n", "link", "MB", "GB/s", "of link");
  for (size_t i = 0; i < r.links.size() && int(i) < count; ++i) {
    const sim::LinkUse& l = r.links[i];
    const double rate = r.model_s > 0 ? l.bytes / r.model_s : 0;
    const std::string share = l.shared && l.bandwidth_Bps > 0
                                  ? fmt::format("{:.1f}%", 100 * rate / l.bandwidth_Bps)
                                  : "-";  // a fat pipe's flows each get it all
    s += fmt::format(" {:>23} {:>14.3f} {:>10.3f} {:>10}\n", l.name, l.bytes / 1e6, rate / 1e9,
                     share);
  }
  return s;
}

nlohmann::json workload_result_json(const WorkloadResult& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const std::vector<StepTimes>& ranks : r.times) {
    nlohmann::json rows = nlohmann::json::array();
    for (const StepTimes& t : ranks)
      rows.push_back(
          {{"compute_s", t.compute_s}, {"exposed_s", t.exposed_s()}, {"total_s", t.total_s}});
    steps.push_back({{"ranks", rows}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (const sim::LinkUse& l : r.links)
    links.push_back({{"link", l.name}, {"bytes", l.bytes}, {"bandwidth_Bps", l.bandwidth_Bps}});
  return {{"steps", steps}, {"links", links}, {"wall_s", r.wall_s}, {"model_s", r.model_s}};
}

}  // namespace dsgd::cli
