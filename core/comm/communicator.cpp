#include "core/comm/communicator.h"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {

Status Request::wait(Deadline deadline) {
  if (!impl_) throw std::logic_error("wait() on an empty Request");
  return impl_->wait_until(deadline.at.value_or(Clock::now() + timeout_));
}

bool Request::test(Status* status) {
  if (!impl_) throw std::logic_error("test() on an empty Request");
  Status ignored;
  return impl_->test(status ? status : &ignored);
}

Request Communicator::isend(std::span<const float> data, int dst, int tag) {
  if (dst < 0 || dst >= size())
    throw UsageError(fmt::format("rank {}: send to rank {} but the world has ranks 0..{}", rank(),
                                 dst, size() - 1));
  if (tag < 0) throw UsageError(fmt::format("rank {}: send with negative tag {}", rank(), tag));
  if (dst != rank()) bytes_sent_ += data.size_bytes();
  return do_isend(data, dst, tag);
}

Request Communicator::irecv(std::span<float> data, int src, int tag) {
  if (src != kAnySource && (src < 0 || src >= size()))
    throw UsageError(fmt::format("rank {}: recv from rank {} but the world has ranks 0..{}", rank(),
                                 src, size() - 1));
  if (tag < 0) throw UsageError(fmt::format("rank {}: recv with negative tag {}", rank(), tag));
  return do_irecv(data, src, tag);
}

void Communicator::send(std::span<const float> data, int dst, int tag, Deadline deadline) {
  Request r = isend(data, dst, tag);
  r.wait(deadline);
}

Status Communicator::recv(std::span<float> data, int src, int tag, Deadline deadline) {
  Request r = irecv(data, src, tag);
  return r.wait(deadline);
}

void Communicator::emit(Event event) const {
  if (!events_) return;
  if (event.rank < 0) event.rank = rank();
  if (event.wall_s == 0.0) event.wall_s = wall_s();
  if (event.model_s == 0.0) event.model_s = model_s();
  events_->on_event(event);
}

std::span<float> Communicator::scratch(size_t count, int slot) {
  if (phantom()) return shared_buffer(count);
  Scratch& s = scratch_.at(slot);
  if (s.capacity < count) {
    s.data = std::make_unique_for_overwrite<float[]>(count);
    s.capacity = count;
  }
  return {s.data.get(), count};
}

std::span<float> Communicator::shared_buffer(size_t) {
  throw std::logic_error(std::string("shared_buffer: the ") + backend() +
                         " backend carries real payloads");
}

double Communicator::wall_s() const {
  return std::chrono::duration<double>(Clock::now() - epoch_).count();
}

}  // namespace dsgd
