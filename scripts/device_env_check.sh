#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: checks that referee's environment capture
# finds what nvidia-smi and the Python on PATH report, through
# `referee system env` and `referee system describe` (GPU count, name and
# memory, driver, CUDA; torch's version when python3 has torch).
#   scripts/device_env_check.sh [REFEREE]    (default: build/referee)
# Exit 0 when every check passes, 1 when one fails, 2 when it cannot check.
set -uo pipefail
referee=$(realpath "${1:-build/referee}")
cd "$(dirname "$0")/.." || exit 2
command -v nvidia-smi >/dev/null || { echo "cannot check: nvidia-smi is not on PATH"; exit 2; }
command -v python3 >/dev/null || { echo "cannot check: python3 is not on PATH"; exit 2; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
printf 'benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\ncommand: ["python3", "train.py"]\n' > "$tmp/spec.yaml"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader,nounits > "$tmp/smi.csv" || exit 2
"$referee" system env --spec "$tmp/spec.yaml" || { echo "FAIL: referee system env"; exit 1; }
"$referee" system env --spec "$tmp/spec.yaml" --json > "$tmp/env.json" || { echo "FAIL: referee system env --json"; exit 1; }
# Missing fields (no --from) exit 1; the detected ones are printed all the same.
"$referee" system describe --spec "$tmp/spec.yaml" > "$tmp/describe.json" 2> "$tmp/describe.err"
[ $? -le 1 ] || { cat "$tmp/describe.err"; echo "FAIL: referee system describe"; exit 1; }
"$referee" system describe --from harness/workloads/specs/cpu_system.yaml > /dev/null || { echo "FAIL: system describe --from harness/workloads/specs/cpu_system.yaml"; exit 1; }
python3 - "$tmp" <<'PY'
import json, sys, importlib.metadata as md
tmp = sys.argv[1]
rows = [[c.strip() for c in l.split(",")] for l in open(tmp + "/smi.csv") if l.strip()]
env = json.load(open(tmp + "/env.json"))
d = json.load(open(tmp + "/describe.json"))
nv = env["nvidia"]
checks = [
    ("nvidia_smi found", nv["nvidia_smi"], True),
    ("GPU count", nv["gpu_count"], len(rows)),
    ("GPU names", [g["name"] for g in nv["gpus"]], [r[0] for r in rows]),
    ("GPU memory MiB", [g["memory_mib"] for g in nv["gpus"]], [int(r[2]) for r in rows]),
    ("driver", nv["driver_version"], rows[0][1]),
    ("CUDA version found", bool(nv["cuda_version"]), True),
    ("accelerators_per_node", d["accelerators_per_node"], str(len(rows))),
    ("accelerator_model_name", d["accelerator_model_name"], " + ".join(sorted(set(r[0] for r in rows)))),
    ("accelerator_memory_capacity", d["accelerator_memory_capacity"], "%d GB" % round(int(rows[0][2]) / 1024)),
    ("other_software_stack.cuda_version", d["other_software_stack"].get("cuda_version"), nv["cuda_version"]),
    ("other_software_stack.cuda_driver_version", d["other_software_stack"].get("cuda_driver_version"), rows[0][1]),
    ("python probed", env["python"].get("version", "") != "", True),
]
try:
    torch = md.version("torch")
    checks += [("torch version", env["python"]["packages"].get("torch"), torch),
               ("framework", d.get("framework"), "PyTorch " + torch)]
except Exception:
    print("python3 has no torch: framework not checked")
failed = 0
for name, got, want in checks:
    ok = got == want
    failed += not ok
    print(("ok   " if ok else "FAIL ") + name + ": " + repr(got) + ("" if ok else " (expected " + repr(want) + ")"))
sys.exit(1 if failed else 0)
PY
rc=$?
[ $rc -eq 0 ] && echo "device_env_check: all checks passed" || echo "device_env_check: FAILED"
exit $rc
