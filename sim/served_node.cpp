#include "sim/served_node.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {

ServedNode::ServedNode(const NodeProcessOptions& process, const ClusterOptions& cluster)
    : rank_(process.rank) {
  thread_ = std::thread([this, process, cluster] {
    try {
      run_node_process(process, cluster, [this](Communicator& comm) { serve(comm); });
    } catch (...) {
      fail(std::current_exception());
    }
    retired_.clear();  // the node has left: nothing writes into these buffers any more
    fail(std::make_exception_ptr(CommError(fmt::format("rank {} has left the run", rank_), rank_)));
    std::deque<Item> left;
    {
      std::lock_guard lock(mutex_);
      closed_ = ended_ = true;
      left.swap(queue_);
    }
    cv_.notify_all();
    for (Item& item : left)
      finish(item.done, failure());
  });
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return serving_ || ended_; });
  if (!serving_) {
    lock.unlock();
    thread_.join();
    std::rethrow_exception(failure_);
  }
}

ServedNode::~ServedNode() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ServedNode::submit(Operation op, Done done) {
  std::unique_lock lock(mutex_);
  if (ended_) {
    const std::exception_ptr failure = failure_;
    lock.unlock();
    return finish(done, failure);
  }
  queue_.push_back({std::move(op), std::move(done)});
  lock.unlock();
  cv_.notify_all();
}

void ServedNode::fail(std::exception_ptr failure) {
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = failure;
}

std::exception_ptr ServedNode::failure() {
  std::lock_guard lock(mutex_);
  return failure_;
}

std::optional<ServedNode::Item> ServedNode::next(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, wait, [this] { return !queue_.empty() || closed_; });
  if (queue_.empty()) return std::nullopt;
  Item item = std::move(queue_.front());
  queue_.pop_front();
  return item;
}

void ServedNode::serve(Communicator& comm) {
  {
    std::lock_guard lock(mutex_);
    serving_ = true;
  }
  cv_.notify_all();
  using namespace std::chrono_literals;
  // Until closed, or until the run fails: then the node leaves at once (its connections
  // drop), so that the ranks waiting for it hear of it now, not when this one is destroyed.
  while (!failure()) {
    poll(comm);
    // While requests are posted, look at them every millisecond.
    std::optional<Item> item = next(posted_.empty() ? std::chrono::milliseconds(100) : 1ms);
    if (item) {
      run(comm, *item);
      continue;
    }
    std::lock_guard lock(mutex_);
    if (closed_ && queue_.empty()) break;
  }
  std::exception_ptr failed = failure();
  const auto gone = failed ? failed
                           : std::make_exception_ptr(CommError(
                                 fmt::format("rank {}: the process group was destroyed before "
                                             "this operation completed",
                                             rank_),
                                 rank_));
  for (Waiting& w : posted_) {
    finish(w.done, gone);
    retired_.push_back(std::move(w.posted));
  }
  posted_.clear();
  if (failed) std::rethrow_exception(failed);
}

void ServedNode::run(Communicator& comm, Item& item) {
  if (const std::exception_ptr failed = failure()) return finish(item.done, failed);
  std::exception_ptr error;
  try {
    std::optional<Posted> posted = item.op(comm);
    if (posted) {
      posted_.push_back({std::move(*posted), std::move(item.done), Clock::now() + comm.timeout()});
      return;
    }
  } catch (const CommError&) {
    error = std::current_exception();
    fail(error);
  } catch (...) {
    error = std::current_exception();  // this operation's own error (a bad argument)
  }
  finish(item.done, error);
}

void ServedNode::finish(const Done& done, std::exception_ptr error) {
  try {
    done(error);
  } catch (const std::exception& e) {  // a caller's callback: it must not stop the node
    fmt::print(stderr, "dsgd: rank {}: an operation's completion failed: {}\n", rank_, e.what());
  } catch (...) {
    fmt::print(stderr, "dsgd: rank {}: an operation's completion failed\n", rank_);
  }
}

void ServedNode::poll(Communicator& comm) {
  for (auto it = posted_.begin(); it != posted_.end();) {
    std::exception_ptr error;
    try {
      Status status;
      if (!it->posted.request.test(&status)) {
        if (Clock::now() < it->deadline) {
          ++it;
          continue;
        }
        status = it->posted.request.wait(Deadline{it->deadline});  // the TimeoutError
      }
      it->posted.then(status);
    } catch (const CommError&) {
      error = std::current_exception();
      fail(error);
    } catch (...) {
      error = std::current_exception();
    }
    Done done = std::move(it->done);
    if (error) retired_.push_back(std::move(it->posted));  // its buffer may still be in use
    it = posted_.erase(it);
    finish(done, error);
  }
}

}  // namespace dsgd::sim
