#include "harness/backends/builtin.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "harness/workloads/workloads.h"
#include "mllog/writer.h"

namespace referee::harness {

namespace {

using Clock = std::chrono::steady_clock;

class BuiltinHandle : public RunHandle {
 public:
  BuiltinHandle(std::string id, WorkloadConfig cfg, LineSink sink, std::chrono::seconds timeout)
      : id_(std::move(id)), timeout_(timeout) {
    status_.state = RunState::Running;
    started_ = Clock::now();
    thread_ = std::thread([this, cfg = std::move(cfg), sink = std::move(sink)] {
      mllog::Options o;
      o.mode = mllog::WriteMode::kSync;  // lines reach the checker in order, as they are logged
      o.callback = [&](std::string_view line) { sink(id_, std::string(line)); };
      o.root_dir = REFEREE_SOURCE_DIR;
      std::string error;
      WorkloadResult r;
      bool ok;
      {
        mllog::Logger log(o);
        ok = run_workload(cfg, log, cancel_, &error, &r);
        log.flush();
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!ok) {
        status_.state = RunState::Failed;
        status_.detail = error;
      } else if (timed_out_) {
        status_.state = RunState::TimedOut;
        status_.detail = "timeout of " + std::to_string(timeout_.count()) + " s";
      } else if (r.cancelled) {
        status_.state = RunState::Cancelled;
        status_.detail = reason_;
      } else {
        status_.state = r.converged ? RunState::Succeeded : RunState::Failed;
        status_.exit_code = r.converged ? 0 : 1;
        if (!r.converged) status_.detail = "did not reach the quality target";
      }
      done_ = true;
      cv_.notify_all();
    });
  }
  ~BuiltinHandle() override {
    cancel("harness shutting down");
    if (thread_.joinable()) thread_.join();
  }
  const std::string& id() const override { return id_; }
  RunStatus poll() override {
    check_timeout();
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  RunStatus wait(std::chrono::milliseconds limit) override {
    auto until = Clock::now() + limit;
    std::unique_lock<std::mutex> lock(mu_);
    while (!done_ && Clock::now() < until) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      lock.unlock();
      check_timeout();
      lock.lock();
    }
    return status_;
  }
  void cancel(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_ || cancel_) return;
    reason_ = reason;
    cancel_ = true;
  }

 private:
  void check_timeout() {
    if (timeout_.count() <= 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_ && !cancel_ && Clock::now() - started_ > timeout_) {
      timed_out_ = true;
      cancel_ = true;
    }
  }
  std::string id_;
  std::chrono::seconds timeout_;
  Clock::time_point started_;
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  RunStatus status_;
  bool done_ = false, timed_out_ = false;
  std::string reason_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<RunHandle> BuiltinBackend::launch(const RunRequest& req, LineSink sink, std::string* error) {
  if (!req.cache_clear.empty()) {
    *error = "run " + req.id + ": the builtin workloads log cache_clear themselves; a cache_clear hook is for exec and slurm";
    return nullptr;
  }
  WorkloadConfig cfg;
  cfg.benchmark = req.benchmark;
  cfg.seed = req.seed;
  for (const auto& [k, v] : req.options) {
    if (k == "batch_size") cfg.global_batch_size = std::atoi(v.c_str());
    else if (k == "division") cfg.division = v;
    else if (k == "org") cfg.org = v;
    else if (k == "max_epochs") cfg.max_epochs = std::atoi(v.c_str());  // fewer epochs: a run that does not converge
    else {
      *error = "run " + req.id + ": the builtin backend takes no option '" + k + "' (batch_size, division, org, max_epochs)";
      return nullptr;
    }
  }
  const auto names = builtin_workloads();
  if (std::find(names.begin(), names.end(), cfg.benchmark) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    *error = "run " + req.id + ": no builtin workload '" + cfg.benchmark + "' (builtin: " + list + ")";
    return nullptr;
  }
  return std::make_unique<BuiltinHandle>(req.id, cfg, std::move(sink), req.timeout);
}

}  // namespace referee::harness
