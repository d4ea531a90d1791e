#!/usr/bin/env python3
"""Writes the example submission package submissions/examples/ExampleOrg/.

The package is what a harness run of referee's mini workloads (minilm, miniclf) on one
CPU machine would produce, in the consortium's layout:

    ExampleOrg/systems/cpu_2x_example.json
    ExampleOrg/results/cpu_2x_example/minilm/result_0.txt .. result_4.txt
    ExampleOrg/results/cpu_2x_example/miniclf/result_0.txt .. result_4.txt

It is checked by `referee check-package submissions/examples/ExampleOrg --ruleset mini-1.0.0`
and must pass: every log is compliant with rules/sets/compliance_checker/mini_1.0.0, seeds
differ, and the olympic mean of the runs' convergence epochs passes the RCP test against
rules/sets/rcp_checker/mini_1.0.0.

Standard library only, and deterministic: running it twice gives the same bytes.
Usage: python3 scripts/make_example_package.py [--out DIR]
"""

import argparse
import json
import os
import random
import shutil

ORG = "ExampleOrg"
SYSTEM = "cpu_2x_example"
RANDOM_SEED = 20250115
BASE_TIME_MS = 1736935200000  # 2025-01-15 10:00:00 UTC: the first run's cache_clear

# How many evaluations each run needs to reach the target. minilm evaluates every
# 0.256 epoch, miniclf every epoch; the olympic means (4.011 and 9.0 epochs) pass the
# RCP check against the tables that scripts/make_mini_rcps.sh produces.
MINILM_EVALS_TO_TARGET = [16, 15, 16, 15, 17]
MINICLF_EPOCHS_TO_TARGET = [9, 9, 8, 9, 10]


class Log:
    """Collects the lines of one result file, MLLOG events and plain output alike."""

    def __init__(self, source_file, start_ms):
        self.source_file = source_file
        self.now = start_ms
        self.lines = []

    def advance(self, ms):
        self.now += int(ms)

    def event(self, event_type, key, value, lineno, rank=False, **metadata):
        meta = {"file": self.source_file, "lineno": lineno}
        meta.update(metadata)
        record = {"namespace": "", "time_ms": self.now, "event_type": event_type,
                  "key": key, "value": value, "metadata": meta}
        prefix = "[0] " if rank else ""
        self.lines.append(prefix + ":::MLLOG " + json.dumps(record))

    def point(self, key, value, lineno, rank=False, **metadata):
        self.event("POINT_IN_TIME", key, value, lineno, rank, **metadata)

    def start(self, key, lineno, rank=False, **metadata):
        self.event("INTERVAL_START", key, None, lineno, rank, **metadata)

    def end(self, key, lineno, rank=False, **metadata):
        self.event("INTERVAL_END", key, None, lineno, rank, **metadata)

    def text(self, line):
        self.lines.append(line)

    def write(self, path):
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(self.lines) + "\n")


def header(log, rng, benchmark, run_index):
    """cache_clear, submission_* and init_start; returns the run's seed."""
    log.text(f"+ referee-train {benchmark} --run {run_index} --system {SYSTEM}")
    log.text(f"{benchmark}: clearing page cache")
    log.point("cache_clear", True, 41)
    log.advance(rng.randint(300, 900))
    log.point("submission_benchmark", benchmark, 58)
    log.point("submission_org", ORG, 59)
    log.point("submission_division", "closed", 60)
    log.point("submission_status", "onprem", 61)
    log.point("submission_platform", SYSTEM, 62)
    log.advance(rng.randint(2, 20))
    log.start("init_start", 70)
    seed = rng.randrange(1, 2**31)
    log.point("seed", seed, 74)
    return seed


def make_minilm(rng, run_index, start_ms, evals_to_target):
    log = Log("minilm.cc", start_ms)
    seed = header(log, rng, "minilm", run_index)
    batch, train_samples, eval_samples, eval_every = 64, 6000, 1024, 1536
    epochs_per_eval = eval_every / train_samples  # 0.256
    log.text(f"minilm: seed {seed}, vocab 512, 2 layers, d_model 128, seq_len 64")
    log.point("global_batch_size", batch, 96)
    log.point("max_sequence_length", 64, 97)
    log.point("opt_name", "adam", 102)
    log.point("opt_base_learning_rate", 0.002, 103)
    log.point("opt_adam_beta_1", 0.9, 104)
    log.point("opt_adam_beta_2", 0.999, 105)
    log.point("opt_adam_epsilon", 1e-8, 106)
    log.point("opt_learning_rate_warmup_steps", 50, 107)
    log.advance(rng.randint(1500, 3500))
    log.end("init_stop", 131)
    log.advance(1)
    log.start("run_start", 132, rank=True)
    log.point("train_samples", train_samples, 140, rank=True)
    log.point("eval_samples", eval_samples, 141, rank=True)

    start_loss, target = 5.9, 2.10
    for i in range(1, evals_to_target + 1):
        first_epoch = round((i - 1) * epochs_per_eval, 3)
        epoch = round(i * epochs_per_eval, 3)
        log.start("block_start", 188, rank=True, first_epoch_num=first_epoch,
                  epoch_count=round(epochs_per_eval, 3), samples_count=(i - 1) * eval_every)
        log.advance(rng.randint(1500, 2300))
        if i % 4 == 1:
            log.text(f"[0] step {i * eval_every // batch} train_loss "
                     f"{start_loss - (start_loss - target) * i / evals_to_target + 0.35:.4f}")
        log.end("block_stop", 214, rank=True, first_epoch_num=first_epoch,
                samples_count=i * eval_every)
        log.start("eval_start", 230, rank=True, epoch_num=epoch)
        log.advance(rng.randint(120, 220))
        log.end("eval_stop", 244, rank=True, epoch_num=epoch)
        if i < evals_to_target:
            remaining = (evals_to_target - i) / evals_to_target
            loss = target + 0.02 + (start_loss - target) * remaining ** 1.5 + rng.uniform(0.0, 0.04)
        else:
            loss = target - rng.uniform(0.003, 0.03)
        log.point("eval_accuracy", round(loss, 4), 246, rank=True, epoch_num=epoch,
                  samples_count=i * eval_every)
    log.advance(rng.randint(5, 40))
    log.end("run_stop", 262, rank=True, status="success", epoch_num=epoch)
    log.text(f"minilm: reached eval loss {loss:.4f} <= {target} at epoch {epoch}")
    return log


def make_miniclf(rng, run_index, start_ms, epochs_to_target):
    log = Log("miniclf.cc", start_ms)
    seed = header(log, rng, "miniclf", run_index)
    batch, train_samples, eval_samples = 128, 20000, 4000
    log.text(f"miniclf: seed {seed}, synthetic data: 32 classes, 256 features")
    log.point("global_batch_size", batch, 88)
    log.point("opt_name", "sgd", 93)
    log.point("opt_base_learning_rate", 0.2, 94)
    log.point("opt_learning_rate_warmup_epochs", 1, 95)
    log.point("opt_momentum", 0.9, 96)
    log.point("opt_weight_decay", 0.0005, 97)
    log.advance(rng.randint(800, 2000))
    log.end("init_stop", 120)
    log.advance(1)
    log.start("run_start", 121)
    log.point("train_samples", train_samples, 125)
    log.point("eval_samples", eval_samples, 126)

    start_acc, target = 0.52, 0.90
    for epoch in range(1, epochs_to_target + 1):
        log.start("epoch_start", 150, rank=True, epoch_num=epoch)
        log.advance(rng.randint(900, 1400))
        log.end("epoch_stop", 171, rank=True, epoch_num=epoch)
        if epoch % 3 == 0:
            log.text(f"[0] epoch {epoch} train_loss {1.9 * 0.78 ** epoch:.4f}")
        log.start("eval_start", 180, rank=True, epoch_num=epoch)
        log.advance(rng.randint(100, 180))
        log.end("eval_stop", 192, rank=True, epoch_num=epoch)
        if epoch < epochs_to_target:
            remaining = (epochs_to_target - epoch) / epochs_to_target
            acc = target - 0.006 - (target - start_acc) * remaining ** 1.3 - rng.uniform(0.0, 0.01)
        else:
            acc = target + rng.uniform(0.001, 0.012)
        log.point("eval_accuracy", round(acc, 5), 195, rank=True, epoch_num=epoch)
    log.advance(rng.randint(5, 40))
    log.end("run_stop", 210, status="success", epoch_num=epochs_to_target)
    log.text(f"miniclf: reached accuracy {acc:.4f} >= {target} at epoch {epochs_to_target}")
    return log


def system_description():
    return {
        "submitter": ORG,
        "division": "closed",
        "status": "Available on-premise",
        "system_name": SYSTEM,
        "number_of_nodes": "1",
        "host_processors_per_node": "2",
        "host_processor_model_name": "Generic x86-64 server CPU",
        "host_processor_core_count": "16",
        "host_processor_vcpu_count": "32",
        "host_processor_frequency": "2.4 GHz",
        "host_processor_caches": "L1d 48 KiB, L2 2 MiB per core; L3 32 MiB per socket",
        "host_processor_interconnect": "",
        "host_memory_capacity": "256 GB",
        "host_storage_type": "NVMe SSD",
        "host_storage_capacity": "1x 1.92 TB",
        "host_networking": "1x 25 Gb/s Ethernet",
        "host_networking_topology": "N/A",
        "host_memory_configuration": "16x 16 GB DDR4-3200",
        "accelerators_per_node": "0",
        "accelerator_model_name": "N/A",
        "accelerator_host_interconnect": "N/A",
        "accelerator_frequency": "N/A",
        "accelerator_on-chip_memories": "N/A",
        "accelerator_memory_configuration": "N/A",
        "accelerator_memory_capacity": "N/A",
        "accelerator_interconnect": "N/A",
        "accelerator_interconnect_topology": "N/A",
        "cooling": "Air",
        "hw_notes": "Example system for referee's documentation; not a real submission.",
        "framework": "referee builtin",
        "other_software_stack": {
            "compiler": "GCC 12",
            "blas": "none (reference kernels)",
        },
        "operating_system": "Linux",
        "sw_notes": "Generated by scripts/make_example_package.py.",
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.join(here, "..", "submissions", "examples", ORG)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=default_out, help="package folder to (re)write")
    args = parser.parse_args()
    out = os.path.normpath(args.out)

    for sub in ("systems", "results"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    os.makedirs(os.path.join(out, "systems"))
    with open(os.path.join(out, "systems", SYSTEM + ".json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(system_description(), f, indent=4)
        f.write("\n")

    rng = random.Random(RANDOM_SEED)
    now = BASE_TIME_MS
    for benchmark, make, counts in (("minilm", make_minilm, MINILM_EVALS_TO_TARGET),
                                    ("miniclf", make_miniclf, MINICLF_EPOCHS_TO_TARGET)):
        folder = os.path.join(out, "results", SYSTEM, benchmark)
        os.makedirs(folder)
        for run_index, count in enumerate(counts):
            log = make(rng, run_index, now, count)
            log.write(os.path.join(folder, f"result_{run_index}.txt"))
            now = log.now + rng.randint(20000, 60000)  # the next run starts a little later
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
