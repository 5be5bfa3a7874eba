#include "sim/scenario.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "sim/cluster_shape.h"
#include "sim/link_model.h"
#include "sim/scenario_names.h"

namespace dsgd::sim {
namespace {

// Reports a problem at a node of the document: "file:line:col: message".
[[noreturn]] void fail(const std::string& source, const toml::source_region& where,
                       const std::string& message) {
  throw DataError(
      fmt::format("{}:{}:{}: {}", source, where.begin.line, where.begin.column, message));
}

class Reader {
 public:
  Reader(const std::string& source, const toml::table& table, std::string section)
      : source_(source), table_(table), section_(std::move(section)) {}

  // Refuses keys outside `allowed`, so a typo is an error rather than silently ignored.
  void only(std::initializer_list<const char*> allowed) const {
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (const auto& [key, node] : table_)
      if (!ok.count(std::string(key.str()))) {
        std::string list;
        for (const char* a : allowed)
          list += (list.empty() ? "" : ", ") + std::string(a);
        fail(source_, node.source(),
             fmt::format("unknown key '{}' in {}; valid keys: {}", key.str(), section_, list));
      }
  }

  std::optional<double> duration(const char* key) const {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    if (auto s = n->value<std::string>()) {
      try {
        return parse_duration_s(*s, key);
      } catch (const UsageError& e) {
        fail(source_, n->source(), e.what());
      }
    }
    if (auto v = n->value<double>(); v && *v == 0) return 0.0;
    fail(source_, n->source(),
         fmt::format("{} in {} must be a string like \"2ms\"", key, section_));
  }

  std::optional<double> bandwidth(const char* key) const {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    if (auto s = n->value<std::string>()) {
      try {
        return parse_bandwidth_Bps(*s, key);
      } catch (const UsageError& e) {
        fail(source_, n->source(), e.what());
      }
    }
    if (auto v = n->value<double>(); v && *v == 0) return 0.0;
    fail(source_, n->source(),
         fmt::format("{} in {} must be a string like \"1Gbit\" or 0", key, section_));
  }

  std::optional<double> number(const char* key, double lo, double hi) const {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    auto v = n->value<double>();
    if (!v || !(*v >= lo && *v <= hi))
      fail(source_, n->source(),
           fmt::format("{} in {} must be a number from {} to {}", key, section_, lo, hi));
    return *v;
  }

  std::optional<int64_t> integer(const char* key, int64_t lo, int64_t hi) const {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    // toml++ takes a float with an integral value (4.0) for an integer, but casts it to
    // int64_t unchecked: one outside int64_t's range (2e116) is refused before that.
    constexpr double kTwoTo63 = 9223372036854775808.0;
    std::optional<int64_t> v;
    const auto* f = n->as_floating_point();
    // Not a boolean (toml++ reads true as 1), and a float only within int64_t's range.
    if (!n->is_boolean() && (!f || (f->get() >= -kTwoTo63 && f->get() < kTwoTo63)))
      v = n->value<int64_t>();
    if (!v || *v < lo || *v > hi)
      fail(source_, n->source(),
           fmt::format("{} in {} must be an integer from {} to {}", key, section_, lo, hi));
    return *v;
  }

  std::optional<std::string> string(const char* key) const {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    auto v = n->value<std::string>();
    if (!v) fail(source_, n->source(), fmt::format("{} in {} must be a string", key, section_));
    return *v;
  }

  template <typename T>
  T required(std::optional<T> v, const char* key) const {
    if (!v) fail(source_, table_.source(), fmt::format("{} needs '{}'", section_, key));
    return *v;
  }

  const toml::node* get(const char* key) const { return table_.get(key); }
  [[noreturn]] void error(const toml::node& n, const std::string& message) const {
    fail(source_, n.source(), message);
  }

 private:
  const std::string& source_;
  const toml::table& table_;
  std::string section_;
};

constexpr int kMaxRank = kMaxNodes - 1;

LinkSpec read_link(const Reader& r, LinkSpec base) {
  if (auto v = r.duration("latency")) base.latency_s = *v;
  if (auto v = r.bandwidth("bandwidth")) base.bandwidth_Bps = *v;
  if (auto v = r.duration("jitter")) base.jitter_s = *v;
  if (auto v = r.number("loss", 0.0, 0.5)) base.loss = *v;
  return base;
}

LinkOverride read_override(const Reader& r) {
  LinkOverride o;
  o.latency_s = r.duration("latency");
  o.bandwidth_Bps = r.bandwidth("bandwidth");
  o.jitter_s = r.duration("jitter");
  o.loss = r.number("loss", 0.0, 0.5);
  return o;
}

// An array of tables (`[[name]]`) under `parent`, each handed to fn with a Reader.
template <typename Fn>
void each_table(const std::string& source, const toml::table& parent, const char* key,
                const std::string& section, Fn fn) {
  const toml::node* n = parent.get(key);
  if (!n) return;
  const toml::array* arr = n->as_array();
  if (!arr)
    fail(source, n->source(), fmt::format("{} must be an array of tables [[{}]]", key, section));
  for (const toml::node& item : *arr) {
    const toml::table* t = item.as_table();
    if (!t) fail(source, item.source(), fmt::format("each {} entry must be a table", section));
    fn(Reader(source, *t, "[[" + section + "]]"));
  }
}

std::vector<std::vector<int>> read_groups(const Reader& r, const toml::node& n) {
  std::vector<std::vector<int>> groups;
  const toml::array* outer = n.as_array();
  if (!outer) r.error(n, "groups must be an array of rank arrays, like [[0, 1], [2, 3]]");
  for (const toml::node& g : *outer) {
    const toml::array* inner = g.as_array();
    if (!inner) r.error(g, "each group must be an array of ranks");
    std::vector<int> ranks;
    for (const toml::node& x : *inner) {
      auto v = x.value<int64_t>();
      if (!v || *v < 0 || *v > kMaxRank) r.error(x, "a rank must be an integer from 0 to 255");
      ranks.push_back(static_cast<int>(*v));
    }
    groups.push_back(std::move(ranks));
  }
  return groups;
}

void read_fault(Scenario& s, const Reader& r) {
  const std::string kind = r.required(r.string("kind"), "kind");
  if (kind == "straggler") {
    r.only({"kind", "rank", "factor"});
    const int rank = static_cast<int>(r.required(r.integer("rank", 0, kMaxRank), "rank"));
    auto [it, _] = s.faults.try_emplace(rank, s.node);
    it->second.straggler = r.required(r.number("factor", 1.0, 1000.0), "factor");
  } else if (kind == "crash") {
    r.only({"kind", "rank", "step", "time"});
    const int rank = static_cast<int>(r.required(r.integer("rank", 0, kMaxRank), "rank"));
    auto [it, _] = s.faults.try_emplace(rank, s.node);
    it->second.crash_at_step = r.integer("step", 1, int64_t{1} << 40);
    it->second.crash_at_s = r.duration("time");
    if (!it->second.crash_at_step && !it->second.crash_at_s)
      r.required(std::optional<int>(), "step' or 'time");
  } else if (kind == "link_down" || kind == "partition") {
    const bool link = kind == "link_down";
    if (link)
      r.only({"kind", "from", "to", "at", "until", "both_ways"});
    else
      r.only({"kind", "groups", "at", "until"});
    Outage o;
    o.from_s = r.duration("at").value_or(0.0);
    o.until_s = r.duration("until").value_or(1e300);
    if (o.until_s <= o.from_s)
      r.error(*r.get("until"), fmt::format("until ({} s) is not after at ({} s): the {} would "
                                           "never happen; give an until after at",
                                           o.until_s, o.from_s, kind));
    if (link) {
      const int from = static_cast<int>(r.required(r.integer("from", 0, kMaxRank), "from"));
      const int to = static_cast<int>(r.required(r.integer("to", 0, kMaxRank), "to"));
      o.links.push_back({from, to});
      const toml::node* both = r.get("both_ways");
      if (!both || both->value<bool>().value_or(true)) o.links.push_back({to, from});
    } else {
      const toml::node* g = r.get("groups");
      if (!g) r.required(std::optional<int>(), "groups");
      auto groups = read_groups(r, *g);
      std::set<int> seen;
      for (const auto& group : groups)
        for (int x : group)
          if (!seen.insert(x).second)
            r.error(*g, fmt::format("rank {} is in two groups; a partition's groups must not "
                                    "overlap",
                                    x));
      for (size_t a = 0; a < groups.size(); ++a)
        for (size_t b = 0; b < groups.size(); ++b)
          if (a != b)
            for (int x : groups[a])
              for (int y : groups[b])
                o.links.push_back({x, y});
    }
    s.network.outages.push_back(std::move(o));
  } else {
    r.error(*r.get("kind"), fmt::format("unknown fault kind '{}': use straggler, crash, "
                                        "link_down or partition",
                                        kind));
  }
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& source) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    fail(source, e.source(),
         fmt::format("{}; fix the TOML there (examples in assets/scenarios/)", e.description()));
  }
  Scenario s;
  Reader top(source, doc, "the scenario");
  top.only({"nodes", "network", "compute", "fault"});
  if (auto n = top.integer("nodes", 1, kMaxNodes)) s.nodes = static_cast<int>(*n);
  if (const toml::node* net = doc.get("network")) {
    const toml::table* t = net->as_table();
    if (!t) fail(source, net->source(), "network must be a table [network]");
    Reader r(source, *t, "[network]");
    r.only({"topology", "latency", "bandwidth", "jitter", "loss", "rto", "seed", "racks", "trunk",
            "link", "node"});
    if (auto v = r.string("topology")) {
      try {
        set_topology(s.network, *v);
      } catch (const UsageError& e) {
        r.error(*r.get("topology"), e.what());
      }
    }
    s.network.link = read_link(r, s.network.link);
    if (auto v = r.duration("rto")) s.network.rto_s = *v;
    if (auto v = r.integer("seed", 0, INT64_MAX)) s.network.seed = static_cast<uint64_t>(*v);
    if (auto v = r.integer("racks", 1, kMaxNodes)) s.network.racks = static_cast<int>(*v);
    if (const toml::node* trunk = t->get("trunk")) {
      const toml::table* tt = trunk->as_table();
      if (!tt) fail(source, trunk->source(), "trunk must be a table [network.trunk]");
      Reader tr(source, *tt, "[network.trunk]");
      tr.only({"latency", "bandwidth", "jitter", "loss"});
      s.network.trunk = read_link(tr, s.network.trunk);
    }
    each_table(source, *t, "link", "network.link", [&](const Reader& lr) {
      lr.only({"from", "to", "latency", "bandwidth", "jitter", "loss"});
      LinkOverride o = read_override(lr);
      o.from = static_cast<int>(lr.required(lr.integer("from", 0, kMaxRank), "from"));
      o.to = static_cast<int>(lr.required(lr.integer("to", 0, kMaxRank), "to"));
      s.network.overrides.push_back(o);
    });
    each_table(source, *t, "node", "network.node", [&](const Reader& nr) {
      nr.only({"rank", "latency", "bandwidth", "jitter", "loss"});
      const int rank = static_cast<int>(nr.required(nr.integer("rank", 0, kMaxRank), "rank"));
      LinkOverride out = read_override(nr), in = out;  // every link out of and into the node
      out.from = rank;
      in.to = rank;
      s.network.overrides.push_back(out);
      s.network.overrides.push_back(in);
    });
  }
  if (const toml::node* compute = doc.get("compute")) {
    const toml::table* t = compute->as_table();
    if (!t) fail(source, compute->source(), "compute must be a table [compute]");
    Reader r(source, *t, "[compute]");
    r.only({"gflops"});
    if (auto v = r.number("gflops", 1e-3, 1e9)) s.node.gflops = *v;
  }
  each_table(source, doc, "fault", "fault", [&](const Reader& r) { read_fault(s, r); });
  for (auto& [rank, options] : s.faults)
    options.gflops = s.node.gflops;
  return s;
}

Scenario load_scenario(const std::string& given) {
  const std::string path = resolve_scenario(given);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))  // it would open, and read as empty
    throw DataError(fmt::format("--scenario {}: is a directory; give a TOML file", path));
  if (!std::filesystem::exists(path, ec))
    throw DataError(fmt::format("--scenario {}: cannot open the file; check the path", path));
  return parse_scenario(read_input_file(path, kMiB, "a scenario (TOML)"), path);
}

void add_straggler(ClusterOptions& c, const std::string& text) {
  int rank = -1;
  double factor = 0;
  const auto colon = text.find(':');
  const char* end = text.data() + text.size();
  bool ok = colon != std::string::npos &&
            std::from_chars(text.data(), text.data() + colon, rank).ptr == text.data() + colon &&
            std::from_chars(text.data() + colon + 1, end, factor).ptr == end;
  if (!ok || rank < 0 || rank > kMaxRank || !(factor >= 1 && factor <= 1000))
    throw UsageError(
        fmt::format("--straggler '{}': write RANK:FACTOR with a factor from 1 to "
                    "1000, e.g. 2:3 (rank 2 computes 3x slower)",
                    text));
  auto [it, _] = c.node_overrides.try_emplace(rank, c.node);
  it->second.straggler = factor;
}

void add_crash(ClusterOptions& c, const std::string& text) {
  const auto at = text.find('@');
  int rank = -1;
  bool ok = at != std::string::npos &&
            std::from_chars(text.data(), text.data() + at, rank).ptr == text.data() + at &&
            rank >= 0 && rank <= kMaxRank;
  const std::string when = ok ? text.substr(at + 1) : "";
  int64_t step = 0;
  NodeOptions* node = nullptr;
  if (ok) node = &c.node_overrides.try_emplace(rank, c.node).first->second;
  if (ok &&
      std::from_chars(when.data(), when.data() + when.size(), step).ptr ==
          when.data() + when.size() &&
      step >= 1) {
    node->crash_at_step = step;
    return;
  }
  if (ok && !when.empty()) {
    try {
      node->crash_at_s = parse_duration_s(when, "--crash");
      return;
    } catch (const UsageError&) {
    }
  }
  throw UsageError(
      fmt::format("--crash '{}': write RANK@STEP (e.g. 1@20) or RANK@TIME (e.g. 1@1.5s)", text));
}

void apply(const Scenario& s, ClusterOptions& c) {
  if (s.nodes) c.nodes = *s.nodes;
  c.network = s.network;
  c.node = s.node;
  c.node_overrides = s.faults;
}

}  // namespace dsgd::sim
