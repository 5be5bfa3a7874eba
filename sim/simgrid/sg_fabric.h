// SgFabric: the messages of a SimGrid run and MPI's matching rules, shared by its ranks
// (S4U actors, which run one at a time, so nothing here is locked). Every message leaves
// when it is sent. Messages between one pair go through one stream, one after another, as
// over one TCP connection: a daemon actor per pair moves them (Comm::sendto_async of their
// size over latency-free links), and each arrives the link's latency after its last byte
// left, so a pair's messages pipeline as in dsgd's model while different pairs share the
// links they cross (SimGrid's fluid model). A message is matched as it arrives (in order of
// arrival, as on the simulated nodes) with the first posted receive that takes it (source
// or any source, and tag); a new receive takes the first arrived message it fits. A send up
// to the eager limit completes at once; a larger one when a receive has matched it (MPI's
// rendezvous protocol; its handshake's latency is not counted, as on the simulated nodes).
// Payloads: real (the floats are copied into the receive at the match) or phantom (only
// sizes travel).
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

namespace dsgd::sim::sg {

struct SgMessage {
  int source = 0, dest = 0, tag = 0;
  size_t count = 0;             // floats
  bool eager = true;            // sent at once; else its transfer waits for the match
  std::vector<float> copy;      // real, eager: the payload as sent
  const float* from = nullptr;  // real, rendezvous: the sender's buffer until matched
  bool matched = false;         // a receive took it
  double arrival_s = -1;        // when it arrives, once its last byte has left
};

struct SgReceive {
  int rank = 0, source = 0, tag = 0;  // source may be kAnySource
  std::span<float> buffer;
  std::vector<float> own;              // the buffer once its request was dropped
  std::shared_ptr<SgMessage> message;  // once matched
  std::exception_ptr error;            // the match failed (sizes differ)
};

class SgFabric {
 public:
  // `hosts`: one per rank, on latency-free links; latency_s: every message's latency.
  // eager_bytes: MPI's eager limit; phantom: sizes only.
  SgFabric(std::vector<simgrid::s4u::Host*> hosts, double latency_s, size_t eager_bytes,
           bool phantom);

  // Rank `source` sends data to `dest`; it is matched when it arrives.
  std::shared_ptr<SgMessage> send(int source, int dest, int tag, std::span<const float> data);
  // Rank `rank` posts a receive; it is matched now if a message has arrived for it.
  std::shared_ptr<SgReceive> post(int rank, int source, int tag, std::span<float> buffer);
  // A receive whose request was dropped before its match stays posted (it takes its
  // message, as a dropped MPI receive does) but into a buffer of its own.
  void abandon(SgReceive& receive);
  // A rendezvous send whose request was dropped before its match: the message keeps a copy
  // of the sender's buffer, which may change or go away now.
  void abandon(SgMessage& message);

  // Blocks the calling actor until the receive is matched and its message has arrived (or
  // until the send is matched, for a rendezvous send); false from the try_ forms instead.
  void wait(SgReceive& receive);
  bool try_complete(SgReceive& receive);
  void wait(SgMessage& message);
  bool try_complete(const SgMessage& message) const;

  size_t eager_bytes() const { return eager_bytes_; }
  bool phantom() const { return phantom_; }

 private:
  struct Inbox {
    std::deque<std::shared_ptr<SgMessage>> unexpected;
    std::deque<std::shared_ptr<SgReceive>> posted;
    // The rank's actor while it waits for one of its receives or rendezvous sends (it is
    // suspended, resumed by wake(), and checks its own condition again).
    simgrid::s4u::Actor* waiter = nullptr;
  };
  // Blocks rank's actor until done() holds.
  template <typename Done>
  void block(int rank, Done done);
  // The messages of one pair, in the order they were started.
  struct Stream {
    std::deque<std::shared_ptr<SgMessage>> queue;
    bool pumped = false;                  // its actor exists
    simgrid::s4u::Actor* idle = nullptr;  // its actor, suspended while the queue is empty
  };
  static bool takes(const SgReceive& r, const SgMessage& m);
  void arrive(const std::shared_ptr<SgMessage>& m);  // matched or kept as unexpected
  void match(SgReceive& r, const std::shared_ptr<SgMessage>& m);
  static void sleep_until(double t);
  void start_transfer(const std::shared_ptr<SgMessage>& m);
  void pump(int source, int dest, Stream& stream);  // the stream's actor
  void wake(int rank);

  std::vector<simgrid::s4u::Host*> hosts_;
  double latency_s_;
  size_t eager_bytes_;
  bool phantom_;
  std::vector<Inbox> inboxes_;
  std::unordered_map<uint64_t, Stream> streams_;  // by source * world + dest
};

}  // namespace dsgd::sim::sg
