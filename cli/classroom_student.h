// A student's laptop in a classroom: `dsgd node --rendezvous TEACHER:PORT --name NAME`
// without --rank and --world joins the teacher's `dsgd-gui --classroom` (sim/classroom_client.h)
// and runs, one after the other, the runs the teacher starts: each as `dsgd node --rank R
// --world N` would, with the run the teacher chose, its events streamed to the teacher's
// window, and peers accepted on the address that reaches the teacher (--listen to choose).
// A run that fails (a classmate left) is reported to the teacher and the laptop waits for the
// next; the class ends when the teacher closes it.
#pragma once

#include <chrono>

namespace dsgd::cli {

struct NodeFlags;

// How long a student waits for the teacher's window to answer, and for the next run.
inline constexpr std::chrono::seconds kClassroomJoinWait{120};
inline constexpr std::chrono::hours kClassroomRunWait{2};

int run_classroom_student(const NodeFlags& flags);

}  // namespace dsgd::cli
