// A student's side of the classroom (core/io/classroom_wire.h): `dsgd node --rendezvous
// TEACHER:PORT --name NAME` without --rank joins the teacher's `dsgd-gui --classroom`, stays
// connected while the class lasts, and is told each run it takes part in. Every wait has a
// deadline; the connection is this process's only one to the teacher besides the observer
// stream.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <boost/asio/ip/tcp.hpp>
#include <mutex>
#include <optional>
#include <string>

#include "core/comm/communicator.h"
#include "core/io/classroom_wire.h"

namespace dsgd::sim {

class ClassroomClient {
 public:
  // Connects to the teacher (again every 0.5 s while nothing listens there) and joins.
  // CommError with the teacher's reason when it refuses this student (a wrong token),
  // TimeoutError when no teacher answered by the deadline.
  ClassroomClient(const boost::asio::ip::tcp::endpoint& teacher, const ClassroomJoin& join,
                  Clock::time_point deadline);
  ~ClassroomClient();
  ClassroomClient(const ClassroomClient&) = delete;
  ClassroomClient& operator=(const ClassroomClient&) = delete;

  int seat() const { return seat_; }
  // This machine's address on the network that reaches the teacher (where to accept peers).
  const std::string& local_address() const { return local_; }
  const boost::asio::ip::tcp::endpoint& teacher() const { return teacher_; }

  // Waits for the next run this student takes part in; nullopt when the class is over (the
  // teacher ended it, or its window closed). TimeoutError at the deadline.
  std::optional<ClassroomStart> next_run(Clock::time_point deadline);
  // Tells the teacher how this student's run ended (nothing when the teacher is gone).
  void done(const ClassroomDone& done);

  // During a run. send(): a line to the teacher (a lesson's items and states; the number a
  // joined run gave this laptop), from any thread (nothing when the teacher is gone). poll():
  // the teacher's next line if one comes by `until`, in a lesson's run; nullopt otherwise,
  // and for good once the teacher is gone (closed()).
  void send(const std::string& line);
  std::optional<ClassroomMessage> poll(Clock::time_point until);
  bool closed() const { return closed_; }

 private:
  // nullopt when the connection ended; at the deadline, TimeoutError when `must`, else
  // nullopt.
  std::optional<ClassroomMessage> read_message(Clock::time_point deadline, bool must = true);
  boost::asio::ip::tcp::endpoint teacher_;
  int fd_ = -1;
  int seat_ = 0;
  std::string local_;
  std::string pending_;  // bytes after the last whole line
  bool closed_ = false;
  std::mutex send_mutex_;
};

}  // namespace dsgd::sim
