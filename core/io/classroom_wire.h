// The classroom's wire format: what a student's `dsgd node --rendezvous TEACHER:PORT` and the
// teacher's `dsgd-gui --classroom` say to each other, one JSON text per line. The student
// joins and stays connected while the class lasts; the teacher numbers the students who are
// there when a run starts and tells each its rank, the run and where to meet; the student
// runs it as `dsgd node` does, says how it ended, and waits for the next run:
//   student:  {"dsgd_classroom":1,"token":"...","name":"alice"}
//   teacher:  {"welcome":{"seat":3}}            or  {"refused":"wrong job token"}
//   teacher:  {"start":{"run":1,"rank":0,"world":4,"rendezvous":"10.0.0.5:29502",
//              "monitor_port":29501,"lesson":0,"lang":"en","spec":{...}}}
//   student:  {"done":{"run":1,"error":""}}
// A student added to an elastic run under way learns its number from the run's rank 0 and
// tells the teacher (its node: the number the run's events give it):
//   student:  {"joined":{"run":1,"node":4,"world":5}}
//   teacher:  {"end":"the teacher closed the classroom"}
// In a lesson's run the laptops also tell the teacher what their rank records (each item of
// its transcript) and, stepped from the teacher's window, where their rank stands; the
// teacher lets each message through and may let the run go on by itself:
//   student:  {"item":{"run":1,"rank":2,"item":{"kind":"print","text":"..."}}}
//   student:  {"state":{"run":1,"rank":2,"attached":true,"busy":false,"sent":3,
//              "received":2,"released":1,"next":{"source":0,"dest":2,"tag":0,"seq":1,...}}}
//   teacher:  {"release":{"run":1,"source":0,"seq":1,"net_s":0.012}}
//   teacher:  {"pace":{"run":1,"step":false}}
// A run's description (`spec`, sim/run_spec.h) names no file: a student's laptop writes
// nothing the teacher chose.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dsgd {

inline constexpr int kClassroomVersion = 1;
// The longest line either side reads (a run description is a few kB).
inline constexpr size_t kMaxClassroomLine = 64 * 1024;
// The ports a classroom uses, from the one the teacher gives (--port, 29500 by default):
// that one for joining, the next for the window's observer stream, the one after on the
// laptop of the run's rank 0 for the run's own rendezvous.
inline constexpr int kClassroomMonitorOffset = 1;
inline constexpr int kClassroomRendezvousOffset = 2;

struct ClassroomJoin {
  std::string token;
  std::string name;
};

struct ClassroomStart {
  int run = 0;             // the class's runs, counted from 1
  int rank = 0;            // the receiver's
  int world = 0;           // ranks in the run
  std::string rendezvous;  // "IP:PORT" of rank 0's rendezvous
  int monitor_port = 0;    // where the teacher's window watches, on the teacher's address
  int lesson = 0;          // a lesson's number, or 0: training with `spec`
  std::string lang = "en";
  std::string spec_json;  // the run description (sim/run_spec.h), serialized
  bool step = false;      // a lesson whose messages wait for the teacher's window
  // A student added to an elastic training run under way: rank 0 numbers it (`rank` is not
  // its own; `dsgd node --join`).
  bool join = false;
};

struct ClassroomDone {
  int run = 0;
  std::string error;  // "" when the student's rank finished
};

// A student added to a run under way, numbered by its rank 0: `node` is the number the run's
// events give it, `world` the ranks of the run once it joined.
struct ClassroomJoined {
  int run = 0;
  int node = 0;
  int world = 0;
  bool operator==(const ClassroomJoined&) const = default;
};

// A lesson's item of the sender's rank (lessons/log_item_json.h: the JSON object, dumped).
struct ClassroomItem {
  int run = 0;
  int rank = 0;
  std::string item_json;
};

// A message held on a laptop for the teacher's step (sim::StepInfo on the wire).
struct ClassroomPending {
  int source = 0, dest = 0, tag = 0;
  uint64_t seq = 0;
  uint64_t count = 0;  // floats
  double model_s = 0;
  double net_s = 0;  // when it arrives, on the laptop's clock
  std::vector<float> preview;
  bool operator==(const ClassroomPending&) const = default;
};

// Where a laptop's rank of a stepped lesson stands (sim::LocalStepState on the wire).
struct ClassroomRankState {
  int run = 0;
  int rank = 0;
  bool attached = false;  // its node runs
  bool busy = false;      // running, not blocked
  uint64_t sent = 0, received = 0, released = 0;
  std::optional<ClassroomPending> next;  // the earliest message it holds
  bool operator==(const ClassroomRankState&) const = default;
};

// The teacher's step: let message (source, seq) through at its arrival time.
struct ClassroomRelease {
  int run = 0;
  int source = 0;
  uint64_t seq = 0;
  double net_s = 0;
};

// step false: the lesson runs on by itself; true: each message waits for the teacher again.
struct ClassroomPace {
  int run = 0;
  bool step = true;
};

// One line each; every line ends with '\n'.
std::string classroom_join_line(const ClassroomJoin& join);
std::string classroom_welcome_line(int seat);
std::string classroom_refused_line(const std::string& why);
std::string classroom_start_line(const ClassroomStart& start);
std::string classroom_done_line(const ClassroomDone& done);
std::string classroom_joined_line(const ClassroomJoined& joined);
std::string classroom_end_line(const std::string& why);
std::string classroom_item_line(const ClassroomItem& item);
std::string classroom_state_line(const ClassroomRankState& state);
std::string classroom_release_line(const ClassroomRelease& release);
std::string classroom_pace_line(const ClassroomPace& pace);

// One line read back: exactly one of the fields is set. DataError saying what is wrong for a
// line that is none of them (or of another version).
struct ClassroomMessage {
  std::optional<ClassroomJoin> join;
  std::optional<int> welcome;  // the seat
  std::optional<std::string> refused;
  std::optional<ClassroomStart> start;
  std::optional<ClassroomDone> done;
  std::optional<ClassroomJoined> joined;
  std::optional<std::string> end;
  std::optional<ClassroomItem> item;
  std::optional<ClassroomRankState> state;
  std::optional<ClassroomRelease> release;
  std::optional<ClassroomPace> pace;
};
ClassroomMessage parse_classroom_line(std::string_view line);

}  // namespace dsgd
