// The events a backend reports for one message (send_begin, recv_begin, recv_end, and a note
// of its retransmissions), built the same way by every backend: op "send" or "recv", the
// payload's size, and with the payload itself its first values (at most 4) as the preview.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "core/events.h"

namespace dsgd {

// Without values: a receive posted, or a payload that carries none (phantom).
inline Event message_event(EventKind kind, int peer, int tag, uint64_t bytes, uint64_t seq = 0) {
  const bool send = kind == EventKind::send_begin || kind == EventKind::send_end;
  return {.kind = kind,
          .peer = peer,
          .tag = tag,
          .bytes = bytes,
          .seq = seq,
          .op = send ? "send" : "recv"};
}

// With the payload's first values.
inline Event message_event(EventKind kind, int peer, int tag, std::span<const float> payload,
                           uint64_t seq = 0) {
  Event e = message_event(kind, peer, tag, uint64_t{payload.size_bytes()}, seq);
  e.preview_count = static_cast<uint8_t>(std::min(e.preview.size(), payload.size()));
  std::copy_n(payload.begin(), e.preview_count, e.preview.begin());
  return e;
}

// The network lost the message to `peer` with `tag` this many times: said by the sender
// right after its send_begin (events.h, kRetransmitNote).
inline Event retransmit_note(int peer, int tag, int retransmits) {
  return {.kind = EventKind::note,
          .peer = peer,
          .tag = tag,
          .seq = static_cast<uint64_t>(retransmits),
          .op = kRetransmitNote};
}

}  // namespace dsgd
