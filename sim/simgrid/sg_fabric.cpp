#include "sim/simgrid/sg_fabric.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include <simgrid/kernel/Timer.hpp>
#include <xbt/asserts.h>

#include <fmt/format.h>

#include "core/comm/communicator.h"
#include "core/errors.h"
#include "sim/link_rules.h"
#include "sim/wait_text.h"

namespace sg4 = simgrid::s4u;

namespace dsgd::sim::sg {

namespace {

using simgrid::kernel::timer::Timer;

// The fabric whose transfers are under way: SimGrid tells of finished activities through one
// signal for the whole process, and a process runs one simulation.
SgFabric* running = nullptr;

// Where a held message stands in step mode's order (steps_before): its arrival is its time.
struct StepOrder {
  explicit StepOrder(const SgMessage& m)
      : model_s(m.arrival_s), source(m.source), dest(m.dest), seq(m.seq) {}
  double model_s;
  int source, dest;
  uint64_t seq;
};

}  // namespace

SgFabric::SgFabric(SgPlatform platform, size_t eager_bytes, bool phantom)
    : hosts_(std::move(platform.hosts)),
      network_(std::move(platform.network)),
      latency_per_link_(platform.latency_per_link),
      latency_in_links_(platform.latency_in_links),
      pair_bandwidths_(platform.pair_bandwidths),
      eager_bytes_(eager_bytes),
      phantom_(phantom),
      inboxes_(hosts_.size()),
      crashed_(hosts_.size(), false),
      outboxes_(hosts_.size()) {
  static bool connected = false;
  if (!std::exchange(connected, true)) sg4::Activity::on_completion_cb(transfer_done);
  running = this;
}

SgFabric::~SgFabric() {
  running = nullptr;
}

bool SgFabric::takes(const SgReceive& r, const SgMessage& m) {
  return (r.source == kAnySource || r.source == m.source) && r.tag == m.tag;
}

std::shared_ptr<SgMessage> SgFabric::send(int source, int dest, int tag,
                                          std::span<const float> data, bool carried) {
  auto m = std::make_shared<SgMessage>();
  m->source = source;
  m->dest = dest;
  m->tag = tag;
  m->count = data.size();
  m->eager = source == dest || data.size_bytes() <= eager_bytes_;
  m->carried = carried;
  if (source != dest) {  // the draws, in send order on its link, as on simulated nodes
    Stream& stream = this->stream(source, dest);
    m->seq = stream.sent++;
    const LinkDraw draw = draw_delay(stream.link, network_.rto_s, stream.rng);
    m->retransmits = draw.retransmits;
    m->delay_s = draw.extra_s;
  }
  if (carried) {
    if (m->eager)
      m->copy.assign(data.begin(), data.end());
    else
      m->from = data.data();
  }
  start_transfer(m);
  return m;
}

void SgFabric::arrive(const std::shared_ptr<SgMessage>& m) {
  if (crashed_[m->dest]) {  // nobody will receive it
    if (!m->eager) {
      m->error = lost(m->source, m->dest, false, m->tag);
      wake(m->source);
    }
    return;
  }
  Inbox& inbox = inboxes_[m->dest];
  const auto r = std::find_if(inbox.posted.begin(), inbox.posted.end(),
                              [&](const auto& p) { return takes(*p, *m); });
  if (r == inbox.posted.end()) {
    inbox.unexpected.push_back(m);
  } else {
    const std::shared_ptr<SgReceive> receive = *r;
    inbox.posted.erase(r);
    match(*receive, m);
  }
  wake(m->dest);
}

std::shared_ptr<SgReceive> SgFabric::post(int rank, int source, int tag, std::span<float> buffer) {
  auto r = std::make_shared<SgReceive>();
  r->rank = rank;
  r->source = source;
  r->tag = tag;
  r->buffer = buffer;
  Inbox& inbox = inboxes_[rank];
  const auto m = std::find_if(inbox.unexpected.begin(), inbox.unexpected.end(),
                              [&](const auto& u) { return takes(*r, *u); });
  if (m == inbox.unexpected.end()) {
    if (source != kAnySource && crashed_[source])
      r->error = lost(rank, source, true, tag);
    else
      inbox.posted.push_back(r);
    return r;
  }
  const std::shared_ptr<SgMessage> message = *m;
  inbox.unexpected.erase(m);
  match(*r, message);
  return r;
}

void SgFabric::abandon(SgReceive& r) {
  if (r.message) return;
  r.own.resize(r.buffer.size());  // it stays posted, as a dropped MPI receive does
  r.buffer = r.own;
}

void SgFabric::match(SgReceive& r, const std::shared_ptr<SgMessage>& m) {
  r.message = m;
  m->matched = true;
  if (m->count != r.buffer.size()) {
    r.error = std::make_exception_ptr(UsageError(
        fmt::format("rank {}: recv buffer holds {} floats but the message from rank {} (tag {}) "
                    "has {} floats; size the buffer to match the send",
                    r.rank, r.buffer.size(), m->source, m->tag, m->count)));
  } else if (m->carried && m->count > 0) {
    std::memcpy(r.buffer.data(), m->from ? m->from : m->copy.data(), m->count * sizeof(float));
  }
  m->from = nullptr;
  std::vector<float>().swap(m->copy);
  if (!m->eager) wake(m->source);  // a rendezvous send ends at its match
}

void SgFabric::crash(int rank) {
  crashed_[rank] = true;
  for (int i = 0; i < static_cast<int>(inboxes_.size()); ++i) {
    auto& posted = inboxes_[i].posted;
    for (auto r = posted.begin(); r != posted.end();) {
      if ((*r)->source != rank) {
        ++r;
        continue;
      }
      (*r)->error = lost(i, rank, true, (*r)->tag);
      r = posted.erase(r);
      wake(i);
    }
  }
  for (const std::shared_ptr<SgMessage>& m : inboxes_[rank].unexpected)
    if (!m->eager && !m->matched) {
      m->error = lost(m->source, rank, false, m->tag);
      wake(m->source);
    }
  inboxes_[rank].unexpected.clear();
}

std::exception_ptr SgFabric::lost(int rank, int peer, bool is_recv, int tag) const {
  return std::make_exception_ptr(
      CommError(lost_peer_text(rank, peer, is_recv, tag, "it crashed (a --crash fault)"), peer));
}

void SgFabric::wake(int rank) {
  if (sg4::Actor* waiter = std::exchange(inboxes_[rank].waiter, nullptr)) {
    ++woken_;
    waiter->resume();
  }
}

void SgFabric::hold(const std::shared_ptr<SgMessage>& m) {
  held_.push_back(m);
  if (sg4::Actor* stepper = std::exchange(stepper_, nullptr)) stepper->resume();
}

// Actors resumed now run in the engine's next sub-round, without virtual time passing: each
// yield lets every rank that is ready run until it waits again.
void SgFabric::settle() {
  do {
    sg4::this_actor::yield();
  } while (woken_ > 0);
}

StepInfo SgFabric::step_info(const SgMessage& m) const {
  StepInfo info{.source = m.source,
                .dest = m.dest,
                .tag = m.tag,
                .seq = m.seq,
                .count = m.count,
                .model_s = m.arrival_s,
                .net_s = m.arrival_s};
  const float* values = !m.carried ? nullptr : m.from ? m.from : m.copy.data();
  if (values) info.preview.assign(values, values + std::min<size_t>(m.count, 4));
  return info;
}

void SgFabric::step_loop() {
  sg4::Actor::self()->daemonize();  // ended with the run
  for (;;) {
    while (held_.empty()) {
      stepper_ = sg4::Actor::self();
      sg4::this_actor::suspend();
    }
    settle();
    const auto next = std::min_element(
        held_.begin(), held_.end(),
        [](const auto& a, const auto& b) { return steps_before(StepOrder(*a), StepOrder(*b)); });
    const std::shared_ptr<SgMessage> m = *next;
    held_.erase(next);
    gate_->hold(step_info(*m));  // the whole simulation waits here for the step
    if (!stopped_) arrive(m);
  }
}

void SgFabric::start_transfer(const std::shared_ptr<SgMessage>& m) {
  if (m->source == m->dest) {  // to itself: no link
    m->arrival_s = sg4::Engine::get_clock();
    arrive(m);
    return;
  }
  Stream& stream = this->stream(m->source, m->dest);
  stream.queue.push_back(m);
  if (stream.busy) return;  // it leaves when the ones before it have
  stream.busy = true;
  // Started by the kernel (maestro), a transfer tells transfer_done when it ends, with no
  // actor waiting for it; started by this actor, it would not. The timer runs at this same
  // virtual instant. Setting it from an actor is safe because actors run one at a time in
  // the kernel's thread (contexts/nthreads 1, sg_cluster.cpp).
  Timer::set(sg4::Engine::get_clock(), [this, &stream] { start_next(stream); });
}

SgFabric::Stream& SgFabric::stream(int source, int dest) {
  Outbox& out = outboxes_[source];
  if (out.last_dest == dest) return *out.last;
  auto [it, added] = out.streams.try_emplace(dest);
  Stream& s = it->second;
  if (added) {
    s.source = source;
    s.dest = dest;
    route(s);
  }
  out.last_dest = dest;
  out.last = &s;
  return s;
}

void SgFabric::route(Stream& s) {
  std::vector<sg4::Link*> links;
  hosts_[s.source]->route_to(hosts_[s.dest], links, nullptr);
  const int world = static_cast<int>(hosts_.size());
  s.link = latency_per_link_ || latency_in_links_
               ? network_.link
               : through_trunk(network_, world, s.source, s.dest,
                               overridden_link(network_, s.source, s.dest));
  s.latency_s = latency_in_links_   ? 0
                : latency_per_link_ ? network_.link.latency_s * double(links.size())
                                    : s.link.latency_s;
  if (pair_bandwidths_) {  // alone on its route, a transfer takes bytes / the pair's bandwidth
    double route_Bps = kUnlimitedBps;
    for (const sg4::Link* link : links)
      route_Bps = std::min(route_Bps, link->get_bandwidth());
    s.size_scale = route_Bps / (s.link.bandwidth_Bps > 0 ? s.link.bandwidth_Bps : kUnlimitedBps);
  }
  s.rng = link_rng_seed(network_.seed, world, s.source, s.dest);
  for (const sg4::Link* link : links)
    s.counts.push_back(&link_bytes_[link]);
}

std::string SgFabric::outage_note(int src, int dst) const {
  if (outage_end(network_.outages, src, dst, sg4::Engine::get_clock()) < 1e299) return "";
  return fmt::format(
      "the link {} -> {} is down for good (an outage without 'until' in the scenario), so "
      "nothing crosses it",
      src, dst);
}

std::vector<LinkUse> SgFabric::link_use() const {
  std::vector<LinkUse> use;
  for (const auto& [link, bytes] : link_bytes_)
    if (bytes > 0)
      use.push_back({.name = link->get_name(),
                     .bandwidth_Bps = link->get_bandwidth(),
                     .bytes = bytes,
                     .shared = link->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE});
  std::sort(use.begin(), use.end(), [](const LinkUse& a, const LinkUse& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
  return use;
}

void SgFabric::start_next(Stream& stream) {
  if (stopped_) return;
  if (stream.queue.empty()) {
    stream.busy = false;
    return;
  }
  // A link in an outage holds its messages until it ends (never, for one without end).
  const double now = sg4::Engine::get_clock();
  const double leaves = outage_end(network_.outages, stream.source, stream.dest, now);
  if (leaves > now) {
    if (leaves < 1e299) Timer::set(leaves, [this, &stream] { start_next(stream); });
    return;
  }
  SgMessage& m = *stream.queue.front();
  m.transfer = sg4::Comm::sendto_init(hosts_[stream.source], hosts_[stream.dest]);
  const double bytes = double(m.count * sizeof(float));
  for (double* count : stream.counts)
    *count += bytes;
  m.transfer->set_payload_size(static_cast<uint64_t>(std::llround(bytes * stream.size_scale)));
  m.transfer->set_data(&stream);
  m.transfer->start();
}

void SgFabric::transfer_done(const sg4::Activity& activity) {
  const auto* transfer = dynamic_cast<const sg4::Comm*>(&activity);
  if (!running || running->stopped_ || !transfer) return;
  auto* stream = transfer->get_data<Stream>();
  if (!stream) return;
  // Nothing modelled makes a transfer fail (no link or host goes down); one that did would
  // leave its stream stuck and the run reported as a deadlock, so say it here instead.
  if (activity.get_state() != sg4::Activity::State::FINISHED)
    xbt_die("dsgd: a SimGrid transfer from rank %d to rank %d ended in state %s", stream->source,
            stream->dest, activity.get_state_str());
  SgFabric& fabric = *running;
  const double now = sg4::Engine::get_clock();
  std::shared_ptr<SgMessage> m = std::move(stream->queue.front());
  stream->queue.pop_front();
  m->arrival_s = std::max(now + stream->latency_s + m->delay_s, stream->last_arrival_s);
  stream->last_arrival_s = m->arrival_s;
  // It arrives a latency later, in a timer (which lets go of the transfer this notification
  // is about); the next message of the stream leaves now.
  stream->landing.push_back(m);
  Timer::set(m->arrival_s, [&fabric, stream] { fabric.land(*stream); });
  fabric.start_next(*stream);
}

void SgFabric::land(Stream& stream) {
  const double now = sg4::Engine::get_clock();
  while (!stopped_ && !stream.landing.empty() && stream.landing.front()->arrival_s <= now) {
    const std::shared_ptr<SgMessage> m = std::move(stream.landing.front());
    stream.landing.pop_front();
    m->transfer.reset();  // SimGrid has finished with it
    if (gate_)
      hold(m);
    else
      arrive(m);
  }
}

template <typename Done>
void SgFabric::block(int rank, Done done) {
  while (!done()) {
    inboxes_[rank].waiter = sg4::Actor::self();
    sg4::this_actor::suspend();
    --woken_;  // wake() resumed it
  }
}

void SgFabric::wait(SgReceive& r) {
  block(r.rank, [&] { return r.message != nullptr || r.error; });
  if (r.error) std::rethrow_exception(r.error);
}

bool SgFabric::try_complete(SgReceive& r) {
  if (r.error) std::rethrow_exception(r.error);
  return r.message != nullptr;
}

void SgFabric::wait(SgMessage& m) {
  if (m.eager) return;
  block(m.source, [&] { return m.matched || m.error; });
  if (m.error) std::rethrow_exception(m.error);
}

void SgFabric::abandon(SgMessage& m) {
  if (m.matched || !m.from) return;
  m.copy.assign(m.from, m.from + m.count);
  m.from = nullptr;
}

bool SgFabric::try_complete(const SgMessage& m) const {
  if (m.error) std::rethrow_exception(m.error);
  return m.eager || m.matched;
}

std::span<float> SgFabric::shared_buffer(size_t count) {
  if (count > shared_count_) {
    shared_.push_back(std::make_unique_for_overwrite<float[]>(count));
    shared_count_ = count;
  }
  return {shared_.back().get(), count};
}

}  // namespace dsgd::sim::sg
