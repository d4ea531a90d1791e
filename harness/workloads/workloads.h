// The mini reference workloads: small but real training tasks that run on one
// CPU core in well under a second each, reach a real quality target, and log
// the whole MLPerf protocol through mllog::Logger the way a real benchmark
// does, so that their logs pass the project's own rule set mini-1.0.0
// (rules/sets). See docs/workloads.md.
//
//   minilm   a neural language model (two-token context, embeddings, tanh hidden layer,
//            softmax) trained with Adam on text from a fixed random Markov
//            chain; quality: evaluation cross-entropy (nats) <= 2.10, the
//            chain's entropy rate being the best achievable.
//   miniclf  a one-hidden-layer MLP classifier trained with SGD (momentum,
//            linear warmup) on Gaussian-mixture data; quality: evaluation
//            accuracy >= 0.90, the Bayes classifier's accuracy being the best.
//
// Everything is computed here (no BLAS), single-threaded, and deterministic:
// the same seed and hyperparameters give the same numbers in every log
// (timestamps aside). The data sets come from fixed random sources that do not
// depend on the seed; the seed draws the initial weights and the shuffling.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "mllog/writer.h"

namespace referee::harness {

struct WorkloadConfig {
  std::string benchmark;       // "minilm" or "miniclf"
  long long seed = 0;          // >= 0; logged as `seed`
  int global_batch_size = 0;   // 0 = the benchmark's default
  double learning_rate = 0;    // 0 = the default for the batch size
  int max_epochs = 0;          // 0 = the benchmark's default; a run that has not converged by then is aborted
  std::string division = "closed", org = "referee", platform = "cpu", status = "onprem";
};

// What a run reached (also in its log).
struct WorkloadResult {
  bool converged = false;      // run_stop status success
  bool cancelled = false;      // stopped because `cancel` was set
  double epochs = 0;           // epoch_num of the last evaluation
  double quality = 0;          // the last eval_accuracy
  int evals = 0;               // evaluations done
  long long steps = 0;         // optimizer steps taken
  int global_batch_size = 0;   // as run (defaults resolved)
  double learning_rate = 0;
};

// Runs one workload, logging every event through `log`: cache_clear,
// submission_*, init_start, seed, hyperparameters, init_stop, run_start,
// train_samples, eval_samples, blocks or epochs with their evaluations, and
// run_stop with status success, or aborted when `cancel` is set or the target
// is not reached within max_epochs. `cancel` is read before every optimizer
// step. Returns false (with *error) only when the workload cannot run at all
// (unknown benchmark, invalid batch size, learning rate, seed or max_epochs);
// then nothing is logged.
bool run_workload(const WorkloadConfig& config, mllog::Logger& log, const std::atomic<bool>& cancel,
                  std::string* error, WorkloadResult* result = nullptr);

// "minilm", "miniclf".
std::vector<std::string> builtin_workloads();

// What the tools and docs say about a workload.
struct WorkloadInfo {
  std::string name;
  std::string description;     // one line
  std::string metric;          // what eval_accuracy is
  bool lower_is_better = false;
  double target = 0;           // the quality target of the closed division
  double optimum = 0;          // the best achievable value (entropy rate, Bayes accuracy)
  int default_batch_size = 0;
  int default_max_epochs = 0;
  long long train_samples = 0, eval_samples = 0;
};

// Returns false when `benchmark` is not a built-in workload.
bool workload_info(const std::string& benchmark, WorkloadInfo* out);

// The default learning rate of a workload at a batch size (the scaling rule
// the reference convergence points were produced with); 0 when unknown.
double default_learning_rate(const std::string& benchmark, int global_batch_size);

namespace detail {

// xoshiro256** seeded through splitmix64: the same stream on every platform
// (the standard library's distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();                 // [0, 1)
  double normal();                  // standard normal (Box-Muller)
  uint64_t below(uint64_t n);       // [0, n), unbiased; REQUIRES: n > 0
  template <typename T>
  void shuffle(std::vector<T>& v) {  // Fisher-Yates
    for (size_t i = v.size(); i > 1; --i) {
      size_t j = static_cast<size_t>(below(i));
      T t = v[i - 1];
      v[i - 1] = v[j];
      v[j] = t;
    }
  }

 private:
  uint64_t s_[4];
};

// Logs through a Logger with the "file" metadata relative to the source tree
// ("harness/workloads/minilm.cc"), whatever the compiler calls the file, so that a log
// does not depend on where referee was built.
class RunLog {
 public:
  explicit RunLog(mllog::Logger& log) : log_(log) {}
  void event(std::string_view key, const mllog::LogValue& value = {}, mllog::Metadata md = {},
             mllog::CallSite where = {});
  void start(std::string_view key, const mllog::LogValue& value = {}, mllog::Metadata md = {},
             mllog::CallSite where = {});
  void end(std::string_view key, const mllog::LogValue& value = {}, mllog::Metadata md = {},
           mllog::CallSite where = {});

 private:
  static mllog::CallSite trim(mllog::CallSite where);
  mllog::Logger& log_;
};

// cache_clear and the submission_* keys, as the reference implementations log them.
void log_submission_info(RunLog& log, const WorkloadConfig& config);

// What every workload logs first: cache_clear, the submission_* keys,
// init_start, seed, global_batch_size and gradient_accumulation_steps (1).
void log_run_preamble(RunLog& log, const WorkloadConfig& config, int global_batch_size);

// `x` rounded to a multiple of 1/scale (hyperparameters and epoch numbers as logged).
double round_to(double x, double scale);

bool run_minilm(const WorkloadConfig& config, mllog::Logger& log, const std::atomic<bool>& cancel,
                WorkloadResult* result);
bool run_miniclf(const WorkloadConfig& config, mllog::Logger& log, const std::atomic<bool>& cancel,
                 WorkloadResult* result);
WorkloadInfo minilm_info();
WorkloadInfo miniclf_info();
double minilm_default_lr(int global_batch_size);
double miniclf_default_lr(int global_batch_size);
int miniclf_warmup_epochs(int global_batch_size);

// The data sources' known optima, computed from the sources themselves.
// minilm: the Markov chain's entropy rate (nats per symbol), and the true
// chain's cross-entropy on the evaluation text.
double minilm_entropy_rate();
double minilm_true_eval_loss();
// miniclf: the Bayes classifier's accuracy on the evaluation set, and on
// `samples` fresh draws from the source.
double miniclf_bayes_eval_accuracy();
double miniclf_bayes_accuracy(int samples);

}  // namespace detail

}  // namespace referee::harness
