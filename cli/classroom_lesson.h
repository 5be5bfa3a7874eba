// A lesson on a student's laptop (classroom_student.h): the teacher's window started lesson N
// with this laptop as rank R. The laptop runs its rank as `dsgd lesson N` runs each rank, as
// a node process of its own (sim/node_process.h), prints its rank's part of the lesson (the
// sections' text, what its rank prints, the messages it sends), and tells the teacher's
// window each item its rank records and, while the window steps the lesson, where its rank
// stands, letting a message through when the window says (core/io/classroom_wire.h). When the
// window goes away the lesson runs on by itself.
#pragma once

#include "core/io/classroom_wire.h"

namespace dsgd::sim {
class ClassroomClient;
}

namespace dsgd::cli {

struct NodeFlags;

// `node`: this laptop's flags with the run's rank, world, rendezvous and run set
// (classroom_student.cpp). Throws what the lesson throws, UsageError for a lesson this dsgd
// does not have or a world it does not run on.
void run_classroom_lesson(const NodeFlags& node, const ClassroomStart& start,
                          sim::ClassroomClient& client);

}  // namespace dsgd::cli
