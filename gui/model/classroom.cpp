#include "gui/model/classroom.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/classroom_wire.h"
#include "gui/model/listen_socket.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {

struct Classroom::Connection {
  int fd = -1;
  std::chrono::steady_clock::time_point accepted;
  std::string address;  // the peer's IP
  std::string pending;  // bytes after the last whole line
  int seat = 0;         // 0 until it joined
};

std::string student_state(const Student& st) {
  if (!st.here) return tr("left");
  if (st.run == 0) return tr("waiting");
  if (st.running && st.rank < 0) return fmt::format(fmt::runtime(tr("joining run {}")), st.run);
  if (st.running) return fmt::format(fmt::runtime(tr("rank {}, running")), st.rank);
  if (st.rank < 0)  // added to an elastic run: its rank 0 numbered it
    return fmt::format(fmt::runtime(tr(st.outcome == "finished" ? "joined run {}: finished"
                                                                : "joined run {}: {}")),
                       st.run, st.outcome);
  if (st.outcome == "finished")
    return fmt::format(fmt::runtime(tr("rank {} of run {}: finished")), st.rank, st.run);
  return fmt::format(fmt::runtime(tr("rank {} of run {}: {}")), st.rank, st.run, st.outcome);
}

int ClassroomState::waiting() const {
  return static_cast<int>(std::count_if(students.begin(), students.end(),
                                        [](const Student& s) { return s.here && !s.running; }));
}

bool ClassroomState::running() const {
  return std::any_of(students.begin(), students.end(),
                     [&](const Student& s) { return s.run == run && s.running; });
}

std::string classroom_token() {
  static constexpr char kLetters[] = "abcdefghjkmnpqrstuvwxyz23456789";  // no 0/o, 1/l/i
  std::random_device device;
  std::uniform_int_distribution<size_t> pick(0, sizeof kLetters - 2);
  std::string token;
  for (int i = 0; i < 6; ++i)
    token += kLetters[pick(device)];
  return token;
}

Classroom::Classroom(const std::string& host, int port, std::string token,
                     std::chrono::milliseconds join_within)
    : host_(host),
      token_(std::move(token)),
      join_within_(join_within),
      server_(host, std::to_string(port), fmt::format("--classroom on {}:{}", host, port)) {
  thread_ = std::thread([this] { serve(); });
}

Classroom::~Classroom() {
  server_.wake();
  thread_.join();
  for (Connection* c : connections_) {
    if (c->seat > 0) send_line(*c, classroom_end_line("the teacher closed the classroom"));
    ::close(c->fd);
    delete c;
  }
}

int Classroom::monitor_port() const {
  return port() + kClassroomMonitorOffset;
}

ClassroomState Classroom::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

// Polls the listening socket, the wake pipe and every connection until the pipe says stop.
void Classroom::serve() {
  for (;;) {
    std::vector<pollfd> fds{{server_.wake_fd(), POLLIN, 0}, {server_.fd(), POLLIN, 0}};
    {
      std::lock_guard lock(mutex_);
      for (const Connection* c : connections_)
        fds.push_back({c->fd, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return;
    if (fds[0].revents) return;
    std::vector<Connection*> gone;
    for (size_t i = 2; i < fds.size(); ++i) {
      Connection* c = connections_[i - 2];
      if (fds[i].revents && !read_from(*c)) gone.push_back(c);
    }
    std::lock_guard lock(mutex_);
    for (Connection* c : gone) {
      if (Student* s = student_of(*c)) s->here = false, s->running = false;
      std::erase(connections_, c);
      ::close(c->fd);
      delete c;
    }
    refuse_silent();
    if (fds[1].revents & POLLIN) accept_one();
  }
}

void Classroom::refuse_silent() {
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(connections_, [&](Connection* c) {
    if (c->seat > 0 || now - c->accepted < join_within_) return false;
    ++state_.refused;
    state_.last_refusal = fmt::format("{}: it did not join within {} s", c->address,
                                      std::chrono::duration<double>(join_within_).count());
    ::close(c->fd);
    delete c;
    return true;
  });
}

void Classroom::accept_one() {
  const int fd = ::accept4(server_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0)
    connections_.push_back(new Connection{
        .fd = fd, .accepted = std::chrono::steady_clock::now(), .address = peer_host(fd)});
}

Student* Classroom::student_of(const Connection& c) {
  if (c.seat <= 0 || c.seat > static_cast<int>(state_.students.size())) return nullptr;
  return &state_.students[static_cast<size_t>(c.seat - 1)];
}

bool Classroom::read_from(Connection& c) {
  char buffer[16384];
  const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
  if (n <= 0) return false;
  c.pending.append(buffer, static_cast<size_t>(n));
  std::lock_guard lock(mutex_);
  try {
    size_t start = 0;
    for (size_t end; (end = c.pending.find('\n', start)) != std::string::npos; start = end + 1)
      take_line(c, c.pending.substr(start, end - start));
    c.pending.erase(0, start);
    if (c.pending.size() > kMaxClassroomLine)
      throw DataError(fmt::format("a line longer than {} bytes", kMaxClassroomLine));
    return true;
  } catch (const DataError& e) {
    ++state_.refused;
    state_.last_refusal = fmt::format("{}: {}", c.address, e.what());
    if (c.seat == 0) send_line(c, classroom_refused_line(e.what()));
    return false;
  }
}

// Under mutex_. DataError refuses the connection.
void Classroom::take_line(Connection& c, const std::string& line) {
  const ClassroomMessage m = parse_classroom_line(line);
  if (c.seat == 0) {
    if (!m.join) throw DataError("it did not begin by joining");
    if (m.join->token != token_) throw DataError("wrong job token");
    c.seat = static_cast<int>(state_.students.size()) + 1;
    state_.students.push_back({.seat = c.seat,
                               .name = m.join->name.empty() ? c.address : m.join->name,
                               .address = c.address});
    send_line(c, classroom_welcome_line(c.seat));
    return;
  }
  Student* s = student_of(c);
  if (m.joined && s && m.joined->run == s->run && s->running) {
    s->rank = m.joined->node;  // numbered by the run's rank 0
    if (s->run == state_.run) state_.world = m.joined->world;
  }
  if (m.done && s && m.done->run == s->run) {
    s->running = false;
    s->outcome = m.done->error.empty() ? "finished" : m.done->error;
  }
  if ((m.item || m.state) && s && s->run == state_.run && run_lines_) {
    ClassroomMessage own = m;
    if (own.item) own.item->rank = s->rank, own.item->run = s->run;
    if (own.state) own.state->rank = s->rank, own.state->run = s->run;
    run_lines_(own);
  }
}

void Classroom::set_run_lines(RunLines sink) {
  std::lock_guard lock(mutex_);
  run_lines_ = std::move(sink);
}

bool Classroom::send_to_rank(int rank, const std::string& line) {
  std::lock_guard lock(mutex_);
  for (Connection* c : connections_)
    if (const Student* s = student_of(*c); s && s->run == state_.run && s->rank == rank) {
      send_line(*c, line);
      return true;
    }
  return false;
}

void Classroom::send_to_run(const std::string& line) {
  std::lock_guard lock(mutex_);
  for (Connection* c : connections_)
    if (const Student* s = student_of(*c); s && s->run == state_.run && s->running)
      send_line(*c, line);
}

void Classroom::send_line(Connection& c, const std::string& line) {
  [[maybe_unused]] const ssize_t n =
      ::send(c.fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

namespace {

bool loopback(const std::string& address) {
  return address.rfind("127.", 0) == 0;
}

// Seats of the first `world` students waiting, rank 0 first: the first whose address
// every other can reach (not loopback, unless all of them are on this machine).
std::vector<int> pick_ranks(const std::vector<Student>& students, int world) {
  std::vector<int> seats;
  for (const Student& s : students)
    if (s.here && !s.running && static_cast<int>(seats.size()) < world) seats.push_back(s.seat);
  const auto remote = std::find_if(seats.begin(), seats.end(), [&](int seat) {
    return !loopback(students[static_cast<size_t>(seat - 1)].address);
  });
  if (remote != seats.end()) std::rotate(seats.begin(), remote, remote + 1);
  return seats;
}

}  // namespace

int Classroom::start(const Run& r) {
  std::lock_guard lock(mutex_);
  if (state_.waiting() < r.world)
    throw UsageError(
        fmt::format("{} students are waiting; this run needs {}", state_.waiting(), r.world));
  const std::vector<int> seats = pick_ranks(state_.students, r.world);
  const Student& rank0 = state_.students[static_cast<size_t>(seats[0] - 1)];
  started_ = {
      .run = ++state_.run,
      .world = r.world,
      .rendezvous = fmt::format("{}:{}", rank0.address, port() + kClassroomRendezvousOffset),
      .monitor_port = monitor_port(),
      .lesson = r.lesson,
      .lang = r.lang,
      .spec_json = r.spec_json,
      .step = r.step};
  state_.lesson = r.lesson;
  state_.world = r.world;
  state_.elastic = r.elastic && r.lesson == 0;
  for (int rank = 0; rank < r.world; ++rank)
    tell_start(state_.students[static_cast<size_t>(seats[static_cast<size_t>(rank)] - 1)], rank,
               false);
  return started_.run;
}

int Classroom::add_to_run() {
  std::lock_guard lock(mutex_);
  if (!state_.elastic || !state_.running())
    throw UsageError("only an elastic training run under way takes more laptops");
  int added = 0;
  for (Student& s : state_.students)
    if (s.here && !s.running) tell_start(s, 0, true), ++added;
  return added;
}

// Under mutex_: the latest run's start to student `s`, as rank `rank` or as one joining.
void Classroom::tell_start(Student& s, int rank, bool join) {
  s.run = started_.run, s.rank = join ? -1 : rank, s.running = true, s.outcome.clear();
  ClassroomStart start = started_;
  start.rank = rank;
  start.join = join;
  for (Connection* c : connections_)
    if (c->seat == s.seat) send_line(*c, classroom_start_line(start));
}

}  // namespace dsgd::gui
