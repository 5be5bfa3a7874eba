#include "cli/classroom_student.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "cli/classroom_lesson.h"
#include "cli/node_command.h"
#include "core/errors.h"
#include "sim/classroom_client.h"
#include "sim/rendezvous.h"
#include "sim/run_spec.h"

namespace dsgd::cli {

namespace {

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

void say(const std::string& text) {
  fmt::print(stderr, "dsgd node: {}\n", text);
  std::fflush(stderr);
}

// The teacher's run as this laptop runs it: nothing written here (a run description from
// the teacher names no file, and whatever it names is dropped), events to the teacher.
sim::RunSpec run_of(const ClassroomStart& start, const sim::ClassroomClient& client) {
  sim::RunSpec spec = sim::run_spec_from_json(start.spec_json, "the teacher's run");
  spec.outputs = {};
  spec.outputs.monitor =
      fmt::format("{}:{}", client.teacher().address().to_string(), start.monitor_port);
  spec.cluster.nodes = start.world;
  return spec;
}

NodeFlags node_flags(const NodeFlags& f, const ClassroomStart& start,
                     sim::ClassroomClient& client) {
  NodeFlags node = f;
  node.rank = start.join ? -1 : start.rank;  // joining: rank 0 numbers this laptop
  node.join = start.join;
  node.world = start.world;
  node.rendezvous = start.rendezvous;
  node.listen = f.listen.empty() ? client.local_address() : f.listen;
  node.given_run = run_of(start, client);
  if (start.join)
    node.joined = [&client, run = start.run](int joined_as, int world) {
      client.send(classroom_joined_line({.run = run, .node = joined_as, .world = world}));
    };
  return node;
}

// One run the teacher started; "" when this rank finished it, otherwise why not.
std::string take_part(const NodeFlags& f, const ClassroomStart& start,
                      sim::ClassroomClient& client) {
  if (start.join)
    say(fmt::format("run {}: joining the run under way (its rank 0 numbers this laptop)",
                    start.run));
  else
    say(fmt::format("run {}: rank {} of {}{}", start.run, start.rank, start.world,
                    start.lesson != 0 ? fmt::format(", lesson {}", start.lesson) : ""));
  try {
    if (start.lesson != 0)
      run_classroom_lesson(node_flags(f, start, client), start, client);
    else
      run_node(node_flags(f, start, client));
    say(fmt::format("run {}: done; waiting for the teacher's next run", start.run));
    return "";
  } catch (const std::exception& e) {
    say(fmt::format("run {} ended: {}; waiting for the teacher's next run", start.run, e.what()));
    return e.what();
  }
}

}  // namespace

int run_classroom_student(const NodeFlags& f) {
  if (f.join) throw UsageError("--join goes with an elastic run's --rendezvous, not a classroom's");
  check_node_identity(f);
  const auto teacher = sim::parse_endpoint(f.rendezvous, "--rendezvous");
  NodeFlags named = f;
  if (named.name.empty()) named.name = host_name();
  say(fmt::format("joining the classroom at {} (waiting up to {} s for the teacher's window)",
                  f.rendezvous, kClassroomJoinWait.count()));
  sim::ClassroomClient client(teacher, {.token = f.token, .name = named.name},
                              Clock::now() + kClassroomJoinWait);
  say(
      fmt::format("joined the classroom at {} as {} (seat {}); waiting for the teacher to start "
                  "a run",
                  f.rendezvous, named.name, client.seat()));
  for (;;) {
    const std::optional<ClassroomStart> start = client.next_run(Clock::now() + kClassroomRunWait);
    if (!start) break;
    client.done({.run = start->run, .error = take_part(named, *start, client)});
  }
  say("the class is over");
  return kExitOk;
}

}  // namespace dsgd::cli
