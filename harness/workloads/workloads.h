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
#include <cmath>
#include <cstdint>
#include <functional>
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

// The batch size, learning rate and epoch limit a run uses: the config's, or
// the workload's defaults. The first two are recorded in `result`.
struct RunSettings {
  int batch = 0;
  double lr = 0;
  int max_epochs = 0;
};
RunSettings run_settings(const WorkloadConfig& config, int default_batch, double (*default_lr)(int),
                         int default_max_epochs, WorkloadResult* result);

// The end of the initialisation: init_stop, then run_start, train_samples and
// eval_samples.
void log_run_start(RunLog& log, long long train_samples, long long eval_samples);

// run_stop with status success or aborted at `epoch`; records whether the
// run converged. Returns true (the run itself worked, whatever it reached).
bool log_run_stop(RunLog& log, bool success, const mllog::LogValue& epoch, WorkloadResult* result);

// Sets `order` to 0, 1, ... and shuffles it: an epoch's order of examples.
void shuffle_order(Rng& rng, std::vector<int>& order);

// Before an optimizer step on the examples from `pos` of a training set of
// `train_size`: false (the run cancelled, recorded in `result`) when `cancel`
// is set; else `grad` zeroed and *n the number of examples in the batch.
bool begin_batch(const std::atomic<bool>& cancel, int batch, long long train_size, long long pos,
                 std::vector<double>& grad, long long* n, WorkloadResult* result);

// An evaluation: eval_start and eval_stop at `epoch` around `evaluate`, then
// eval_accuracy with `accuracy_md`; records it in `result` (the epoch number
// there being `epochs`). Returns the quality `evaluate` measured.
double log_evaluation(RunLog& log, const mllog::LogValue& epoch, double epochs, const std::function<double()>& evaluate,
                      mllog::Metadata accuracy_md, WorkloadResult* result);

// The layers of the mini models, on parameters in one flat array `w` (their
// gradients in `grad`, laid out alike): a dense layer's weights [In][Out] at
// `off_w`, its bias [Out] at `off_b`.
//
// PyTorch's default initialisation of nn.Linear: w[begin, end) drawn from
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
void init_uniform(std::vector<double>& w, int begin, int end, int fan_in, Rng& rng);

// y = b + x W.
template <int In, int Out>
void dense_forward(const double* w, int off_w, int off_b, const double* x, double* y) {
  for (int j = 0; j < Out; ++j) y[j] = w[off_b + j];
  for (int i = 0; i < In; ++i) {
    const double* row = w + off_w + i * Out;
    for (int j = 0; j < Out; ++j) y[j] += x[i] * row[j];
  }
}

// From the gradient `dy` at the layer's output: adds the weights' and the
// bias's gradients, and writes the gradient at its input `x` to `dx`.
template <int In, int Out>
void dense_backward(const double* w, int off_w, int off_b, const double* x, const double* dy, double* grad,
                    double* dx) {
  for (int i = 0; i < In; ++i) {
    const double* row = w + off_w + i * Out;
    double* grow = grad + off_w + i * Out;
    double s = 0;
    for (int j = 0; j < Out; ++j) {
      grow[j] += x[i] * dy[j];
      s += row[j] * dy[j];
    }
    dx[i] = s;
  }
  for (int j = 0; j < Out; ++j) grad[off_b + j] += dy[j];
}

// Softmax: replaces the logits `z` by exp(z - zmax) (zmax their largest) and
// returns their sum.
template <int N>
double softmax_exp(double* z, double zmax) {
  double sum = 0;
  for (int k = 0; k < N; ++k) {
    z[k] = std::exp(z[k] - zmax);
    sum += z[k];
  }
  return sum;
}

// The cross-entropy's gradient at the logits, from softmax_exp's `e` and
// `sum` and the label.
template <int N>
void cross_entropy_grad(const double* e, double sum, int label, double* dz) {
  for (int k = 0; k < N; ++k) dz[k] = e[k] / sum;
  dz[label] -= 1.0;
}

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
