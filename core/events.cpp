#include "core/events.h"

namespace dsgd {

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::send_begin:
      return "send_begin";
    case EventKind::send_end:
      return "send_end";
    case EventKind::recv_begin:
      return "recv_begin";
    case EventKind::recv_end:
      return "recv_end";
    case EventKind::collective_begin:
      return "collective_begin";
    case EventKind::collective_end:
      return "collective_end";
    case EventKind::compute_begin:
      return "compute_begin";
    case EventKind::compute_end:
      return "compute_end";
    case EventKind::step_begin:
      return "step_begin";
    case EventKind::step_end:
      return "step_end";
    case EventKind::note:
      return "note";
  }
  return "unknown";
}

}  // namespace dsgd
