#include "harness/workloads/workloads.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "mllog/constants.h"

namespace referee::harness {

namespace detail {

namespace {
uint64_t splitmix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(&x);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  double u1 = uniform();
  double u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

uint64_t Rng::below(uint64_t n) {
  // Rejection sampling: unbiased.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = next();
  while (x >= limit);
  return x % n;
}

mllog::CallSite RunLog::trim(mllog::CallSite where) {
  const char* f = where.file;
#ifdef REFEREE_SOURCE_DIR
  size_t n = std::strlen(REFEREE_SOURCE_DIR);
  if (std::strncmp(f, REFEREE_SOURCE_DIR, n) == 0 && f[n] == '/') return {f + n + 1, where.line};
#endif
  // A build elsewhere: keep the path from the project's harness/ folder on.
  const char* h = nullptr;
  for (const char* p = std::strstr(f, "harness/"); p; p = std::strstr(p + 1, "harness/"))
    if (p == f || p[-1] == '/') h = p;
  return {h ? h : f, where.line};
}

void RunLog::event(std::string_view key, const mllog::LogValue& value, mllog::Metadata md, mllog::CallSite where) {
  log_.event(key, value, md, trim(where));
}
void RunLog::start(std::string_view key, const mllog::LogValue& value, mllog::Metadata md, mllog::CallSite where) {
  log_.start(key, value, md, trim(where));
}
void RunLog::end(std::string_view key, const mllog::LogValue& value, mllog::Metadata md, mllog::CallSite where) {
  log_.end(key, value, md, trim(where));
}

void log_submission_info(RunLog& log, const WorkloadConfig& config) {
  using namespace mllog::constants;
  log.event(kSubmissionBenchmark, config.benchmark);
  log.event(kSubmissionOrg, config.org);
  log.event(kSubmissionDivision, config.division);
  log.event(kSubmissionStatus, config.status);
  log.event(kSubmissionPlatform, config.platform);
}

void log_run_preamble(RunLog& log, const WorkloadConfig& config, int global_batch_size) {
  using namespace mllog::constants;
  log.event(kCacheClear, true);
  log_submission_info(log, config);
  log.start(kInitStart);
  log.event(kSeed, config.seed);
  log.event(kGlobalBatchSize, global_batch_size);
  log.event(kGradientAccumulationSteps, 1);
}

double round_to(double x, double scale) { return std::round(x * scale) / scale; }

void init_uniform(std::vector<double>& w, int begin, int end, int fan_in, Rng& rng) {
  double b = 1.0 / std::sqrt(static_cast<double>(fan_in));
  for (int i = begin; i < end; ++i) w[static_cast<size_t>(i)] = (2 * rng.uniform() - 1) * b;
}

RunSettings run_settings(const WorkloadConfig& config, int default_batch, double (*default_lr)(int),
                         int default_max_epochs, WorkloadResult* result) {
  RunSettings s;
  s.batch = config.global_batch_size > 0 ? config.global_batch_size : default_batch;
  s.lr = config.learning_rate > 0 ? config.learning_rate : default_lr(s.batch);
  s.max_epochs = config.max_epochs > 0 ? config.max_epochs : default_max_epochs;
  result->global_batch_size = s.batch;
  result->learning_rate = s.lr;
  return s;
}

void log_run_start(RunLog& log, long long train_samples, long long eval_samples) {
  using namespace mllog::constants;
  log.end(kInitStop);
  log.start(kRunStart);
  log.event(kTrainSamples, train_samples);
  log.event(kEvalSamples, eval_samples);
}

bool log_run_stop(RunLog& log, bool success, const mllog::LogValue& epoch, WorkloadResult* result) {
  using namespace mllog::constants;
  result->converged = success;
  log.end(kRunStop, nullptr, {{kStatus, success ? kSuccess : kAborted}, {kEpochNum, epoch}});
  return true;
}

void shuffle_order(Rng& rng, std::vector<int>& order) {
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  rng.shuffle(order);
}

bool begin_batch(const std::atomic<bool>& cancel, int batch, long long train_size, long long pos,
                 std::vector<double>& grad, long long* n, WorkloadResult* result) {
  if (cancel.load(std::memory_order_relaxed)) {
    result->cancelled = true;
    return false;
  }
  *n = std::min<long long>(batch, train_size - pos);
  std::fill(grad.begin(), grad.end(), 0.0);
  return true;
}

double log_evaluation(RunLog& log, const mllog::LogValue& epoch, double epochs, const std::function<double()>& evaluate,
                      mllog::Metadata accuracy_md, WorkloadResult* result) {
  using namespace mllog::constants;
  log.start(kEvalStart, nullptr, {{kEpochNum, epoch}});
  const double quality = evaluate();
  log.end(kEvalStop, nullptr, {{kEpochNum, epoch}});
  log.event(kEvalAccuracy, quality, accuracy_md);
  ++result->evals;
  result->epochs = epochs;
  result->quality = quality;
  return quality;
}

}  // namespace detail

std::vector<std::string> builtin_workloads() { return {"minilm", "miniclf"}; }

bool workload_info(const std::string& benchmark, WorkloadInfo* out) {
  if (benchmark == "minilm") *out = detail::minilm_info();
  else if (benchmark == "miniclf") *out = detail::miniclf_info();
  else return false;
  return true;
}

double default_learning_rate(const std::string& benchmark, int global_batch_size) {
  if (global_batch_size <= 0) return 0;
  if (benchmark == "minilm") return detail::minilm_default_lr(global_batch_size);
  if (benchmark == "miniclf") return detail::miniclf_default_lr(global_batch_size);
  return 0;
}

bool run_workload(const WorkloadConfig& config, mllog::Logger& log, const std::atomic<bool>& cancel,
                  std::string* error, WorkloadResult* result) {
  WorkloadInfo info;
  if (!workload_info(config.benchmark, &info)) {
    std::string known;
    for (const auto& w : builtin_workloads()) known += (known.empty() ? "" : ", ") + w;
    if (error) *error = "unknown workload '" + config.benchmark + "' (built in: " + known + ")";
    return false;
  }
  auto fail = [&](const std::string& why) {
    if (error) *error = config.benchmark + ": " + why;
    return false;
  };
  if (config.seed < 0) return fail("the seed must be >= 0");
  if (config.global_batch_size < 0 || config.global_batch_size > info.train_samples)
    return fail("the batch size must be between 1 and " + std::to_string(info.train_samples) + " (0: default " +
                std::to_string(info.default_batch_size) + ")");
  if (!(config.learning_rate >= 0) || !std::isfinite(config.learning_rate))
    return fail("the learning rate must be a finite number > 0 (0: the default)");
  if (config.max_epochs < 0 || config.max_epochs > 10000)
    return fail("max_epochs must be between 1 and 10000 (0: default " + std::to_string(info.default_max_epochs) + ")");
  WorkloadResult local;
  WorkloadResult* r = result ? result : &local;
  *r = WorkloadResult{};
  if (config.benchmark == "minilm") return detail::run_minilm(config, log, cancel, r);
  return detail::run_miniclf(config, log, cancel, r);
}

}  // namespace referee::harness
