#include "sim/cluster_shape.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {

namespace {

const char* form(Topology t) {
  switch (t) {
    case Topology::fat_tree:
      return "levels;down,...;up,...;count,... (SimGrid's notation, e.g. 2;4,4;1,4;1,1)";
    case Topology::torus:
      return "x,y,z,... (e.g. 4,4,4)";
    case Topology::dragonfly:
      return "groups,links;chassis,links;routers,links;nodes (e.g. 3,1;4,1;5,1;2)";
    default:
      return "";
  }
}

[[noreturn]] void malformed(Topology t, const std::string& text, const std::string& why) {
  throw UsageError(
      fmt::format("{} shape '{}': {}; write it as {}", to_string(t), text, why, form(t)));
}

std::vector<unsigned> parse_numbers(Topology t, const std::string& text, const std::string& part) {
  std::vector<unsigned> numbers;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(part.find(',', begin), part.size());
    unsigned value = 0;
    const char* first = part.data() + begin;
    const auto [ptr, ec] = std::from_chars(first, part.data() + end, value);
    if (ec != std::errc() || ptr != part.data() + end || value < 1)
      malformed(
          t, text,
          fmt::format("'{}' is not a whole number of at least 1", part.substr(begin, end - begin)));
    numbers.push_back(value);
    if (end == part.size()) return numbers;
    begin = end + 1;
  }
}

ClusterShape split(Topology t, const std::string& text) {
  ClusterShape shape;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(text.find(';', begin), text.size());
    shape.push_back(parse_numbers(t, text, text.substr(begin, end - begin)));
    if (end == text.size()) return shape;
    begin = end + 1;
  }
}

void check_parts(Topology t, const std::string& text, const ClusterShape& s) {
  if (t == Topology::torus && s.size() != 1) malformed(t, text, "a torus has one part");
  if (t == Topology::dragonfly) {
    const bool ok = s.size() == 4 && s[0].size() == 2 && s[1].size() == 2 && s[2].size() == 2 &&
                    s[3].size() == 1;
    if (!ok) malformed(t, text, "a dragonfly has 4 parts: 3 pairs and a count");
    if (s[0][0] > s[2][0])
      malformed(t, text,
                fmt::format("{} groups outnumber the {} routers of a chassis (SimGrid joins group "
                            "g to router g of each group)",
                            s[0][0], s[2][0]));
  }
  if (t == Topology::fat_tree) {
    if (s.size() != 4 || s[0].size() != 1) malformed(t, text, "a fat-tree has 4 parts");
    const unsigned levels = s[0][0];
    for (size_t i = 1; i < 4; ++i)
      if (s[i].size() != levels)
        malformed(t, text, fmt::format("{} levels need {} numbers in each list", levels, levels));
  }
}

// n as `count` factors, as equal as possible, largest first (n prime: n, 1, 1...).
std::vector<unsigned> balanced_factors(unsigned n, int count) {
  std::vector<unsigned> factors;
  for (int left = count; left > 1; --left) {
    const double root = std::pow(double(n), 1.0 / left);
    unsigned f = std::max(1u, unsigned(std::ceil(root - 1e-6)));  // 64^(1/3) may be 4.0000001
    while (n % f != 0)
      ++f;
    factors.push_back(f);
    n /= f;
  }
  factors.push_back(n);
  std::sort(factors.rbegin(), factors.rend());
  return factors;
}

// The fewest levels (up to 3) whose switches have at most 16 hosts or children each, or
// where none has, the fewest with the smallest switches (a prime count: one level).
ClusterShape auto_fat_tree(unsigned nodes) {
  std::vector<unsigned> down = balanced_factors(nodes, 1);
  for (int levels = 2; levels <= 3 && down.front() > 16; ++levels) {
    std::vector<unsigned> more = balanced_factors(nodes, levels);
    if (more.front() < down.front()) down = std::move(more);
  }
  const unsigned levels = unsigned(down.size());
  std::vector<unsigned> up{1}, count(levels, 1);
  for (unsigned i = 1; i < levels; ++i)
    up.push_back(down[i - 1]);
  return {{levels}, down, up, count};
}

ClusterShape auto_shape(Topology t, unsigned nodes) {
  if (t == Topology::fat_tree) return auto_fat_tree(nodes);
  if (t == Topology::torus) {
    std::vector<unsigned> dims = balanced_factors(nodes, 3);
    std::erase(dims, 1u);
    if (dims.empty()) dims.push_back(1);
    return {dims};
  }
  // Largest first: routers per chassis (SimGrid links group g to router g of each group, so
  // groups may not outnumber them), groups, chassis, hosts per router.
  const std::vector<unsigned> f = balanced_factors(nodes, 4);
  return {{f[1], 1}, {f[2], 1}, {f[0], 1}, {f[3]}};
}

}  // namespace

bool is_cluster_topology(Topology t) {
  return t == Topology::fat_tree || t == Topology::torus || t == Topology::dragonfly;
}

ClusterShape parse_shape(Topology t, const std::string& text) {
  if (text.empty()) malformed(t, text, "it is empty");
  ClusterShape shape = split(t, text);
  check_parts(t, text, shape);
  return shape;
}

uint64_t shape_hosts(Topology t, const ClusterShape& s) {
  auto product = [](const std::vector<unsigned>& v) {
    return std::accumulate(v.begin(), v.end(), uint64_t{1}, std::multiplies<>());
  };
  if (t == Topology::fat_tree) return product(s[1]);
  if (t == Topology::torus) return product(s[0]);
  return uint64_t{s[0][0]} * s[1][0] * s[2][0] * s[3][0];
}

std::string shape_text(const ClusterShape& shape) {
  std::vector<std::string> parts;
  for (const std::vector<unsigned>& part : shape)
    parts.push_back(fmt::format("{}", fmt::join(part, ",")));
  return fmt::format("{}", fmt::join(parts, ";"));
}

ClusterShape resolve_shape(Topology t, const std::string& text, int nodes) {
  if (text.empty()) return auto_shape(t, unsigned(std::max(nodes, 1)));
  ClusterShape shape = parse_shape(t, text);
  const uint64_t hosts = shape_hosts(t, shape);
  if (hosts != uint64_t(nodes))
    throw UsageError(fmt::format(
        "--topology {}:{} has {} hosts, but the run has {} nodes: give a shape of {} hosts, or "
        "leave the shape out and dsgd picks one",
        to_string(t), text, hosts, nodes, nodes));
  return shape;
}

std::string describe_topology(const NetworkConfig& network, int nodes) {
  if (!is_cluster_topology(network.topology)) return to_string(network.topology);
  const std::string shape = network.shape.empty()
                                ? shape_text(resolve_shape(network.topology, "", nodes))
                                : network.shape;
  return fmt::format("{} {}", to_string(network.topology), shape);
}

void set_topology(NetworkConfig& network, const std::string& text) {
  const size_t colon = text.find(':');
  const Topology t = parse_topology(text.substr(0, colon));
  std::string shape;
  if (colon != std::string::npos) {
    if (!is_cluster_topology(t))
      throw UsageError(
          fmt::format("topology '{}': {} takes no shape after ':'", text, to_string(t)));
    shape = text.substr(colon + 1);
    parse_shape(t, shape);
  }
  network.topology = t;
  network.shape = shape;
}

std::string topology_text(const NetworkConfig& network) {
  if (network.shape.empty()) return to_string(network.topology);
  return fmt::format("{}:{}", to_string(network.topology), network.shape);
}

}  // namespace dsgd::sim
