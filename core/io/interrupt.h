// Interrupts: SIGINT, SIGTERM and SIGHUP end a dsgd process as a user expects: one line on
// stderr, the temporaries of unfinished outputs removed (AtomicFile registers them), exit
// code 128 + the signal. The handler only writes the signal's number to a pipe; a thread of
// its own reads it and does the rest, so nothing else needs to be async-signal-safe. A
// signal the process started out ignoring (nohup, a background job) stays ignored.
// Not a way to resume: the run is over.
#pragma once

#include <string>

namespace dsgd {

// Installs the handlers and starts the thread that acts on them. Call once, first thing in
// main. `program` starts the line ("dsgd").
void handle_interrupts(const std::string& program);
// Whether handle_interrupts was called in this process.
bool interrupts_handled();
// What to say when `signal` ends the process (an MPI rank's SIGTERM comes from mpirun).
void set_interrupt_note(int signal, const std::string& note);

// The process-wide list of temporary files that an interrupt removes.
void register_temporary(const std::string& path);
void unregister_temporary(const std::string& path);

}  // namespace dsgd
