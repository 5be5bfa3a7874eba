#include "core/io/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

namespace dsgd {
namespace {

// Process-wide by nature: signals are. Only this file touches it, under the mutex.
struct Registry {
  std::mutex mutex;
  std::set<std::string> temporaries;
  std::map<int, std::string> notes;
  std::string program = "dsgd";
  std::atomic<bool> handled{false};
};

Registry& registry() {
  static Registry r;  // one per process, made on first use (before any thread needs it)
  return r;
}

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
int g_wake_write = -1;  // the handler's only state: where it writes the signal's number

void on_signal(int signal) {  // async-signal-safe: one write
  const unsigned char number = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t n = ::write(g_wake_write, &number, 1);
}

[[noreturn]] void end_process(int signal) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  int removed = 0;
  for (const std::string& path : r.temporaries)
    removed += ::unlink(path.c_str()) == 0;
  const char* name = sigabbrev_np(signal);
  auto note = r.notes.find(signal);
  std::string line = note != r.notes.end()
                         ? note->second
                         : fmt::format("{}: interrupted by SIG{}", r.program, name ? name : "?");
  if (removed > 0)
    line += fmt::format("; removed {} unfinished output file{}", removed, removed == 1 ? "" : "s");
  std::fflush(stdout);
  std::fprintf(stderr, "\n%s\n", line.c_str());
  std::fflush(stderr);
  std::_Exit(128 + signal);
}

}  // namespace

void handle_interrupts(const std::string& program) {
  Registry& r = registry();
  r.program = program;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no handler: the signals keep their defaults
  g_wake_write = fds[1];
  for (const int signal : kSignals) {
    struct sigaction old = {};
    sigaction(signal, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // started ignoring it (nohup, &): keep ignoring
    struct sigaction action = {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(signal, &action, nullptr);
  }
  r.handled = true;
  // Whichever thread the signal lands on (library threads included), this one acts on it.
  std::thread([read_end = fds[0]] {
    unsigned char number = 0;
    while (::read(read_end, &number, 1) != 1) {
    }
    end_process(number);
  }).detach();
}

bool interrupts_handled() {
  return registry().handled;
}

void set_interrupt_note(int signal, const std::string& note) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.notes[signal] = note;
}

void register_temporary(const std::string& path) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.temporaries.insert(path);
}

void unregister_temporary(const std::string& path) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.temporaries.erase(path);
}

}  // namespace dsgd
