//===- progress.cpp - a thread that runs communication beside compute -----===//

#include "coconet/cpu/progress.h"
#include "coconet/cpu/runtime.h"

#include <omp.h>

#include <cstdlib>
#include <cstring>

namespace coconet::rt::cpu {

Status Progress::create(std::unique_ptr<Progress> *out) {
  std::unique_ptr<Progress> p(new Progress());
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  const char *setting = std::getenv("COCONET_PROGRESS");
  if (setting && std::strcmp(setting, "off") == 0)
    p->why_ = "COCONET_PROGRESS=off";
  else if (provided < MPI_THREAD_SERIALIZED)
    p->why_ = "MPI was initialised without MPI_THREAD_SERIALIZED";
  else
    p->thread_ = std::thread([raw = p.get()] { raw->run(); });
  *out = std::move(p);
  return Status::success();
}

Progress::~Progress() {
  if (!thread_.joinable())
    return;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

uint64_t Progress::post(std::function<Status()> task) {
  if (!thread_.joinable()) {
    if (failure_.ok())
      failure_ = task();
    ++posted_;
    return ++done_;
  }
  uint64_t ticket = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
    ticket = ++posted_;
  }
  changed_.notify_all();
  return ticket;
}

Status Progress::waitFor(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return done_ >= ticket; });
  return failure_;
}

void Progress::postPart(int64_t part, std::function<Status()> task) {
  const size_t at = static_cast<size_t>(part);
  if (parts_.size() <= at)
    parts_.resize(at + 1, 0);
  parts_[at] = post(std::move(task));
}

Status Progress::waitForPart(int64_t part) {
  return waitFor(parts_.at(static_cast<size_t>(part)));
}

Status Progress::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return tasks_.empty() && !busy_; });
  Status first = failure_;
  failure_ = Status::success();
  return first;
}

void Progress::run() {
  // Communication takes one OpenMP thread: the posting thread's team
  // computes beside it.
  omp_set_num_threads(1);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty())
      return;
    std::function<Status()> task = std::move(tasks_.front());
    tasks_.pop_front();
    busy_ = true;
    const bool skip = !failure_.ok();
    lock.unlock();
    Status st = skip ? Status::success() : task();
    lock.lock();
    if (!st.ok() && failure_.ok())
      failure_ = st;
    busy_ = false;
    ++done_;
    changed_.notify_all();
  }
}

} // namespace coconet::rt::cpu
