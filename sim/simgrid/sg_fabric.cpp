#include "sim/simgrid/sg_fabric.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/comm/communicator.h"
#include "core/errors.h"

namespace sg4 = simgrid::s4u;

namespace dsgd::sim::sg {

SgFabric::SgFabric(std::vector<sg4::Host*> hosts, double latency_s, size_t eager_bytes,
                   bool phantom)
    : hosts_(std::move(hosts)),
      latency_s_(latency_s),
      eager_bytes_(eager_bytes),
      phantom_(phantom),
      inboxes_(hosts_.size()) {}

bool SgFabric::takes(const SgReceive& r, const SgMessage& m) {
  return (r.source == kAnySource || r.source == m.source) && r.tag == m.tag;
}

std::shared_ptr<SgMessage> SgFabric::send(int source, int dest, int tag,
                                          std::span<const float> data) {
  auto m = std::make_shared<SgMessage>();
  m->source = source;
  m->dest = dest;
  m->tag = tag;
  m->count = data.size();
  m->eager = source == dest || data.size_bytes() <= eager_bytes_;
  if (!phantom_) {
    if (m->eager)
      m->copy.assign(data.begin(), data.end());
    else
      m->from = data.data();
  }
  start_transfer(m);
  return m;
}

void SgFabric::arrive(const std::shared_ptr<SgMessage>& m) {
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
  } else if (!phantom_ && m->count > 0) {
    std::memcpy(r.buffer.data(), m->from ? m->from : m->copy.data(), m->count * sizeof(float));
  }
  m->from = nullptr;
  std::vector<float>().swap(m->copy);
  if (!m->eager) wake(m->source);  // a rendezvous send ends at its match
}

void SgFabric::wake(int rank) {
  if (sg4::Actor* waiter = std::exchange(inboxes_[rank].waiter, nullptr)) waiter->resume();
}

void SgFabric::start_transfer(const std::shared_ptr<SgMessage>& m) {
  if (m->source == m->dest) {  // to itself: no link
    m->arrival_s = sg4::Engine::get_clock();
    arrive(m);
    return;
  }
  const int world = static_cast<int>(hosts_.size());
  Stream& stream = streams_[uint64_t(m->source) * world + m->dest];
  stream.queue.push_back(m);
  if (stream.pumped) {
    if (sg4::Actor* idle = std::exchange(stream.idle, nullptr)) idle->resume();
    return;
  }
  stream.pumped = true;
  sg4::ActorPtr actor = sg4::Actor::create(
      fmt::format("stream {}->{}", m->source, m->dest), hosts_[m->source],
      [this, source = m->source, dest = m->dest, &stream] { pump(source, dest, stream); });
  actor->daemonize();  // ends with the run
}

void SgFabric::pump(int source, int dest, Stream& stream) {
  for (;;) {
    while (stream.queue.empty()) {
      stream.idle = sg4::Actor::self();
      sg4::this_actor::suspend();
    }
    const std::shared_ptr<SgMessage> m = stream.queue.front();
    sg4::Comm::sendto_async(hosts_[source], hosts_[dest], m->count * sizeof(float))->wait();
    m->arrival_s = sg4::Engine::get_clock() + latency_s_;
    stream.queue.pop_front();
    arrive(m);
  }
}

template <typename Done>
void SgFabric::block(int rank, Done done) {
  while (!done()) {
    inboxes_[rank].waiter = sg4::Actor::self();
    sg4::this_actor::suspend();
  }
}

void SgFabric::wait(SgReceive& r) {
  block(r.rank, [&] { return r.message != nullptr; });
  if (r.error) std::rethrow_exception(r.error);
  sleep_until(r.message->arrival_s);
}

bool SgFabric::try_complete(SgReceive& r) {
  if (!r.message) return false;
  if (r.error) std::rethrow_exception(r.error);
  return sg4::Engine::get_clock() >= r.message->arrival_s;
}

void SgFabric::wait(SgMessage& m) {
  if (m.eager) return;
  block(m.source, [&] { return m.matched; });
  sleep_until(m.arrival_s);
}

void SgFabric::abandon(SgMessage& m) {
  if (m.matched || !m.from) return;
  m.copy.assign(m.from, m.from + m.count);
  m.from = nullptr;
}

bool SgFabric::try_complete(const SgMessage& m) const {
  return m.eager || (m.matched && sg4::Engine::get_clock() >= m.arrival_s);
}

void SgFabric::sleep_until(double t) {
  const double now = sg4::Engine::get_clock();
  if (t > now) sg4::this_actor::sleep_for(t - now);
}

}  // namespace dsgd::sim::sg
