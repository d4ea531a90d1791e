#!/usr/bin/python3
"""Writes training rounds the size of the published ones, for the report benchmark
(scripts/bench_report.sh): every round from 1.0.0 to 5.1.0, each with about as many
submitters, systems, results and runs as MLCommons published for it, evaluation points per
run as real logs have them, systems that come back round after round at several scales, and
accelerator and availability names as submitters spell them.

    /usr/bin/python3 scripts/gen_rounds.py --rules RULES_ROOT --out DIR [--rounds 1.0.0,...] [--scale 1.0]

RULES_ROOT is the consortium's mlperf_logging folder (only its RCP tables are read, to pick
batch sizes and convergence points). The logs come from tests/oracle/generate.py's writer;
rounds before 3.0.0 get the benchmarks of their time that writer has templates for (maskrcnn,
resnet, rnnt, ssd, unet3d; not bert, dlrm or minigo), in the newer rounds' style: they lack
hyperparameters their round required, so their results fail those checks and their pages
carry the findings, as a failing result's page does. Written under DIR:

    training_X/<org>/systems/<system>.json
    training_X/<org>/results/<system>/<benchmark>/result_N.txt
    rounds.txt      one line per round: "X <folder>"

Standard library only, deterministic (same bytes on every run). --scale multiplies the
number of submitters (0.1 for a quick try).
"""

import argparse
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'oracle'))
import generate as g  # noqa: E402

ROUNDS = ['1.0.0', '1.1.0', '2.0.0', '2.1.0', '3.0.0', '3.1.0', '4.0.0', '4.1.0', '5.0.0', '5.1.0']
OLD_BENCHMARKS = ['maskrcnn', 'resnet', 'rnnt', 'ssd', 'unet3d']
# Results per round, about as published (training_results_v1.0 ... v5.1).
RESULTS = {'1.0.0': 160, '1.1.0': 180, '2.0.0': 250, '2.1.0': 200, '3.0.0': 250, '3.1.0': 260, '4.0.0': 205,
           '4.1.0': 160, '5.0.0': 200, '5.1.0': 190}
SUBMITTERS = ['NVIDIA', 'Google', 'Intel-HabanaLabs', 'Dell', 'HPE', 'Lenovo', 'Supermicro', 'ASUSTeK', 'Azure',
              'Oracle', 'Fujitsu', 'GigaComputing', 'Quanta_Cloud_Technology', 'CoreWeave', 'Juniper', 'Krai',
              'MangoBoost', 'AMD', 'Cisco', 'Nebius', 'Lambda', 'Sustainable_Metal_Cloud', 'tiny_corp', 'Inspur']
# (first round, last round, accelerator model name as a system description writes it, per node)
ACCELERATORS = [
    ('1.0.0', '2.1.0', 'NVIDIA A100-SXM4-40GB', 8), ('1.0.0', '3.1.0', 'NVIDIA A100-SXM4-80GB', 8),
    ('1.0.0', '2.0.0', 'TPU-v4', 4), ('2.0.0', '3.0.0', 'Intel(R) Gaudi(R) 2 AI Accelerator', 8),
    ('2.1.0', '4.1.0', 'NVIDIA H100-SXM5-80GB', 8), ('3.0.0', '4.0.0', 'NVIDIA H100-PCIe-80GB', 4),
    ('3.1.0', '4.0.0', 'TPU-v5e', 4), ('4.0.0', '5.1.0', 'NVIDIA H200-SXM-141GB', 8),
    ('4.1.0', '5.1.0', 'NVIDIA Blackwell GPU (B200-SXM-180GB)', 8), ('5.0.0', '5.1.0', 'AMD Instinct MI300X 192GB HBM3', 8),
    ('5.0.0', '5.1.0', 'NVIDIA GB200', 4), ('5.1.0', '5.1.0', 'NVIDIA RTX PRO 6000 Blackwell Server Edition', 8),
]
# Spellings of rounds before 4.0.0; from 4.0.0 the rules take MLCommons' categories only.
AVAILABILITY = ['Available on-premise', 'available on premise', 'Available cloud', 'Available in cloud', 'onprem',
                'cloud', 'Available on premise', 'available in cloud']
CATEGORIES = ['Available on-premise', 'Available cloud']
EVALS = {'resnet': 36, 'unet3d': 25, 'ssd': 8, 'retinanet': 8, 'maskrcnn': 12, 'bert': 14, 'rnnt': 12, 'gpt3': 10,
         'dlrm_dcnv2': 20, 'stable_diffusion': 6, 'gnn': 12, 'rgat': 12, 'llama2_70b_lora': 12, 'llama31_405b': 8,
         'llama31_8b': 10, 'flux1': 10}
BASE_MINUTES = {'resnet': 30, 'unet3d': 25, 'ssd': 12, 'retinanet': 60, 'maskrcnn': 40, 'bert': 20, 'rnnt': 35,
                'gpt3': 1500, 'dlrm_dcnv2': 10, 'stable_diffusion': 60, 'gnn': 12, 'rgat': 12,
                'llama2_70b_lora': 30, 'llama31_405b': 2000, 'llama31_8b': 100, 'flux1': 200}


def benchmarks(ruleset):
    return g.BENCHMARKS.get(ruleset, OLD_BENCHMARKS)


def accelerators(ruleset):
    return [(name, per) for first, last, name, per in ACCELERATORS if first <= ruleset <= last]


def system_desc(org, name, ruleset, accel, per_node, nodes, status):
    d = json.loads(g.system_json(name, 'closed', ruleset))
    d.update({'submitter': org, 'status': status, 'number_of_nodes': str(nodes),
              'accelerators_per_node': str(per_node), 'accelerator_model_name': accel,
              'framework': ['PyTorch NVIDIA Release 24.04', 'JAX 0.4.1', 'MXNet NVIDIA Release 21.05'][len(org) % 3],
              'sw_notes': 'GenFramework, CUDA 12, driver 550'})
    return json.dumps(d, indent=4) + '\n'


def round_of(rules_root, out, ruleset, rng, scale):
    base = os.path.join(out, 'training_' + ruleset)
    benches = benchmarks(ruleset)
    accs = accelerators(ruleset)
    wanted = max(1, int(RESULTS[ruleset] * scale))
    n_orgs = max(1, min(len(SUBMITTERS), int(round(17 * scale))))
    orgs = SUBMITTERS[:3] + rng.sample(SUBMITTERS[3:], max(0, n_orgs - 3))
    orgs = orgs[:n_orgs]
    choice = {b: g.rcp_choice(rules_root, ruleset, b) for b in benches}
    results = 0
    k = 0
    while results < wanted:
        org = orgs[k % len(orgs)]
        accel, per_node = accs[(k // len(orgs) + len(org)) % len(accs)]
        # Scales: one node to a few thousand accelerators, most systems a node or two (as
        # published: many results of equal size on the same accelerator).
        nodes = [1, 1, 1, 2, 8, 32, 64, 128, 432, 1344][(k * 3 + len(org)) % 10]
        if nodes > 64 and org not in ('NVIDIA', 'Google', 'Azure', 'Intel-HabanaLabs', 'CoreWeave'):
            nodes = 2 * (k % 4 + 1)
        system = '%s_%s_n%d' % (org.lower()[:8], accel.split()[-1].replace('(', '').replace(')', ''), nodes)
        spellings = AVAILABILITY if ruleset < '4.0.0' else CATEGORIES
        status = spellings[(k + len(org)) % len(spellings)]
        k += 1
        for suffix in ('', '_b', '_c'):  # a second and third system of one size: another software stack
            sysdir = os.path.join(base, org, 'systems', system + suffix + '.json')
            if not os.path.exists(sysdir):
                system += suffix
                break
        else:
            continue
        g.write(sysdir, system_desc(org, system, ruleset, accel, per_node, nodes, status))
        count = nodes * per_node
        picked = rng.sample(benches, min(len(benches), rng.randint(1, len(benches))))
        for b in picked:
            if results >= wanted:
                break
            bs, mean, sizes, spread = choice[b]
            n = g.RUN_COUNTS[b]
            speed = (count / 8) ** 0.9 * (1 + 0.15 * ROUNDS.index(ruleset))
            minutes = BASE_MINUTES[b] * 8 / max(1.0, speed) * 8
            for r in range(n):
                conv = mean * (1 + 0.002 * (r % 5))
                conv = math.ceil(conv * 1000) / 1000 if g.conv_unit(b, ruleset) == 'epoch_num' else math.ceil(conv)
                ms = int(minutes * 60_000 * (1 + 0.01 * ((r * 7) % n)))
                text = g.write_log(ruleset, b, bs, conv, r, seed=rng.randint(1, 2**31), duration_ms=ms,
                                   evals=EVALS[b])
                text = text.replace('"GenOrg"', json.dumps(org)).replace('"gen_system"', json.dumps(system))
                g.write(os.path.join(base, org, 'results', system, b, 'result_%d.txt' % r), text)
            results += 1
    return base, results


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rules', required=True, help="the consortium's mlperf_logging folder")
    p.add_argument('--out', required=True, help='folder to write the rounds into (training_X/ per round, rounds.txt)')
    p.add_argument('--rounds', default=','.join(ROUNDS),
                   help='comma-separated rule set versions (default: %(default)s)')
    p.add_argument('--scale', type=float, default=1.0,
                   help='submitters per round times this (default 1; 0.1 for a quick try)')
    a = p.parse_args()
    lines = []
    for ruleset in a.rounds.split(','):
        if ruleset not in RESULTS:
            sys.exit('gen_rounds: %s is not one of %s' % (ruleset, ', '.join(ROUNDS)))
        rng = random.Random('referee-' + ruleset)
        base, n = round_of(a.rules, a.out, ruleset, rng, a.scale)
        lines.append('%s %s' % (ruleset, base))
        print('%s: %d results' % (ruleset, n))
    g.write(os.path.join(a.out, 'rounds.txt'), '\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
