//===- cpu/progress.h - a thread that runs communication beside compute ---===//
//
// What an overlap on the CPU target uses so that communication progresses
// while the next part of a matmul is computed: a thread that runs the
// tasks posted to it in order (the collective, or the fused collective's
// kernel, of each part), with one OpenMP thread of its own. MPI is then
// called from that thread, never at the same time as from the posting one
// (which only computes between post() and wait()): MPI_THREAD_SERIALIZED.
// When MPI provides less (or COCONET_PROGRESS=off), there is no thread and
// post() runs the task on the spot; why() says so.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_CPU_PROGRESS_H
#define COCONET_RUNTIME_CPU_PROGRESS_H

#include "coconet/status.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace coconet::rt::cpu {

class Progress {
public:
  /// Not collective. MPI must be initialised.
  static Status create(std::unique_ptr<Progress> *out);
  /// Waits for the posted tasks, then ends the thread.
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// Runs `task` after every task posted before it: on the thread, or now.
  /// Returns its ticket, for waitFor().
  uint64_t post(std::function<Status()> task);
  /// Waits until the task with this ticket (and every one before it) has
  /// run; returns the first failure since the last wait() (the failure
  /// stays for wait() to return too). The posting thread may compute with
  /// what that task received while later tasks run.
  Status waitFor(uint64_t ticket);
  /// post() of part `part` of an overlap (an overlap's parts are posted in
  /// order, and an overlap waits for all of them before the next one
  /// posts); waitForPart(part) waits for it as waitFor() does.
  void postPart(int64_t part, std::function<Status()> task);
  Status waitForPart(int64_t part);
  /// Waits until every posted task has run. Returns the first failure since
  /// the last wait; the tasks posted after a failure are skipped.
  Status wait();
  /// "" when there is a thread, else why tasks run where they are posted.
  const std::string &why() const { return why_; }

private:
  Progress() = default;
  void run();

  std::string why_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<Status()>> tasks_;
  bool busy_ = false, stop_ = false;
  /// Tasks posted and tasks run (or skipped) so far: tickets count both.
  uint64_t posted_ = 0, done_ = 0;
  /// The ticket of each part postPart() posted.
  std::vector<uint64_t> parts_;
  Status failure_;
};

} // namespace coconet::rt::cpu

#endif // COCONET_RUNTIME_CPU_PROGRESS_H
