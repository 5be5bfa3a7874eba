#include "sim/simgrid/sg_communicator.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "core/errors.h"
#include "core/message_events.h"
#include "sim/node.h"
#include "sim/wait_text.h"

namespace sg4 = simgrid::s4u;

namespace dsgd::sim::sg {

namespace {

// A test() that finds its operation unfinished lets this much virtual time pass (SMPI's
// smpi/test does the same), so that a loop polling test() lets the other actors, and time,
// move on; a loop that polls for longer than the communicator's timeout of virtual time
// gets a TimeoutError, as a wait past its deadline does on the other backends.
constexpr double kTestDelayS = 1e-6;

class Polls {
 public:
  // false after letting kTestDelayS pass; TimeoutError once polling has lasted too long.
  bool unfinished(const SgCommunicator& comm, bool recv, int peer, int tag) {
    const double now = sg4::Engine::get_clock();
    if (first_s_ < 0) first_s_ = now;
    const double limit_s = std::chrono::duration<double>(comm.timeout()).count();
    if (now - first_s_ > limit_s) {
      const std::string who = peer == kAnySource ? "any rank" : fmt::format("rank {}", peer);
      throw TimeoutError(
          fmt::format("rank {}: {} {} {} ({}) passed its deadline ({:g} s of virtual time "
                      "polling test()); is {} alive and {}?",
                      comm.rank(), recv ? "recv" : "send", recv ? "from" : "to", who, tag_text(tag),
                      limit_s, who, recv ? "sending" : "receiving"),
          peer);
    }
    sg4::this_actor::sleep_for(kTestDelayS);
    return false;
  }

 private:
  double first_s_ = -1;
};

class SendRequest final : public RequestImpl {
 public:
  SendRequest(SgCommunicator& comm, std::shared_ptr<SgMessage> m) : comm_(comm), m_(std::move(m)) {}
  ~SendRequest() override { comm_.fabric().abandon(*m_); }
  Status wait_until(Clock::time_point) override {
    if (!comm_.fabric().try_complete(*m_)) {
      SgCommunicator::Blocked b(
          comm_,
          {.send = true, .peer = m_->dest, .tag = m_->tag, .bytes = m_->count * sizeof(float)});
      comm_.fabric().wait(*m_);
    }
    return status();
  }
  bool test(Status* status) override {
    if (!comm_.fabric().try_complete(*m_))
      return polls_.unfinished(comm_, false, m_->dest, m_->tag);
    *status = this->status();
    return true;
  }

 private:
  Status status() const { return {comm_.rank(), m_->tag, m_->count}; }
  SgCommunicator& comm_;
  std::shared_ptr<SgMessage> m_;
  Polls polls_;
};

class RecvRequest final : public RequestImpl {
 public:
  RecvRequest(SgCommunicator& comm, std::shared_ptr<SgReceive> r) : comm_(comm), r_(std::move(r)) {}
  ~RecvRequest() override { comm_.fabric().abandon(*r_); }
  Status wait_until(Clock::time_point) override {
    if (!done_) {
      {
        SgCommunicator::Blocked b(comm_, {.peer = r_->source, .tag = r_->tag});
        comm_.fabric().wait(*r_);
      }
      finish();
    }
    return status();
  }
  bool test(Status* status) override {
    if (!done_ && !comm_.fabric().try_complete(*r_))
      return polls_.unfinished(comm_, true, r_->source, r_->tag);
    if (!done_) finish();
    *status = this->status();
    return true;
  }

 private:
  Status status() const { return {r_->message->source, r_->message->tag, r_->message->count}; }
  void finish() {
    done_ = true;
    if (!comm_.events()) return;
    const SgMessage& m = *r_->message;
    comm_.emit(!m.carried
                   ? message_event(EventKind::recv_end, m.source, m.tag, m.count * sizeof(float))
                   : message_event(EventKind::recv_end, m.source, m.tag, r_->buffer));
  }
  SgCommunicator& comm_;
  std::shared_ptr<SgReceive> r_;
  bool done_ = false;
  Polls polls_;
};

}  // namespace

SgCommunicator::SgCommunicator(int rank, int world, SgFabric& fabric, ComputeModel compute,
                               double host_flops, double straggler, SgCrash crash)
    : rank_(rank),
      world_(world),
      fabric_(fabric),
      compute_(compute),
      host_flops_(host_flops),
      straggler_(straggler),
      crash_(crash) {}

void SgCommunicator::on_step(int64_t step) {
  if (crash_.at_step && step >= *crash_.at_step) crash();
  check_crash_time();
}

void SgCommunicator::check_crash_time() {
  if (crash_.at_s && sg4::Engine::get_clock() >= *crash_.at_s) crash();
}

void SgCommunicator::crash() {
  if (crash_.fired) crash_.fired(rank_);
  fabric_.crash(rank_);
  throw NodeCrashed{rank_};
}

std::string SgCommunicator::blocked() const {
  if (!blocked_) return {};
  const Wait& w = *blocked_;
  if (w.send) return blocked_send_text(rank_, w.peer, w.tag, w.bytes, fabric_.eager_bytes());
  const std::string note = w.peer >= 0 ? fabric_.outage_note(w.peer, rank_) : "";
  return blocked_recv_text(rank_, w.peer, w.tag) + (note.empty() ? "" : ": " + note);
}

double SgCommunicator::model_s() const {
  return sg4::Engine::get_clock();
}

std::span<float> SgCommunicator::shared_buffer(size_t count) {
  if (!phantom_payloads()) return Communicator::shared_buffer(count);
  return fabric_.shared_buffer(count);
}

void SgCommunicator::on_compute(double measured_s, double flops) {
  if (compute_ == ComputeModel::measured)
    sg4::this_actor::sleep_for(measured_s * straggler_);
  else if (flops > 0)
    sg4::this_actor::execute(flops * straggler_);
  check_crash_time();
}

double SgCommunicator::compute_model_s(double flops) const {
  return flops * straggler_ / host_flops_;
}

void SgCommunicator::advance_model_to(double t) {
  const double now = sg4::Engine::get_clock();
  if (t > now) sg4::this_actor::sleep_for(t - now);
}

Request SgCommunicator::do_isend(std::span<const float> data, int dst, int tag) {
  check_crash_time();
  // Counted only for the events that name it: a vector of the world's size on every rank
  // would take R^2 memory, 2 GB at 16,384 ranks.
  if (events()) {
    const uint64_t seq = send_seq_[dst]++;
    emit(phantom() ? message_event(EventKind::send_begin, dst, tag, data.size_bytes(), seq)
                   : message_event(EventKind::send_begin, dst, tag, data, seq));
  }
  std::shared_ptr<SgMessage> m = fabric_.send(rank_, dst, tag, data, !phantom());
  if (m->retransmits > 0 && events()) emit(retransmit_note(dst, tag, m->retransmits));
  return Request(std::make_shared<SendRequest>(*this, std::move(m)), timeout());
}

Request SgCommunicator::do_irecv(std::span<float> data, int src, int tag) {
  check_crash_time();
  if (events()) emit(message_event(EventKind::recv_begin, src, tag, data.size_bytes()));
  return Request(std::make_shared<RecvRequest>(*this, fabric_.post(rank_, src, tag, data)),
                 timeout());
}

}  // namespace dsgd::sim::sg
