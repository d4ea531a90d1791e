// minilm: a neural language model (Bengio-style: two-token context,
// embeddings, one tanh hidden layer, softmax over the vocabulary) trained with
// Adam on text drawn from a fixed random first-order Markov chain. The chain's
// entropy rate is the lowest cross-entropy any model can reach; the quality
// target (evaluation cross-entropy <= 2.10 nats) sits above it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/workloads/workloads.h"
#include "mllog/constants.h"

namespace referee::harness::detail {

namespace {

using namespace mllog::constants;

constexpr int kVocab = 24;
constexpr int kContext = 2;   // tokens the model sees
constexpr int kEmbed = 8;
constexpr int kIn = kContext * kEmbed;
constexpr int kHidden = 32;
constexpr long long kTrainSize = 16384;  // predictions per epoch
constexpr long long kEvalSize = 4096;
constexpr int kEvalsPerEpoch = 4;
constexpr double kTarget = 2.10;
constexpr int kDefaultBatch = 64;
constexpr int kDefaultMaxEpochs = 20;
constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8;

// The source: every state moves to one of kBranches successors (a random
// subset, different for each state) with the probabilities kBranch, plus
// kFloor spread over all symbols.
constexpr int kBranches = 6;
constexpr double kBranch[kBranches] = {0.40, 0.22, 0.14, 0.10, 0.08, 0.06};
constexpr double kFloor = 0.10;
constexpr uint64_t kChainSeed = 0x6d696e696c6d2d31ULL;  // "minilm-1"
constexpr uint64_t kTrainTextSeed = 0x747261696e2d3031ULL;
constexpr uint64_t kEvalTextSeed = 0x6576616c2d2d3031ULL;

struct Source {
  double p[kVocab][kVocab];
  double stationary[kVocab];
  double entropy_rate = 0;  // nats per symbol
  std::vector<uint8_t> train, eval;  // texts: kContext + samples tokens each
  double true_eval_loss = 0;
};

std::vector<uint8_t> draw_text(const Source& s, uint64_t seed, long long samples) {
  Rng rng(seed);
  std::vector<uint8_t> t;
  t.reserve(static_cast<size_t>(samples + kContext));
  // Start from the stationary distribution, so every position is typical.
  double u = rng.uniform(), acc = 0;
  int x = kVocab - 1;
  for (int i = 0; i < kVocab; ++i) {
    acc += s.stationary[i];
    if (u < acc) {
      x = i;
      break;
    }
  }
  t.push_back(static_cast<uint8_t>(x));
  while (static_cast<long long>(t.size()) < samples + kContext) {
    u = rng.uniform();
    acc = 0;
    int y = kVocab - 1;
    for (int j = 0; j < kVocab; ++j) {
      acc += s.p[x][j];
      if (u < acc) {
        y = j;
        break;
      }
    }
    t.push_back(static_cast<uint8_t>(y));
    x = y;
  }
  return t;
}

Source make_source() {
  Source s;
  Rng rng(kChainSeed);
  for (int i = 0; i < kVocab; ++i) {
    std::vector<int> order(kVocab);
    for (int j = 0; j < kVocab; ++j) order[static_cast<size_t>(j)] = j;
    rng.shuffle(order);
    for (int j = 0; j < kVocab; ++j) s.p[i][j] = kFloor / kVocab;
    for (int k = 0; k < kBranches; ++k) s.p[i][order[static_cast<size_t>(k)]] += (1.0 - kFloor) * kBranch[k];
  }
  // Stationary distribution by power iteration (the chain is irreducible and aperiodic).
  double mu[kVocab];
  for (double& m : mu) m = 1.0 / kVocab;
  for (int it = 0; it < 10000; ++it) {
    double next[kVocab] = {};
    for (int i = 0; i < kVocab; ++i)
      for (int j = 0; j < kVocab; ++j) next[j] += mu[i] * s.p[i][j];
    double diff = 0;
    for (int j = 0; j < kVocab; ++j) {
      diff += std::fabs(next[j] - mu[j]);
      mu[j] = next[j];
    }
    if (diff < 1e-15) break;
  }
  for (int i = 0; i < kVocab; ++i) s.stationary[i] = mu[i];
  for (int i = 0; i < kVocab; ++i) {
    double h = 0;
    for (int j = 0; j < kVocab; ++j) h -= s.p[i][j] * std::log(s.p[i][j]);
    s.entropy_rate += mu[i] * h;
  }
  s.train = draw_text(s, kTrainTextSeed, kTrainSize);
  s.eval = draw_text(s, kEvalTextSeed, kEvalSize);
  double loss = 0;
  for (long long j = 0; j < kEvalSize; ++j)
    loss -= std::log(s.p[s.eval[static_cast<size_t>(j + kContext - 1)]][s.eval[static_cast<size_t>(j + kContext)]]);
  s.true_eval_loss = loss / static_cast<double>(kEvalSize);
  return s;
}

const Source& source() {
  static const Source s = make_source();
  return s;
}

// Parameters (and their gradients, and Adam's moments) in one flat array.
constexpr int kOffE = 0;                               // [kVocab][kEmbed]
constexpr int kOffW1 = kOffE + kVocab * kEmbed;        // [kIn][kHidden]
constexpr int kOffB1 = kOffW1 + kIn * kHidden;         // [kHidden]
constexpr int kOffW2 = kOffB1 + kHidden;               // [kHidden][kVocab]
constexpr int kOffB2 = kOffW2 + kHidden * kVocab;      // [kVocab]
constexpr int kParams = kOffB2 + kVocab;

class Model {
 public:
  explicit Model(Rng& rng) : w_(kParams, 0.0) {
    for (int i = 0; i < kVocab * kEmbed; ++i) w_[kOffE + i] = rng.normal();
    init_uniform(w_, kOffW1, kOffW1 + kIn * kHidden, kIn, rng);  // the biases stay 0
    init_uniform(w_, kOffW2, kOffW2 + kHidden * kVocab, kHidden, rng);
  }

  // Cross-entropy (nats) of predicting text[pos + kContext] from the tokens
  // before it; with `grad`, adds the loss's gradient to it.
  double example(const uint8_t* ctx, int target, double* grad) const {
    const double* w = w_.data();
    double in[kIn];
    for (int c = 0; c < kContext; ++c)
      for (int e = 0; e < kEmbed; ++e) in[c * kEmbed + e] = w[kOffE + ctx[c] * kEmbed + e];
    double h[kHidden];
    dense_forward<kIn, kHidden>(w, kOffW1, kOffB1, in, h);
    for (double& x : h) x = std::tanh(x);
    double z[kVocab];
    dense_forward<kHidden, kVocab>(w, kOffW2, kOffB2, h, z);
    double zmax = z[0];
    for (int k = 1; k < kVocab; ++k) zmax = std::max(zmax, z[k]);
    const double sum = softmax_exp<kVocab>(z, zmax);
    double loss = std::log(sum) - std::log(z[target]);
    if (!grad) return loss;
    double dz[kVocab];
    cross_entropy_grad<kVocab>(z, sum, target, dz);
    double dh[kHidden];
    dense_backward<kHidden, kVocab>(w, kOffW2, kOffB2, h, dz, grad, dh);
    for (int j = 0; j < kHidden; ++j) dh[j] *= 1 - h[j] * h[j];  // through tanh
    double din[kIn];
    dense_backward<kIn, kHidden>(w, kOffW1, kOffB1, in, dh, grad, din);
    for (int i = 0; i < kIn; ++i) grad[kOffE + ctx[i / kEmbed] * kEmbed + i % kEmbed] += din[i];
    return loss;
  }

  std::vector<double>& weights() { return w_; }

 private:
  std::vector<double> w_;
};

class Adam {
 public:
  explicit Adam(double lr) : lr_(lr), m_(kParams, 0.0), v_(kParams, 0.0) {}
  // PyTorch's Adam (no weight decay): bias-corrected moments.
  void step(std::vector<double>& w, const std::vector<double>& g) {
    ++t_;
    double c1 = 1 - std::pow(kBeta1, static_cast<double>(t_));
    double c2 = 1 - std::pow(kBeta2, static_cast<double>(t_));
    double step = lr_ / c1;
    double root_c2 = std::sqrt(c2);
    for (size_t i = 0; i < w.size(); ++i) {
      m_[i] = kBeta1 * m_[i] + (1 - kBeta1) * g[i];
      v_[i] = kBeta2 * v_[i] + (1 - kBeta2) * g[i] * g[i];
      w[i] -= step * m_[i] / (std::sqrt(v_[i]) / root_c2 + kEpsilon);
    }
  }

 private:
  double lr_;
  long long t_ = 0;
  std::vector<double> m_, v_;
};

double evaluate(const Model& model, const Source& s) {
  double loss = 0;
  for (long long j = 0; j < kEvalSize; ++j) {
    const uint8_t* t = s.eval.data() + j;
    loss += model.example(t, t[kContext], nullptr);
  }
  return loss / static_cast<double>(kEvalSize);
}

}  // namespace

WorkloadInfo minilm_info() {
  return {.name = "minilm",
          .description = "neural language model (24 symbols, 2-token context, 32 tanh units), Adam, Markov-chain text",
          .metric = "evaluation cross-entropy, nats per symbol (lower is better)", .lower_is_better = true,
          .target = kTarget, .optimum = source().entropy_rate, .default_batch_size = kDefaultBatch,
          .default_max_epochs = kDefaultMaxEpochs, .train_samples = kTrainSize, .eval_samples = kEvalSize};
}

// Square-root scaling from 0.005 at batch 64 (Adam's usual rule).
double minilm_default_lr(int global_batch_size) {
  return round_to(0.005 * std::sqrt(global_batch_size / 64.0), 1e6);
}

double minilm_entropy_rate() { return source().entropy_rate; }
double minilm_true_eval_loss() { return source().true_eval_loss; }

bool run_minilm(const WorkloadConfig& config, mllog::Logger& logger, const std::atomic<bool>& cancel,
                WorkloadResult* result) {
  RunLog log(logger);
  const RunSettings run = run_settings(config, kDefaultBatch, minilm_default_lr, kDefaultMaxEpochs, result);
  const int batch = run.batch;

  log_run_preamble(log, config, batch);
  log.event(kMaxSequenceLength, kContext + 1);
  log.event(kOptName, kAdam);
  log.event(kOptBaseLr, run.lr);
  log.event(kOptAdamBeta1, kBeta1);
  log.event(kOptAdamBeta2, kBeta2);
  log.event(kOptAdamEpsilon, kEpsilon);
  // Initialisation: the data set (generated once per process, from its own
  // fixed seeds), the model and the optimizer.
  const Source& data = source();
  Rng init_rng(static_cast<uint64_t>(config.seed));
  Model model(init_rng);
  Rng shuffle_rng(init_rng.next());
  Adam adam(run.lr);
  std::vector<double> grad(kParams, 0.0);
  std::vector<int> order(static_cast<size_t>(kTrainSize));
  log_run_start(log, kTrainSize, kEvalSize);

  long long seen = 0;  // samples trained on, all epochs
  auto epoch_of = [&](long long samples) {
    return round_to(static_cast<double>(samples) / static_cast<double>(kTrainSize), 1e4);
  };
  auto stop = [&](bool success) { return log_run_stop(log, success, epoch_of(seen), result); };
  const double block_epochs = 1.0 / kEvalsPerEpoch;
  for (int epoch = 0; epoch < run.max_epochs; ++epoch) {
    shuffle_order(shuffle_rng, order);
    long long pos = 0;  // within the epoch
    for (int block = 0; block < kEvalsPerEpoch; ++block) {
      const long long block_end = kTrainSize * (block + 1) / kEvalsPerEpoch;
      if (pos >= block_end) continue;  // a batch larger than a block covered it
      const double first_epoch = epoch_of(seen);
      log.start(kBlockStart, nullptr,
                {{kFirstEpochNum, first_epoch}, {kEpochCount, block_epochs}, {kSamplesCount, seen}});
      while (pos < block_end) {
        long long n = 0;
        if (!begin_batch(cancel, batch, kTrainSize, pos, grad, &n, result)) return stop(false);
        for (long long b = 0; b < n; ++b) {
          const uint8_t* t = data.train.data() + order[static_cast<size_t>(pos + b)];
          model.example(t, t[kContext], grad.data());
        }
        const double scale = 1.0 / static_cast<double>(n);
        for (double& g : grad) g *= scale;
        adam.step(model.weights(), grad);
        ++result->steps;
        pos += n;
        seen += n;
      }
      const double epoch_num = epoch_of(seen);
      log.end(kBlockStop, nullptr, {{kFirstEpochNum, first_epoch}, {kSamplesCount, seen}});
      const double loss = log_evaluation(
          log, epoch_num, epoch_num, [&] { return evaluate(model, data); },
          {{kEpochNum, epoch_num}, {kSamplesCount, seen}}, result);
      if (loss <= kTarget) return stop(true);
    }
  }
  return stop(false);
}

}  // namespace referee::harness::detail
