// miniclf: a one-hidden-layer MLP classifier (ReLU) trained with SGD (momentum,
// linear warmup) on points drawn from a fixed Gaussian mixture: every class is
// a mixture of a few clusters, so no linear classifier separates the classes.
// The Bayes classifier (which knows the mixture) sets the best achievable
// accuracy; the quality target (evaluation accuracy >= 0.90) sits below it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/workloads/workloads.h"
#include "mllog/constants.h"

namespace referee::harness::detail {

namespace {

using namespace mllog::constants;

constexpr int kFeatures = 8;
constexpr int kClasses = 4;
constexpr int kClusters = 3;  // per class
constexpr int kHidden = 32;
constexpr long long kTrainSize = 8192;
constexpr long long kEvalSize = 4096;
constexpr double kTarget = 0.90;
constexpr int kDefaultBatch = 128;
constexpr int kDefaultMaxEpochs = 40;
constexpr double kMomentum = 0.9;

// The source: cluster centres ~ N(0, kSpread^2 I), points ~ N(centre, kSigma^2 I),
// classes and clusters equally likely.
constexpr double kSpread = 1.0;
constexpr double kSigma = 0.8;
constexpr uint64_t kMixtureSeed = 0x6d696e69636c6631ULL;  // "miniclf1"
constexpr uint64_t kTrainSetSeed = 0x747261696e2d3032ULL;
constexpr uint64_t kEvalSetSeed = 0x6576616c2d2d3032ULL;

struct DataSet {
  std::vector<double> x;  // [n][kFeatures]
  std::vector<int> y;
  long long size() const { return static_cast<long long>(y.size()); }
};

struct Source {
  double centre[kClasses][kClusters][kFeatures];
  DataSet train, eval;
  double bayes_eval_accuracy = 0;
};

void draw(const Source& s, Rng& rng, long long n, DataSet* out) {
  out->x.resize(static_cast<size_t>(n * kFeatures));
  out->y.resize(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) {
    int c = static_cast<int>(rng.below(kClasses));
    int m = static_cast<int>(rng.below(kClusters));
    out->y[static_cast<size_t>(i)] = c;
    for (int f = 0; f < kFeatures; ++f)
      out->x[static_cast<size_t>(i * kFeatures + f)] = s.centre[c][m][f] + kSigma * rng.normal();
  }
}

// The class the mixture itself finds most likely for x.
int bayes_class(const Source& s, const double* x) {
  // log of sum over clusters of exp(-|x - centre|^2 / (2 sigma^2)), per class
  int best = 0;
  double best_score = -1e300;
  for (int c = 0; c < kClasses; ++c) {
    double d[kClusters];
    double dmin = 1e300;
    for (int m = 0; m < kClusters; ++m) {
      double sq = 0;
      for (int f = 0; f < kFeatures; ++f) {
        double e = x[f] - s.centre[c][m][f];
        sq += e * e;
      }
      d[m] = sq / (2 * kSigma * kSigma);
      dmin = std::min(dmin, d[m]);
    }
    double sum = 0;
    for (int m = 0; m < kClusters; ++m) sum += std::exp(dmin - d[m]);
    double score = std::log(sum) - dmin;
    if (score > best_score) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

double bayes_accuracy_on(const Source& s, const DataSet& d) {
  long long right = 0;
  for (long long i = 0; i < d.size(); ++i)
    right += bayes_class(s, d.x.data() + i * kFeatures) == d.y[static_cast<size_t>(i)] ? 1 : 0;
  return static_cast<double>(right) / static_cast<double>(d.size());
}

Source make_source() {
  Source s;
  Rng rng(kMixtureSeed);
  for (auto& cls : s.centre)
    for (auto& cl : cls)
      for (double& v : cl) v = kSpread * rng.normal();
  Rng train_rng(kTrainSetSeed), eval_rng(kEvalSetSeed);
  draw(s, train_rng, kTrainSize, &s.train);
  draw(s, eval_rng, kEvalSize, &s.eval);
  s.bayes_eval_accuracy = bayes_accuracy_on(s, s.eval);
  return s;
}

const Source& source() {
  static const Source s = make_source();
  return s;
}

constexpr int kOffW1 = 0;                                // [kFeatures][kHidden]
constexpr int kOffB1 = kOffW1 + kFeatures * kHidden;     // [kHidden]
constexpr int kOffW2 = kOffB1 + kHidden;                 // [kHidden][kClasses]
constexpr int kOffB2 = kOffW2 + kHidden * kClasses;      // [kClasses]
constexpr int kParams = kOffB2 + kClasses;

class Model {
 public:
  // PyTorch's default initialisation of nn.Linear, weights and biases.
  explicit Model(Rng& rng) : w_(kParams, 0.0) {
    init_uniform(w_, kOffW1, kOffW2, kFeatures, rng);
    init_uniform(w_, kOffW2, kParams, kHidden, rng);
  }

  // The logits for x; with `grad`, adds the cross-entropy's gradient for label y.
  int example(const double* x, int y, double* grad) const {
    const double* w = w_.data();
    double h[kHidden];
    dense_forward<kFeatures, kHidden>(w, kOffW1, kOffB1, x, h);
    for (double& v : h) v = v > 0 ? v : 0;
    double z[kClasses];
    dense_forward<kHidden, kClasses>(w, kOffW2, kOffB2, h, z);
    int best = 0;
    for (int k = 1; k < kClasses; ++k)
      if (z[k] > z[best]) best = k;
    if (!grad) return best;
    const double sum = softmax_exp<kClasses>(z, z[best]);
    double dz[kClasses];
    cross_entropy_grad<kClasses>(z, sum, y, dz);
    double dh[kHidden];
    dense_backward<kHidden, kClasses>(w, kOffW2, kOffB2, h, dz, grad, dh);
    for (int j = 0; j < kHidden; ++j) {
      dh[j] = h[j] > 0 ? dh[j] : 0;  // through ReLU
      grad[kOffB1 + j] += dh[j];
    }
    for (int f = 0; f < kFeatures; ++f) {
      double* grow = grad + kOffW1 + f * kHidden;
      for (int j = 0; j < kHidden; ++j) grow[j] += x[f] * dh[j];
    }
    return best;
  }

  std::vector<double>& weights() { return w_; }

 private:
  std::vector<double> w_;
};

double evaluate(const Model& model, const DataSet& d) {
  long long right = 0;
  for (long long i = 0; i < d.size(); ++i)
    right += model.example(d.x.data() + i * kFeatures, 0, nullptr) == d.y[static_cast<size_t>(i)] ? 1 : 0;
  return static_cast<double>(right) / static_cast<double>(d.size());
}

}  // namespace

WorkloadInfo miniclf_info() {
  return {.name = "miniclf",
          .description = "MLP classifier (8 features, 32 ReLU units, 4 classes), SGD with momentum, Gaussian-mixture data",
          .metric = "evaluation accuracy (higher is better)", .lower_is_better = false, .target = kTarget,
          .optimum = source().bayes_eval_accuracy, .default_batch_size = kDefaultBatch,
          .default_max_epochs = kDefaultMaxEpochs, .train_samples = kTrainSize, .eval_samples = kEvalSize};
}

// Linear scaling from 0.01 at batch 64, with a warmup epoch per doubling above 64.
double miniclf_default_lr(int global_batch_size) { return round_to(0.01 * global_batch_size / 64.0, 1e6); }

int miniclf_warmup_epochs(int global_batch_size) {
  int w = 0;
  for (long long b = 128; b <= global_batch_size; b *= 2) ++w;
  return w;
}

double miniclf_bayes_eval_accuracy() { return source().bayes_eval_accuracy; }

double miniclf_bayes_accuracy(int samples) {
  const Source& s = source();
  Rng rng(0x6261796573ULL);
  DataSet d;
  draw(s, rng, samples, &d);
  return bayes_accuracy_on(s, d);
}

bool run_miniclf(const WorkloadConfig& config, mllog::Logger& logger, const std::atomic<bool>& cancel,
                 WorkloadResult* result) {
  RunLog log(logger);
  const RunSettings run = run_settings(config, kDefaultBatch, miniclf_default_lr, kDefaultMaxEpochs, result);
  const int batch = run.batch;
  const double lr = run.lr;
  const int warmup_epochs = miniclf_warmup_epochs(batch);

  log_run_preamble(log, config, batch);
  log.event(kOptName, kSgd);
  log.event(kOptBaseLr, lr);
  log.event(kOptLrWarmupEpochs, warmup_epochs);
  log.event("opt_momentum", kMomentum);
  const Source& data = source();
  Rng init_rng(static_cast<uint64_t>(config.seed));
  Model model(init_rng);
  Rng shuffle_rng(init_rng.next());
  std::vector<double> grad(kParams, 0.0), velocity(kParams, 0.0);
  std::vector<int> order(static_cast<size_t>(kTrainSize));
  const long long steps_per_epoch = (kTrainSize + batch - 1) / batch;
  const long long warmup_steps = warmup_epochs * steps_per_epoch;
  log_run_start(log, kTrainSize, kEvalSize);

  int epoch = 0;
  auto stop = [&](bool success) { return log_run_stop(log, success, epoch, result); };
  for (epoch = 1; epoch <= run.max_epochs; ++epoch) {
    log.start(kEpochStart, nullptr, {{kEpochNum, epoch}});
    shuffle_order(shuffle_rng, order);
    for (long long pos = 0; pos < kTrainSize;) {
      long long n = 0;
      if (!begin_batch(cancel, batch, kTrainSize, pos, grad, &n, result)) return stop(false);
      for (long long b = 0; b < n; ++b) {
        const int i = order[static_cast<size_t>(pos + b)];
        model.example(data.train.x.data() + static_cast<long long>(i) * kFeatures, data.train.y[static_cast<size_t>(i)],
                      grad.data());
      }
      // PyTorch's SGD with momentum: v = mu v + g; w -= lr v, the rate
      // rising linearly over the warmup steps.
      const long long t = result->steps;
      const double rate = t < warmup_steps ? lr * static_cast<double>(t + 1) / static_cast<double>(warmup_steps) : lr;
      const double scale = 1.0 / static_cast<double>(n);
      std::vector<double>& w = model.weights();
      for (size_t p = 0; p < w.size(); ++p) {
        velocity[p] = kMomentum * velocity[p] + grad[p] * scale;
        w[p] -= rate * velocity[p];
      }
      ++result->steps;
      pos += n;
    }
    log.end(kEpochStop, nullptr, {{kEpochNum, epoch}});
    const double accuracy =
        log_evaluation(log, epoch, epoch, [&] { return evaluate(model, data.eval); }, {{kEpochNum, epoch}}, result);
    if (accuracy >= kTarget) return stop(true);
  }
  epoch = run.max_epochs;
  return stop(false);
}

}  // namespace referee::harness::detail
