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
    double b1 = 1.0 / std::sqrt(static_cast<double>(kIn));
    for (int i = 0; i < kIn * kHidden; ++i) w_[kOffW1 + i] = (2 * rng.uniform() - 1) * b1;
    double b2 = 1.0 / std::sqrt(static_cast<double>(kHidden));
    for (int i = 0; i < kHidden * kVocab; ++i) w_[kOffW2 + i] = (2 * rng.uniform() - 1) * b2;
  }

  // Cross-entropy (nats) of predicting text[pos + kContext] from the tokens
  // before it; with `grad`, adds the loss's gradient to it.
  double example(const uint8_t* ctx, int target, double* grad) const {
    const double* w = w_.data();
    double in[kIn];
    for (int c = 0; c < kContext; ++c)
      for (int e = 0; e < kEmbed; ++e) in[c * kEmbed + e] = w[kOffE + ctx[c] * kEmbed + e];
    double h[kHidden];
    for (int j = 0; j < kHidden; ++j) h[j] = w[kOffB1 + j];
    for (int i = 0; i < kIn; ++i) {
      const double* row = w + kOffW1 + i * kHidden;
      for (int j = 0; j < kHidden; ++j) h[j] += in[i] * row[j];
    }
    for (double& x : h) x = std::tanh(x);
    double z[kVocab];
    for (int k = 0; k < kVocab; ++k) z[k] = w[kOffB2 + k];
    for (int j = 0; j < kHidden; ++j) {
      const double* row = w + kOffW2 + j * kVocab;
      for (int k = 0; k < kVocab; ++k) z[k] += h[j] * row[k];
    }
    double zmax = z[0];
    for (int k = 1; k < kVocab; ++k) zmax = std::max(zmax, z[k]);
    double sum = 0;
    for (int k = 0; k < kVocab; ++k) {
      z[k] = std::exp(z[k] - zmax);
      sum += z[k];
    }
    double loss = std::log(sum) - std::log(z[target]);
    if (!grad) return loss;
    double dz[kVocab];
    for (int k = 0; k < kVocab; ++k) dz[k] = z[k] / sum;
    dz[target] -= 1.0;
    double dh[kHidden];
    for (int j = 0; j < kHidden; ++j) {
      const double* row = w + kOffW2 + j * kVocab;
      double* grow = grad + kOffW2 + j * kVocab;
      double s = 0;
      for (int k = 0; k < kVocab; ++k) {
        grow[k] += h[j] * dz[k];
        s += row[k] * dz[k];
      }
      dh[j] = s * (1 - h[j] * h[j]);  // through tanh
    }
    for (int k = 0; k < kVocab; ++k) grad[kOffB2 + k] += dz[k];
    for (int j = 0; j < kHidden; ++j) grad[kOffB1 + j] += dh[j];
    for (int i = 0; i < kIn; ++i) {
      const double* row = w + kOffW1 + i * kHidden;
      double* grow = grad + kOffW1 + i * kHidden;
      double s = 0;
      for (int j = 0; j < kHidden; ++j) {
        grow[j] += in[i] * dh[j];
        s += row[j] * dh[j];
      }
      grad[kOffE + ctx[i / kEmbed] * kEmbed + i % kEmbed] += s;
    }
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
  WorkloadInfo i;
  i.name = "minilm";
  i.description = "neural language model (24 symbols, 2-token context, 32 tanh units), Adam, Markov-chain text";
  i.metric = "evaluation cross-entropy, nats per symbol (lower is better)";
  i.lower_is_better = true;
  i.target = kTarget;
  i.optimum = source().entropy_rate;
  i.default_batch_size = kDefaultBatch;
  i.default_max_epochs = kDefaultMaxEpochs;
  i.train_samples = kTrainSize;
  i.eval_samples = kEvalSize;
  return i;
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
  const int batch = config.global_batch_size > 0 ? config.global_batch_size : kDefaultBatch;
  const double lr = config.learning_rate > 0 ? config.learning_rate : minilm_default_lr(batch);
  const int max_epochs = config.max_epochs > 0 ? config.max_epochs : kDefaultMaxEpochs;
  result->global_batch_size = batch;
  result->learning_rate = lr;

  log_run_preamble(log, config, batch);
  log.event(kMaxSequenceLength, kContext + 1);
  log.event(kOptName, kAdam);
  log.event(kOptBaseLr, lr);
  log.event(kOptAdamBeta1, kBeta1);
  log.event(kOptAdamBeta2, kBeta2);
  log.event(kOptAdamEpsilon, kEpsilon);
  // Initialisation: the data set (generated once per process, from its own
  // fixed seeds), the model and the optimizer.
  const Source& data = source();
  Rng init_rng(static_cast<uint64_t>(config.seed));
  Model model(init_rng);
  Rng shuffle_rng(init_rng.next());
  Adam adam(lr);
  std::vector<double> grad(kParams, 0.0);
  std::vector<int> order(static_cast<size_t>(kTrainSize));
  log.end(kInitStop);

  log.start(kRunStart);
  log.event(kTrainSamples, kTrainSize);
  log.event(kEvalSamples, kEvalSize);

  long long seen = 0;  // samples trained on, all epochs
  auto epoch_of = [&](long long samples) {
    return round_to(static_cast<double>(samples) / static_cast<double>(kTrainSize), 1e4);
  };
  auto stop = [&](bool success) {
    result->converged = success;
    log.end(kRunStop, nullptr, {{kStatus, success ? kSuccess : kAborted}, {kEpochNum, epoch_of(seen)}});
    return true;
  };
  const double block_epochs = 1.0 / kEvalsPerEpoch;
  for (int epoch = 0; epoch < max_epochs; ++epoch) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    shuffle_rng.shuffle(order);
    long long pos = 0;  // within the epoch
    for (int block = 0; block < kEvalsPerEpoch; ++block) {
      const long long block_end = kTrainSize * (block + 1) / kEvalsPerEpoch;
      if (pos >= block_end) continue;  // a batch larger than a block covered it
      const double first_epoch = epoch_of(seen);
      log.start(kBlockStart, nullptr,
                {{kFirstEpochNum, first_epoch}, {kEpochCount, block_epochs}, {kSamplesCount, seen}});
      while (pos < block_end) {
        if (cancel.load(std::memory_order_relaxed)) {
          result->cancelled = true;
          return stop(false);
        }
        const long long n = std::min<long long>(batch, kTrainSize - pos);
        std::fill(grad.begin(), grad.end(), 0.0);
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
      log.start(kEvalStart, nullptr, {{kEpochNum, epoch_num}});
      const double loss = evaluate(model, data);
      log.end(kEvalStop, nullptr, {{kEpochNum, epoch_num}});
      log.event(kEvalAccuracy, loss, {{kEpochNum, epoch_num}, {kSamplesCount, seen}});
      ++result->evals;
      result->epochs = epoch_num;
      result->quality = loss;
      if (loss <= kTarget) return stop(true);
    }
  }
  return stop(false);
}

}  // namespace referee::harness::detail
