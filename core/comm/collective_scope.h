// CollectiveScope: marks one collective in the event stream (collective_begin at
// construction, collective_end at destruction when it completed), so that traces, the GUI
// and the lessons see every collective the same way, whoever moves its bytes: dsgd's
// algorithms, a backend's native one, or a device that sums among its GPUs (NCCL). A
// collective that failed (left by an exception) has no end: it stays open, as a failed step
// does, and is not shown as complete. Not a timer and not a lock.
#pragma once

#include <cstddef>
#include <exception>

#include "core/comm/communicator.h"

namespace dsgd {

class CollectiveScope {
 public:
  // `op` is a static string ("all_reduce"); `bytes` the collective's payload.
  CollectiveScope(Communicator& comm, const char* op, size_t bytes)
      : comm_(comm), op_(op), bytes_(bytes) {
    if (comm_.events())
      comm_.emit({.kind = EventKind::collective_begin, .bytes = bytes_, .op = op_});
  }
  ~CollectiveScope() {
    if (std::uncaught_exceptions() > unwinding_) return;  // failed: it did not complete
    if (comm_.events()) comm_.emit({.kind = EventKind::collective_end, .bytes = bytes_, .op = op_});
  }
  CollectiveScope(const CollectiveScope&) = delete;
  CollectiveScope& operator=(const CollectiveScope&) = delete;

 private:
  Communicator& comm_;
  const char* op_;
  size_t bytes_;
  int unwinding_ = std::uncaught_exceptions();  // exceptions in flight when it began
};

}  // namespace dsgd
