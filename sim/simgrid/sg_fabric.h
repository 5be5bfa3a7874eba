// SgFabric: the messages of a SimGrid run and MPI's matching rules, shared by its ranks
// (S4U actors, which run one at a time, so nothing here is locked). Every message leaves
// when it is sent. Messages between one pair go through one stream, one after another, as
// over one TCP connection: each is a transfer of its size, which SimGrid's kernel (maestro)
// starts, in a timer, when the one before it has finished, and each arrives its stream's
// latency after its last byte left (another timer: the platform's latency, once per link
// of the route on the cluster topologies), so a pair's messages pipeline as in dsgd's model
// while different pairs share the links they cross (SimGrid's fluid model). Under LV08 the
// links carry the latency instead and the streams add none (sg_platform.h). No actor moves them: a
// message costs SimGrid a transfer and two timers, and a rank's actor is resumed only when a
// message arrives for it. A message is matched as it arrives (in order of arrival, as on the
// simulated nodes) with the first posted receive that takes it (source or any source, and tag); a
// new receive takes the first arrived message it fits. A send up to the eager limit completes at
// once; a larger one when a receive has matched it (MPI's rendezvous protocol; its handshake's
// latency is not counted, as on the simulated nodes). Payloads: real (the floats are copied into
// the receive at the match) or phantom (only sizes travel; a phantom run's ranks share the memory
// of their buffers, shared_buffer). In step mode (a StepGate) each message that lands waits
// for a stepper actor, which lets the world settle (every rank that a delivery woke has run
// on to its next wait), then hands the earliest held message to the gate and delivers it
// once the gate lets it through.
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

#include "sim/link_use.h"
#include "sim/step_gate.h"
#include "sim/simgrid/sg_platform.h"

namespace dsgd::sim::sg {

struct SgMessage {
  int source = 0, dest = 0, tag = 0;
  uint64_t seq = 0;                // its place among its pair's messages
  size_t count = 0;                // floats
  bool eager = true;               // its send completes at once; else when a receive matches it
  bool carried = true;             // real: it carries its floats; phantom: only its size
  std::vector<float> copy;         // real, eager: the payload as sent
  const float* from = nullptr;     // real, rendezvous: the sender's buffer until matched
  bool matched = false;            // a receive took it
  int retransmits = 0;             // times the network lost it (sim/link_rules.h's draws)
  double delay_s = 0;              // what its draws add to its latency (jitter, the RTOs)
  std::exception_ptr error;        // a rendezvous send whose receiver crashed
  double arrival_s = -1;           // when it arrived
  simgrid::s4u::CommPtr transfer;  // its bytes on the links, until it arrives
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
  // `platform`: a host per rank, its links, and what the fabric adds to each message.
  // eager_bytes: MPI's eager limit; phantom: a run of phantom payloads (shared_buffer).
  SgFabric(SgPlatform platform, size_t eager_bytes, bool phantom);
  ~SgFabric();
  SgFabric(const SgFabric&) = delete;
  SgFabric& operator=(const SgFabric&) = delete;

  // Rank `source` sends data to `dest`; it is matched when it arrives. `carried`: whether
  // the floats go with it (false: a phantom message, its size only).
  std::shared_ptr<SgMessage> send(int source, int dest, int tag, std::span<const float> data,
                                  bool carried);
  // Rank `rank` posts a receive; it is matched now if a message has arrived for it.
  std::shared_ptr<SgReceive> post(int rank, int source, int tag, std::span<float> buffer);
  // A receive whose request was dropped before its match stays posted (it takes its
  // message, as a dropped MPI receive does) but into a buffer of its own.
  void abandon(SgReceive& receive);
  // A rendezvous send whose request was dropped before its match: the message keeps a copy
  // of the sender's buffer, which may change or go away now.
  void abandon(SgMessage& message);

  // Blocks the calling actor until the receive has its message (or until the send is
  // matched, for a rendezvous send); false from the try_ forms instead.
  void wait(SgReceive& receive);
  bool try_complete(SgReceive& receive);
  void wait(SgMessage& message);
  bool try_complete(const SgMessage& message) const;

  // Rank `rank` crashed (a --crash fault): the receives posted from it and the rendezvous
  // sends to it that nothing has matched fail with "lost rank R", now and from now on, as
  // on simulated nodes when its connections drop. Its messages on the way still arrive.
  void crash(int rank);

  // The run is over (a rank failed and the others are being killed): messages still on the
  // links go nowhere.
  void stop() { stopped_ = true; }

  // Step mode: each message that lands is held until `gate` lets it through (step_loop).
  void set_step_gate(StepGate* gate) { gate_ = gate; }
  // Step mode's daemon actor: delivers the held messages one at a time, each once every rank
  // woken before it has run on to its next wait, earliest arrival first (then source, dest
  // and seq, as simulated nodes step).
  void step_loop();

  // Why nothing from src reaches dst any more ("" while it may): an outage without end.
  std::string outage_note(int src, int dst) const;

  size_t eager_bytes() const { return eager_bytes_; }
  simgrid::s4u::Host* host(int rank) const { return hosts_[static_cast<size_t>(rank)]; }
  bool phantom() const { return phantom_; }
  // Phantom payloads: `count` floats that every rank shares, valid until the fabric goes (a
  // larger request gets a new buffer; the ones handed out before stay). Pages no one writes
  // take no memory.
  std::span<float> shared_buffer(size_t count);

  // The bytes each link has carried (each message counted on every link of its route), the
  // busiest first; links that carried nothing are left out.
  std::vector<LinkUse> link_use() const;

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
  // The messages of one pair not yet arrived, in the order they were sent: `queue` waits
  // for the links (its first is on them while `busy`), `landing` has left them and arrives
  // a latency later, in this order (a timer for each, and timers of one date run in no
  // particular order: each delivers every message due, from the front).
  struct Stream {
    int source = 0, dest = 0;
    std::deque<std::shared_ptr<SgMessage>> queue, landing;
    bool busy = false;
    LinkSpec link;                // its pair's (sim/link_rules.h): jitter, loss, bandwidth
    double latency_s = 0;         // each message's, after its last byte left
    double size_scale = 1;        // its transfers' sizes: bytes x this (sg_platform.h)
    uint64_t rng = 0;             // its draws' state
    double last_arrival_s = 0;    // none arrives before the one sent before it
    uint64_t sent = 0;            // messages so far (their seq)
    std::vector<double*> counts;  // the bytes carried by each link of its route (link_bytes_)
  };
  void route(Stream& stream);  // its link, latency and rate, and its links' counts
  void land(Stream& stream);   // delivers the landing messages due now
  static bool takes(const SgReceive& r, const SgMessage& m);
  void arrive(const std::shared_ptr<SgMessage>& m);  // matched or kept as unexpected
  void match(SgReceive& r, const std::shared_ptr<SgMessage>& m);
  void start_transfer(const std::shared_ptr<SgMessage>& m);
  // In SimGrid's kernel: the stream's first message onto the links; a transfer finished.
  void start_next(Stream& stream);
  static void transfer_done(const simgrid::s4u::Activity& activity);
  void wake(int rank);
  void hold(const std::shared_ptr<SgMessage>& m);  // step mode: for step_loop
  void settle();                                   // until no rank woken is still to run
  StepInfo step_info(const SgMessage& m) const;
  // The error of a receive from (or a rendezvous send to) crashed rank `peer`.
  std::exception_ptr lost(int rank, int peer, bool is_recv, int tag) const;

  std::vector<simgrid::s4u::Host*> hosts_;
  NetworkConfig network_;
  bool latency_per_link_, latency_in_links_, pair_bandwidths_;
  std::unordered_map<const simgrid::s4u::Link*, double> link_bytes_;
  size_t eager_bytes_;
  bool phantom_;
  bool stopped_ = false;
  int woken_ = 0;  // ranks resumed by wake() that have not run yet
  StepGate* gate_ = nullptr;
  std::vector<std::shared_ptr<SgMessage>> held_;  // landed, waiting for step_loop
  simgrid::s4u::Actor* stepper_ = nullptr;        // step_loop's actor while nothing is held
  std::vector<Inbox> inboxes_;
  std::vector<bool> crashed_;                     // by rank
  std::vector<std::unique_ptr<float[]>> shared_;  // the last is the largest
  size_t shared_count_ = 0;
  // A rank's streams, by destination; the last one it used at hand (a ring's every send).
  struct Outbox {
    std::unordered_map<int, Stream> streams;
    int last_dest = -1;
    Stream* last = nullptr;
  };
  Stream& stream(int source, int dest);
  std::vector<Outbox> outboxes_;
};

}  // namespace dsgd::sim::sg
