// `dsgd node`: one simulated node as its own process. Rank 0 hosts the rendezvous; the
// nodes then connect to each other over the same socket transport as `dsgd train`'s
// threads and train exactly as it does (the train flags apply); rank 0 writes the outputs.
// Not a process launcher: start one `dsgd node` per rank yourself (shell, ssh, a script):
//   dsgd node --rank R --world N --rendezvous 127.0.0.1:29500 --token T [train flags]
// or, to join an elastic run under way, --join instead of --rank; or, without --rank and
// --world, as a student of the teacher's `dsgd-gui --classroom` at HOST:PORT
// (classroom_student.h), which gives each run's rank, world and run.
// Limits: links are mesh links (each process models its own); on several machines the
// network clocks differ, so a message is visible its modelled delay after its bytes arrive
// (the real transfer time then counts twice), and --crash at a time is per machine.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <boost/asio/ip/address.hpp>
#include <functional>
#include <optional>
#include <string>

#include "cli/train_command.h"
#include "sim/run_spec.h"

namespace CLI {
class App;
}

namespace dsgd::cli {

struct NodeFlags {
  TrainFlags train;
  int rank = -1;
  bool join = false;  // --join: an elastic run under way numbers this node
  int world = 0;
  std::string rendezvous;      // HOST:PORT where rank 0 listens
  std::string token;           // every node of the run must present it
  std::string listen;          // address to accept peers on; empty: 127.0.0.1 only
  std::string clock = "auto";  // auto | shared | local (see --clock's help)
  std::string name;            // what observers call this node; empty: the host's name
  // A classroom's run (classroom_student.h): the run the teacher chose, instead of the
  // train flags'.
  std::optional<sim::RunSpec> given_run;
  // A node that joined (--join): told its node number and the run's ranks once its rank 0
  // has numbered it (the classroom tells the teacher).
  std::function<void(int node, int world)> joined;
};

void add_node_command(CLI::App& app, NodeFlags& flags);
int run_node(const NodeFlags& flags);
// UsageError for a --name or --token a node cannot present.
void check_node_identity(const NodeFlags& flags);
// --listen's address ("localhost": 127.0.0.1); UsageError for anything but IPv4.
boost::asio::ip::address listen_address(const std::string& listen);

}  // namespace dsgd::cli
