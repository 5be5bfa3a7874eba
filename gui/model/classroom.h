// Classroom: `dsgd-gui --classroom`, the teacher's side of a class whose students' laptops
// are the ranks (core/io/classroom_wire.h). A thread of its own listens for students (on
// every address unless a host is given), welcomes those with the token, refuses the others
// (closed, counted), and notices who leaves. start() numbers the students waiting, in the
// order they joined, and tells each its rank, the run and where to meet: rank 0's laptop
// hosts the run's rendezvous, and every laptop streams its events to the window's watch
// (watch.h) on the next port. The window never sends anything into a run once it started.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/io/classroom_wire.h"
#include "gui/model/listen_socket.h"

namespace dsgd::gui {

struct Student {
  int seat = 0;         // in the order they joined, from 1
  std::string name;     // as they gave it (their address when none)
  std::string address;  // their IP, as this machine sees it
  bool here = true;     // false once their connection closed (they left, or their laptop slept)
  int run = 0;          // the last run they were given (0: none yet)
  int rank = -1;        // their rank in it (-1: added to an elastic run, whose rank 0 numbers them)
  bool running = false;  // in that run, not done yet
  std::string outcome;   // how that run ended for them: "" while none, "finished" or the error
};

// What a student is doing, in a few words of the window's language (ui_text.h): "waiting",
// "rank 2, running", "joining run 3", "rank 2 of run 1: finished", "left", ...
std::string student_state(const Student& st);

struct ClassroomState {
  std::vector<Student> students;  // by seat
  int refused = 0;                // connections closed as not a student of this class
  std::string last_refusal;       // why the latest was
  int run = 0;                    // runs started so far
  int lesson = 0;                 // the latest run's lesson (0: training)
  int world = 0;                  // its ranks: at its start, then as each that joins says
  bool elastic = false;           // it goes on without a laptop that leaves, and takes more
  int waiting() const;            // students here and in no run
  bool running() const;           // a student of the latest run is in it still
};

class Classroom {
 public:
  // Listens on HOST:PORT (HOST "0.0.0.0": every address). DataError when it cannot (the
  // port taken). A connection that has not joined within `join_within` is refused.
  Classroom(const std::string& host, int port, std::string token,
            std::chrono::milliseconds join_within = kGreetWithin);
  ~Classroom();  // tells every student the class is over
  Classroom(const Classroom&) = delete;
  Classroom& operator=(const Classroom&) = delete;

  int port() const { return server_.port(); }
  int monitor_port() const;  // where the window watches the runs
  const std::string& host() const { return host_; }
  const std::string& token() const { return token_; }
  ClassroomState state() const;

  // A run to start: `spec_json` is its description (sim/run_spec.h), `lesson` a lesson's
  // number (0: training), stepped from the window when `step`; an `elastic` training run
  // goes on without a laptop that leaves and takes students who join later (add_to_run).
  struct Run {
    int world = 0;
    std::string spec_json;
    int lesson = 0;
    std::string lang = "en";
    bool step = false;
    bool elastic = false;
  };
  // Starts run number state().run + 1 on the first `world` students waiting, in seat order
  // (rank 0 the first whose address every other can reach). UsageError when fewer wait.
  // Returns the run's number.
  int start(const Run& run);
  // Adds every student waiting to the latest run, an elastic one under way (its rank 0
  // numbers them as they come); returns how many. UsageError for a run that is not.
  int add_to_run();

  // A lesson's run: where the items and states its laptops send go (class_lesson.h), called
  // on the classroom's thread with the rank set to the sender's own in the latest run (a
  // laptop speaks for its rank only). Null: dropped.
  using RunLines = std::function<void(const ClassroomMessage&)>;
  void set_run_lines(RunLines sink);
  // A line to the laptop of `rank` in the latest run, or to every laptop of it; false when
  // that laptop has left.
  bool send_to_rank(int rank, const std::string& line);
  void send_to_run(const std::string& line);

 private:
  struct Connection;
  void serve();
  void accept_one();
  void refuse_silent();           // under mutex_: those that have not joined within join_within_
  bool read_from(Connection& c);  // false: the connection ended or was refused
  void take_line(Connection& c, const std::string& line);
  void send_line(Connection& c, const std::string& line);
  Student* student_of(const Connection& c);
  void tell_start(Student& s, int rank, bool join);

  std::string host_;
  std::string token_;
  std::chrono::milliseconds join_within_;
  ServerSocket server_;
  std::vector<Connection*> connections_;  // the thread's, under mutex_
  mutable std::mutex mutex_;
  ClassroomState state_;
  ClassroomStart started_;  // the latest run's start, for students added to it
  RunLines run_lines_;
  std::thread thread_;
};

// A job token for a class, short enough to read off a projector ("k7f3q9").
std::string classroom_token();

}  // namespace dsgd::gui
