// The cluster topologies' shapes (sim/cluster_shape.h): SimGrid's notation parsed and
// checked, the shape dsgd picks from a node count, and the refusals of a shape that does not
// fit the run or a backend that does not build it.
#include <catch2/catch.hpp>

#include <string>

#include "cli_runner.h"
#include "core/errors.h"
#include "sim/cluster_shape.h"

using namespace dsgd;
using sim::Topology;

namespace {

std::string auto_shape(Topology t, int nodes) {
  return sim::shape_text(sim::resolve_shape(t, "", nodes));
}

}  // namespace

TEST_CASE("cluster shapes: dsgd picks a fat-tree, a torus and a dragonfly of the node count",
          "[topology]") {
  CHECK(auto_shape(Topology::fat_tree, 4096) == "3;16,16,16;1,16,16;1,1,1");
  CHECK(auto_shape(Topology::fat_tree, 1024) == "3;16,8,8;1,16,8;1,1,1");
  CHECK(auto_shape(Topology::fat_tree, 64) == "2;8,8;1,8;1,1");
  CHECK(auto_shape(Topology::fat_tree, 16) == "1;16;1;1");
  CHECK(auto_shape(Topology::fat_tree, 37) == "1;37;1;1");
  CHECK(auto_shape(Topology::fat_tree, 4106) == "2;2053,2;1,2053;1,1");
  CHECK(auto_shape(Topology::torus, 64) == "4,4,4");
  CHECK(auto_shape(Topology::torus, 12) == "3,2,2");
  CHECK(auto_shape(Topology::torus, 7) == "7");
  CHECK(auto_shape(Topology::dragonfly, 16) == "2,1;2,1;2,1;2");
  CHECK(auto_shape(Topology::dragonfly, 120) == "4,1;3,1;5,1;2");
  for (Topology t : {Topology::fat_tree, Topology::torus, Topology::dragonfly})
    for (int nodes : {1, 2, 6, 12, 37, 100, 256, 1000, 4096}) {
      INFO(sim::to_string(t) << " " << nodes);
      CHECK(sim::shape_hosts(t, sim::resolve_shape(t, "", nodes)) == uint64_t(nodes));
    }
}

TEST_CASE("cluster shapes: SimGrid's notation is read, and a malformed one refused", "[topology]") {
  const sim::ClusterShape tree = sim::parse_shape(Topology::fat_tree, "2;4,4;1,2;1,2");
  CHECK(sim::shape_hosts(Topology::fat_tree, tree) == 16);
  CHECK(sim::shape_text(tree) == "2;4,4;1,2;1,2");
  CHECK(sim::shape_hosts(Topology::dragonfly,
                         sim::parse_shape(Topology::dragonfly, "3,4;4,3;5,1;2")) == 120);
  CHECK_THROWS_WITH(sim::parse_shape(Topology::fat_tree, "2;4,4;1;1,2"),
                    Catch::Contains("2 levels need 2 numbers in each list"));
  CHECK_THROWS_WITH(sim::parse_shape(Topology::torus, "4,0"),
                    Catch::Contains("'0' is not a whole number of at least 1"));
  CHECK_THROWS_WITH(sim::parse_shape(Topology::torus, "4;4"),
                    Catch::Contains("a torus has one part"));
  CHECK_THROWS_WITH(sim::parse_shape(Topology::dragonfly, "3,4;4,3;5,1"),
                    Catch::Contains("a dragonfly has 4 parts"));
  CHECK_THROWS_WITH(sim::parse_shape(Topology::dragonfly, "3,1;1,1;2,1;1"),
                    Catch::Contains("3 groups outnumber the 2 routers of a chassis"));
  CHECK_THROWS_WITH(sim::resolve_shape(Topology::torus, "4,4", 12),
                    Catch::Contains("has 16 hosts, but the run has 12 nodes"));
}

TEST_CASE("cluster shapes: a topology with its shape is one value, written back as read",
          "[topology]") {
  sim::NetworkConfig n;
  sim::set_topology(n, "fat-tree:2;4,4;1,2;1,2");
  CHECK(n.topology == Topology::fat_tree);
  CHECK(n.shape == "2;4,4;1,2;1,2");
  CHECK(sim::topology_text(n) == "fat-tree:2;4,4;1,2;1,2");
  CHECK(sim::describe_topology(n, 16) == "fat-tree 2;4,4;1,2;1,2");
  sim::set_topology(n, "torus");
  CHECK(n.shape.empty());
  CHECK(sim::describe_topology(n, 8) == "torus 2,2,2");
  CHECK_THROWS_WITH(sim::set_topology(n, "switch:4"), Catch::Contains("switch takes no shape"));
  CHECK_THROWS_WITH(sim::set_topology(n, "hypercube"),
                    Catch::Contains("fat-tree, torus or dragonfly (--backend simgrid)"));
}

TEST_CASE("cluster topologies are refused on simulated nodes with one line", "[topology]") {
  const test::CliResult r = test::run_dsgd("train --steps 1 --nodes 4 --topology fat-tree");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--topology fat-tree is built by SimGrid only") &&
                        Catch::Contains("add --backend simgrid"));
}
