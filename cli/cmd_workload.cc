// referee workload run|list: the mini reference workloads as a program, for
// the harness's exec backend and for producing reference convergence points
// (scripts/make_mini_rcps.sh).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "harness/workloads/workloads.h"
#include "mllog/writer.h"

namespace referee::cli {

namespace {

std::atomic<bool> g_cancel{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) {
  g_signal.store(sig);
  g_cancel.store(true);
}

struct RunOpts {
  harness::WorkloadConfig config;
  std::string log = "-";
  bool quiet = false;
};

int run_one(const RunOpts& o) {
  harness::WorkloadInfo info;
  if (!harness::workload_info(o.config.benchmark, &info)) {
    std::string known;
    for (const auto& w : harness::builtin_workloads()) known += " " + w;
    std::cerr << "referee workload run: unknown workload '" << o.config.benchmark << "' (built in:" << known << ")\n";
    return kCannotCheck;
  }
  mllog::Options opt;
  opt.mode = mllog::WriteMode::kSync;  // each line is out as soon as it is logged
  if (o.log == "-") {
    opt.stream = &std::cout;
  } else {
    std::ofstream truncate(o.log, std::ios::trunc);  // a fresh log per run
    if (!truncate) {
      std::cerr << "referee workload run: cannot write " << o.log << "\n";
      return kCannotCheck;
    }
    opt.file = o.log;
  }
  mllog::Logger log(opt);
  if (!log.error().empty()) {
    std::cerr << "referee workload run: " << log.error() << "\n";
    return kCannotCheck;
  }

  struct sigaction sa {}, old_term{}, old_int{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGINT, &sa, &old_int);
  auto t0 = std::chrono::steady_clock::now();
  std::string error;
  harness::WorkloadResult r;
  bool ok = harness::run_workload(o.config, log, g_cancel, &error, &r);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log.flush();
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  if (!ok) {
    std::cerr << "referee workload run: " << error << "\n";
    return kCannotCheck;
  }
  if (!log.error().empty()) {
    std::cerr << "referee workload run: " << log.error() << "\n";
    return kCannotCheck;
  }
  if (!o.quiet) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s: seed %lld, batch %d, lr %g: %s %.4f (target %s %.2f) at epoch %g, %d evaluations, %lld steps, "
                  "%.2f s\n",
                  o.config.benchmark.c_str(), o.config.seed, r.global_batch_size, r.learning_rate,
                  r.converged ? "reached" : r.cancelled ? "cancelled at" : "did not converge, last", r.quality,
                  info.lower_is_better ? "<=" : ">=", info.target, r.epochs, r.evals, r.steps, secs);
    std::cerr << buf;
  }
  if (r.cancelled && g_signal.load() != 0) return 128 + g_signal.load();
  return r.converged ? kPass : kFail;
}

int list_workloads() {
  for (const auto& name : harness::builtin_workloads()) {
    harness::WorkloadInfo i;
    harness::workload_info(name, &i);
    char buf[256];
    std::snprintf(buf, sizeof buf, "  target %s %.2f (best achievable %.4f); default batch %d, lr %g; %lld train / %lld eval samples\n",
                  i.lower_is_better ? "<=" : ">=", i.target, i.optimum, i.default_batch_size,
                  harness::default_learning_rate(name, i.default_batch_size), i.train_samples, i.eval_samples);
    std::cout << i.name << "  " << i.description << "\n  eval_accuracy: " << i.metric << "\n" << buf;
  }
  return kPass;
}

}  // namespace

Command workload_command() {
  return {"workload", "Run the built-in mini reference workloads (minilm, miniclf)",
          [](CLI::App& sub) -> std::function<int()> {
            auto o = std::make_shared<RunOpts>();
            CLI::App* run = sub.add_subcommand("run", "Train one workload and write its MLLOG result log");
            run->add_option("BENCH", o->config.benchmark, "workload: minilm or miniclf")->required();
            run->add_option("--seed", o->config.seed, "seed (>= 0): initial weights and data order")
                ->required()
                ->check(CLI::NonNegativeNumber);
            run->add_option("--batch-size", o->config.global_batch_size, "global batch size (default: the workload's)")
                ->check(CLI::Range(0, 1 << 24));
            run->add_option("--lr", o->config.learning_rate, "base learning rate (default: scaled to the batch size)")
                ->check(CLI::NonNegativeNumber);
            run->add_option("--max-epochs", o->config.max_epochs,
                            "epochs before an unconverged run is aborted (default: the workload's)")
                ->check(CLI::Range(0, 1000000));
            run->add_option("--log", o->log, "result log to write (replaced), or - for stdout (default)");
            run->add_option("--division", o->config.division, "submission_division (default closed)");
            run->add_option("--org", o->config.org, "submission_org (default referee)");
            run->add_option("--platform", o->config.platform, "submission_platform (default cpu)");
            run->add_option("--status", o->config.status, "submission_status (default onprem)");
            run->add_flag("-q,--quiet", o->quiet, "no summary line on stderr");
            CLI::App* list = sub.add_subcommand("list", "List the built-in workloads, their targets and defaults");
            sub.require_subcommand(1);
            return [o, run, list]() -> int {
              if (run->parsed()) return run_one(*o);
              if (list->parsed()) return list_workloads();
              return static_cast<int>(kCannotCheck);
            };
          }};
}

}  // namespace referee::cli
