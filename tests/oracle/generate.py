#!/usr/bin/python3
"""Writes MLLOG result logs and small submission packages for every benchmark of every
training round from 0.7.0 to 5.1.0 and every MLPerf HPC round from 1.0.0 to 3.0.0, compliant
ones and systematic variants, for the differential test (tests/oracle/differential.py) to run
through referee and through the consortium's tools.

    /usr/bin/python3 tests/oracle/generate.py --rules RULES_ROOT --out DIR [--rounds 3.1.0,hpc-3.0.0,...]
        [--usage training|hpc]

Rounds are named "X.Y.Z" (training) or "hpc-X.Y.Z". RULES_ROOT is the consortium's
mlperf_logging folder (compliance_checker/, rcp_checker/). Read from it: the RCP tables, to pick
a batch size each round has a reference for and convergence points that pass or fail the RCP
test by design (for rounds 1.0 to 2.1, among the references that the round's own release in
../logging-history/ had too, where it is there), and for rounds 1.0 to 2.1 the list of tensors
whose weights_initialization records the rules require (hundreds of names). The hyperparameter
templates below are this project's own data, written from the rounds' closed-division rules.

Layout written under DIR:
    manifest.json                       {"logs": [{"path", "ruleset", "usage", "benchmark", "variant"}],
                                         "packages": [{"path", "ruleset", "usage"}], "counts": {...}}
    training_X/logs/<benchmark>/<variant>.txt
    training_X/GenOrg/systems/<system>.json
    training_X/GenOrg/results/<system>/<benchmark>/result_N.txt
    hpc_X/logs/<benchmark>/<variant>.txt
    hpc_X/GenHpcOrg/systems/<system>.json
    hpc_X/GenHpcOrg/results/<system>/{strong,weak}/<benchmark>/result_N.txt

Standard library only, deterministic (same bytes on every run).
"""

import argparse
import json
import math
import os
import re

ROUNDS = ['3.0.0', '3.1.0', '4.0.0', '4.1.0', '5.0.0', '5.1.0']
OLD_ROUNDS = ['0.7.0', '1.0.0', '1.1.0', '2.0.0', '2.1.0']

BENCHMARKS = {
    '3.0.0': ['bert', 'dlrm_dcnv2', 'gpt3', 'maskrcnn', 'resnet', 'ssd', 'rnnt', 'unet3d'],
    '3.1.0': ['bert', 'dlrm_dcnv2', 'gpt3', 'maskrcnn', 'resnet', 'ssd', 'rnnt', 'unet3d', 'stable_diffusion'],
    '4.0.0': ['bert', 'dlrm_dcnv2', 'gpt3', 'resnet', 'ssd', 'unet3d', 'stable_diffusion', 'llama2_70b_lora', 'gnn'],
    '4.1.0': ['bert', 'dlrm_dcnv2', 'gpt3', 'ssd', 'stable_diffusion', 'llama2_70b_lora', 'gnn'],
    '5.0.0': ['bert', 'dlrm_dcnv2', 'retinanet', 'stable_diffusion', 'llama2_70b_lora', 'rgat', 'llama31_405b'],
    '5.1.0': ['llama31_8b', 'dlrm_dcnv2', 'retinanet', 'flux1', 'llama2_70b_lora', 'rgat', 'llama31_405b'],
}

RUN_COUNTS = {'bert': 10, 'dlrm_dcnv2': 10, 'gpt3': 3, 'maskrcnn': 5, 'resnet': 5, 'ssd': 5, 'retinanet': 5,
              'unet3d': 40, 'rnnt': 10, 'stable_diffusion': 10, 'gnn': 10, 'rgat': 10, 'llama2_70b_lora': 10,
              'llama31_405b': 3, 'llama31_8b': 10, 'flux1': 10}

# Benchmarks whose convergence point is the eval line's samples_count (the others: epoch_num).
SAMPLES_UNIT = {'llama2_70b_lora', 'flux1', 'llama31_405b', 'llama31_8b'}

# Per benchmark: hyperparameters logged once (in order; the rules of some read earlier ones),
# the accuracy that meets the target and one that does not, and one closed-division check to
# break ('bad': key and a value its rule rejects).
TEMPLATES = {
    'resnet': dict(
        hp=[('opt_name', 'lars'), ('lars_opt_base_learning_rate', 10.5), ('lars_opt_end_learning_rate', 0.0001),
            ('lars_opt_learning_rate_decay_poly_power', 2), ('lars_opt_learning_rate_decay_steps', 1000),
            ('lars_epsilon', 0.0), ('lars_opt_learning_rate_warmup_epochs', 2), ('lars_opt_momentum', 0.9),
            ('lars_opt_weight_decay', 0.0002)],
        good=0.7601, poor=0.7012, bad=('lars_opt_end_learning_rate', 0.001)),
    'ssd': dict(
        hp=[('opt_name', 'adam'), ('opt_base_learning_rate', 0.0001), ('opt_weight_decay', 0.0),
            ('opt_learning_rate_warmup_epochs', 1.0), ('opt_learning_rate_warmup_factor', 0.001)],
        good=0.3412, poor=0.2511, bad=('opt_weight_decay', 0.1)),
    'maskrcnn': dict(
        hp=[('opt_base_learning_rate', 0.04), ('opt_learning_rate_warmup_steps', 800),
            ('opt_learning_rate_warmup_factor', 0.0001), ('num_image_candidates', 6000),
            ('opt_learning_rate_decay_factor', 0.1), ('opt_learning_rate_decay_steps', [12000, 16000]),
            ('min_image_size', 800), ('max_image_size', 1333)],
        good={'BBOX': 0.3781, 'SEGM': 0.3402}, poor={'BBOX': 0.3501, 'SEGM': 0.3102},
        bad=('opt_learning_rate_decay_factor', 0.2)),
    'bert': dict(
        hp=[('opt_base_learning_rate', 0.002), ('opt_lamb_epsilon', 1e-06), ('opt_learning_rate_training_steps', 7100),
            ('opt_learning_rate_warmup_steps', 0), ('num_warmup_steps', 0), ('start_warmup_step', 0),
            ('opt_lamb_beta_1', 0.9), ('opt_lamb_beta_2', 0.999), ('opt_lamb_weight_decay_rate', 0.01)],
        good=0.7215, poor=0.7012, bad=None),
    'rnnt': dict(
        hp=[('opt_name', 'lamb'), ('opt_base_learning_rate', 0.004), ('opt_lamb_epsilon', 1e-9),
            ('opt_lamb_learning_rate_decay_poly_power', 0.939), ('opt_lamb_learning_rate_hold_epochs', 40),
            ('opt_learning_rate_warmup_epochs', 6), ('opt_weight_decay', 1e-3), ('opt_lamb_beta_1', 0.9),
            ('opt_lamb_beta_2', 0.999), ('opt_gradient_clip_norm', 1), ('opt_learning_rate_alt_decay_func', True),
            ('opt_learning_rate_alt_warmup_func', True), ('opt_lamb_learning_rate_min', 1e-5),
            ('data_train_max_duration', 16.7), ('data_train_num_buckets', 6), ('data_speed_perturbaton_min', 0.85),
            ('data_speed_perturbaton_max', 1.15), ('data_spec_augment_freq_n', 2), ('data_spec_augment_freq_min', 0),
            ('data_spec_augment_freq_max', 20), ('data_spec_augment_time_n', 10), ('data_spec_augment_time_min', 0),
            ('data_spec_augment_time_max', 0.03), ('model_eval_ema_factor', 0.999),
            ('eval_max_prediction_symbols', 300)],
        eval_samples=2703, good=0.0571, poor=0.1202, bad=('eval_max_prediction_symbols', 200)),
    'gpt3': dict(
        hp=[('max_sequence_length', 2048), ('opt_name', 'adam'), ('opt_base_learning_rate', 2e-5),
            ('opt_end_learning_rate', 2e-6), ('opt_learning_rate_decay_steps', 1000),
            ('opt_learning_rate_warmup_steps', 100), ('opt_learning_rate_decay_schedule', 'cosine with linear warmup'),
            ('opt_adam_beta_1', 0.9), ('opt_adam_beta_2', 0.95), ('opt_adam_epsilon', 1e-8),
            ('opt_gradient_clip_norm', 1.0), ('init_checkpoint_step', 4000)],
        good=2.681, poor=2.912, bad=('opt_adam_beta_2', 0.999)),
    'dlrm_dcnv2': dict(
        hp=[('opt_name', 'adagrad'), ('opt_base_learning_rate', 0.004), ('opt_adagrad_learning_rate_decay', 0),
            ('opt_weight_decay', 0), ('opt_adagrad_initial_accumulator_value', 0), ('opt_adagrad_epsilon', 1e-8),
            ('opt_learning_rate_warmup_steps', 0), ('opt_learning_rate_decay_start_step', 0),
            ('opt_learning_rate_decay_steps', 0)],
        eval_samples=89137319, good=0.80301, poor=0.79012, bad=('opt_weight_decay', 0.1)),
    'unet3d': dict(
        hp=[('opt_name', 'sgd'), ('opt_base_learning_rate', 2.0), ('opt_learning_rate_warmup_epochs', 1000),
            ('opt_learning_rate_decay_boundary_epochs', []), ('opt_learning_rate_decay_factor', 1.0),
            ('opt_weight_decay', 0.0), ('opt_momentum', 0.9), ('oversampling', 0.4),
            ('training_input_shape', [128, 128, 128]), ('validation_input_shape', [128, 128, 128]),
            ('validation_overlap', 0.5)],
        train_samples=168, eval_samples=42, good=0.9101, poor=0.8502, bad=('eval_samples', 40)),
    'stable_diffusion': dict(
        hp=[('opt_name', 'adamw'), ('opt_adamw_beta_1', 0.9), ('opt_adamw_beta_2', 0.999),
            ('opt_adamw_epsilon', 1e-08), ('opt_adamw_weight_decay', 0.01), ('opt_base_learning_rate', 1.25e-7),
            ('opt_learning_rate_warmup_steps', 1000)],
        good={'FID': 88.5, 'CLIP': 0.152}, poor={'FID': 120.25, 'CLIP': 0.121}, bad=('opt_adamw_weight_decay', 0.1)),
    'gnn': dict(hp=[('opt_name', 'adam'), ('opt_base_learning_rate', 0.001)], good=0.7301, poor=0.7012,
                bad=('opt_name', 'sgd')),
    'llama2_70b_lora': dict(
        hp=[('opt_base_learning_rate', 4e-4), ('lora_alpha', 32), ('opt_learning_rate_training_steps', 1024),
            ('opt_gradient_clip_norm', 0.3), ('opt_adamw_weight_decay', 0.0001), ('lora_rank', 16)],
        good=0.9201, poor=0.9512, bad=('lora_rank', 8)),
    'llama31_405b': dict(
        hp=[('max_sequence_length', 8192), ('opt_name', 'adamw'), ('opt_base_learning_rate', 'LR405'),
            ('opt_end_learning_rate', 8e-7), ('opt_learning_rate_warmup_steps', 'WARMUP405'),
            ('opt_learning_rate_decay_steps', 'DECAY405'),
            ('opt_learning_rate_decay_schedule', 'cosine with linear warmup'), ('opt_adamw_beta_1', 0.9),
            ('opt_adamw_beta_2', 0.95), ('opt_adamw_epsilon', 1e-05), ('opt_adamw_weight_decay', 0.1),
            ('opt_gradient_clip_norm', 1.0), ('init_checkpoint_step', 0)],
        eval_samples=5760, good=5.52, poor=5.81, bad=('opt_adamw_epsilon', 1e-08)),
    'llama31_8b': dict(
        hp=[('max_sequence_length', 8192), ('opt_name', 'adamw'), ('opt_base_learning_rate', 1e-3),
            ('opt_end_learning_rate', 1e-4), ('opt_learning_rate_warmup_steps', 100),
            ('opt_learning_rate_decay_steps', 1199900),
            ('opt_learning_rate_decay_schedule', 'cosine with linear warmup'), ('opt_adamw_beta_1', 0.9),
            ('opt_adamw_beta_2', 0.95), ('opt_adamw_epsilon', 1e-05), ('opt_adamw_weight_decay', 0.1),
            ('opt_gradient_clip_norm', 1.0), ('max_steps', 1200000)],
        eval_samples=1024, good=3.251, poor=3.512, bad=('max_steps', 1000)),
    'flux1': dict(
        hp=[('evaluation_frequency', 262144), ('opt_name', 'adamw'), ('opt_adamw_beta_1', 0.9),
            ('opt_adamw_beta_2', 0.95), ('opt_adamw_epsilon', 1e-08), ('opt_adamw_weight_decay', 0.1),
            ('opt_base_learning_rate', 1e-4), ('opt_learning_rate_warmup_steps', 0), ('opt_gradient_clip_norm', 1.0)],
        good=0.5801, poor=0.6123, bad=('evaluation_frequency', 1000)),
}
TEMPLATES['retinanet'] = TEMPLATES['ssd']
TEMPLATES['rgat'] = TEMPLATES['gnn']

# Variants of a single log. Each is a compliant log with one thing changed.
LOG_VARIANTS = ['compliant', 'missing_key', 'bad_hyperparameter', 'not_converged', 'aborted', 'init_too_long',
                'open_division', 'second_run_start', 'bad_status', 'no_seed', 'eval_before_run_start',
                'unknown_benchmark', 'parse_error', 'eval_after_target', 'duplicate_hp_same', 'duplicate_hp_different',
                'float_times', 'prefixed_lines', 'noise_lines', 'crlf', 'no_run_stop_status', 'empty']


def conv_unit(benchmark, ruleset):
    if benchmark == 'stable_diffusion':
        return 'step_num' if ruleset == '3.1.0' else 'samples_count'
    return 'samples_count' if benchmark in SAMPLES_UNIT else 'epoch_num'


def olympic_mean(values, benchmark):
    v = sorted(values)
    k = 4 if benchmark == 'unet3d' else 1
    v = v[k:len(v) - k]
    return sum(v) / len(v)


def rcp_choice(rules_root, ruleset, benchmark):
    """The batch size of the reference with the fastest convergence (never pruned) and its mean."""
    path = os.path.join(rules_root, 'rcp_checker', 'training_' + ruleset, 'rcps_%s.json' % benchmark)
    with open(path) as f:
        table = json.load(f)
    unit = 'samples to converge' if benchmark in ('llama2_70b_lora', 'flux1') else 'Epochs to converge'
    best = None
    for rec in table.values():
        mean = olympic_mean(rec[unit], benchmark)
        if best is None or mean < best[1]:
            e = rec[unit]
            best = (rec['BS'], mean, max(e) != min(e))
    sizes = sorted(rec['BS'] for rec in table.values())
    return best[0], best[1], sizes, best[2]


def status_for(ruleset):
    return 'Available cloud' if ruleset >= '4.0.0' else 'cloud'


class Log:
    def __init__(self, t0):
        self.now = t0
        self.lines = []
        self.lineno = 100

    def ev(self, etype, key, value, **meta):
        self.lineno += 1
        md = {'file': 'train.py', 'lineno': self.lineno}
        md.update(meta)
        rec = {'namespace': '', 'time_ms': self.now, 'event_type': etype, 'key': key, 'value': value, 'metadata': md}
        self.lines.append(':::MLLOG ' + json.dumps(rec))

    def point(self, key, value, **meta):
        self.ev('POINT_IN_TIME', key, value, **meta)

    def start(self, key, **meta):
        self.ev('INTERVAL_START', key, None, **meta)

    def stop(self, key, **meta):
        self.ev('INTERVAL_END', key, None, **meta)

    def tick(self, ms):
        self.now += int(ms)

    def text(self):
        return '\n'.join(self.lines) + '\n'


def hyperparameters(benchmark, bs, tpl=None):
    out = []
    for k, v, *meta in (tpl or TEMPLATES[benchmark])['hp']:
        if v == 'LR405':
            v = bs * 8e-5 / 1152
        elif v == 'WARMUP405':
            v = math.ceil(8000 * 1152 / bs)
        elif v == 'DECAY405':
            v = math.ceil(1_200_000 * 1152 / bs) - math.ceil(8000 * 1152 / bs)
        out.append((k, v, meta[0] if meta else {}))
    return out


def write_log(ruleset, benchmark, bs, conv, run, variant='compliant', division='closed', seed=None,
              duration_ms=None, evals=3, tpl=None, tensors=()):
    """One result log. conv: the convergence point in the benchmark's unit. tpl: the template
    (default TEMPLATES[benchmark]); tensors: the weights_initialization records the rules of
    rounds 1.0 to 2.1 require."""
    tpl = tpl or TEMPLATES[benchmark]
    t0 = 1700000000000 + run * 10_000_000
    L = Log(t0)
    L.point('cache_clear', True)
    L.start('init_start')
    L.point('submission_org', 'GenOrg')
    L.point('submission_platform', 'gen_system')
    L.point('submission_division', division)
    L.point('submission_status', 'bad' if variant == 'bad_status' else 'cloud')
    L.point('submission_benchmark', 'nosuchbench' if variant == 'unknown_benchmark' else benchmark)
    if variant != 'no_seed':
        L.point('seed', seed if seed is not None else 1000 + run)
    L.point('global_batch_size', bs)
    L.point('gradient_accumulation_steps', 1)
    L.point('train_samples', tpl.get('train_samples', 1000000))
    bad = tpl.get('bad')
    missing = tpl['hp'][-1][0] if variant == 'missing_key' else None
    for k, v, meta in hyperparameters(benchmark, bs, tpl):
        if k == missing:
            continue
        if variant == 'bad_hyperparameter' and bad and k == bad[0]:
            v = bad[1]
        L.point(k, v, **meta)
    for name in tensors[:-1] if variant == 'no_weights_init' else tensors:
        L.point('weights_initialization', None, tensor=name)
    es = tpl.get('eval_samples', 10000)
    if variant == 'bad_hyperparameter' and bad and bad[0] == 'eval_samples':
        es = bad[1]
    L.point('eval_samples', es)
    if variant == 'parse_error':
        L.lines.append(':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "x"')
    L.tick(31 * 60 * 1000 if variant == 'init_too_long' else 60_000)
    L.stop('init_stop')
    if variant == 'eval_before_run_start':
        L.point('eval_accuracy', 0.0, epoch_num=0, samples_count=0)
    L.tick(1000)
    L.start('run_start')
    unit = conv_unit(benchmark, ruleset)
    total = duration_ms if duration_ms is not None else 600_000 + run * 7_000
    good, poor = tpl['good'], tpl['poor']
    for i in range(1, evals + (2 if variant == 'eval_after_target' else 1)):
        point = conv * i / evals
        if unit == 'epoch_num':
            point = round(point, 3)
        else:
            point = int(math.ceil(point))
        md = {'epoch_num': point if unit == 'epoch_num' else i}
        if unit != 'epoch_num':
            md[unit] = point
        L.start('block_start', first_epoch_num=md['epoch_num'], epoch_count=1, samples_count=point)
        L.start('epoch_start', epoch_num=md['epoch_num'], samples_count=point)
        L.tick(total / evals / 2)
        L.stop('epoch_stop', epoch_num=md['epoch_num'], samples_count=point)
        L.start('eval_start', **md)
        reached = i == evals and variant != 'not_converged'
        acc = good if reached else poor
        if benchmark == 'stable_diffusion':
            for metric in ('FID', 'CLIP'):
                L.point('eval_accuracy', acc[metric], metric=metric, **md)
        else:
            L.point('eval_accuracy', acc, **md)
        L.stop('eval_stop', **md)
        L.stop('block_stop', first_epoch_num=md['epoch_num'], samples_count=point)
        if variant == 'second_run_start' and i == 1:
            L.start('run_start')
        L.tick(total / evals / 2)
    status = 'aborted' if variant in ('aborted', 'not_converged') else 'success'
    if variant == 'no_run_stop_status':
        L.stop('run_stop')
    else:
        L.stop('run_stop', status=status)
    if variant == 'duplicate_hp_same':
        L.lines.insert(12, L.lines[11])
    if variant == 'duplicate_hp_different':
        L.lines.insert(12, L.lines[11].replace('"value": ', '"value": [', 1).replace(', "metadata"', '], "metadata"', 1))
    if variant == 'empty':
        return ''
    text = L.text()
    if variant == 'float_times':
        text = re.sub(r'"time_ms": (\d+)', lambda m: '"time_ms": %s.25' % m.group(1), text)
    if variant == 'prefixed_lines':
        text = ''.join('[1,0]<stdout>:' + line + '\n' for line in text.splitlines())
    if variant == 'noise_lines':
        text = ''.join(line + '\nstep loss 1.2345 :::MLL not a record\n' for line in text.splitlines())
    if variant == 'crlf':
        text = text.replace('\n', '\r\n')
    return text


def system_json(name, division, ruleset, status=None, numeric=False):
    d = {
        'submitter': 'GenOrg', 'division': division, 'status': status or status_for(ruleset),
        'system_name': name, 'number_of_nodes': '2', 'host_processors_per_node': '2',
        'host_processor_model_name': 'Gen CPU 9000', 'host_processor_core_count': '64',
        'host_processor_vcpu_count': '128', 'host_processor_frequency': '2.0GHz', 'host_processor_caches': '',
        'host_processor_interconnect': '', 'host_memory_capacity': '2 TB', 'host_storage_type': 'NVMe SSD',
        'host_storage_capacity': '8 TB', 'host_networking': '', 'host_networking_topology': '',
        'host_memory_configuration': '', 'accelerators_per_node': '8', 'accelerator_model_name': 'Gen Accel 80GB',
        'accelerator_host_interconnect': '', 'accelerator_frequency': '', 'accelerator_on-chip_memories': '',
        'accelerator_memory_configuration': 'HBM3', 'accelerator_memory_capacity': '80 GB',
        'accelerator_interconnect': '', 'accelerator_interconnect_topology': '', 'cooling': '', 'hw_notes': '',
        'framework': 'GenFramework 1.0', 'other_software_stack': '', 'operating_system': 'Linux', 'sw_notes': '',
    }
    if numeric:
        for k in ('number_of_nodes', 'host_processors_per_node', 'host_processor_core_count', 'accelerators_per_node'):
            d[k] = int(d[k])
    return json.dumps(d, indent=4) + '\n'


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


# Package variants: a system per variant; each benchmark gets 'closed' and 'open' and one
# more variant in turn, so that every variant meets several benchmarks without checking
# every pair (the consortium's checker runs three times per directory: keep the test short).
PACKAGE_VARIANTS = ['rcp_too_fast', 'rcp_scaled', 'one_bad_file', 'two_bad_files', 'wrong_count',
                    'duplicate_seeds', 'not_converged_runs', 'rcp_interpolated', 'rcp_missing_bs', 'relaunched',
                    'published_scaling', 'rcp_bypass', 'rcp_bypass_newline', 'extra_file', 'string_seed', 'one_aborted',
                    'division_mismatch', 'eval_after_target', 'float_times', 'prefixed_lines', 'crlf']

# Power results go to a package of their own (GenOrgPower): the consortium's summarizer stops
# with an AssertionError on a run without power files, which would hide every other score.
POWER_VARIANTS = ['power', 'power_one_missing', 'power_two_missing', 'power_bad_name', 'power_node_count',
                  'power_no_stop']

# Files beside the result files, per variant. The consortium compares each line of
# package_checker_params with "rcp-bypass" as read by readlines(), newline included: only a
# last line without a newline takes effect.
DIR_EXTRAS = {
    'published_scaling': {'scaling.json': '{"scaling_factor": 1.25}'},
    'rcp_bypass': {'package_checker_params': 'rcp-bypass'},
    'rcp_bypass_newline': {'package_checker_params': 'rcp-bypass\n'},
    'extra_file': {'notes.txt': 'not a result\n'},
}


def power_files(variant, n, start_ms=1700000000000):
    """{relative path: text} of the power/ folder for n runs: two nodes and a switch per run."""
    out = {}
    for r in range(n):
        if variant == 'power_one_missing' and r == 1:
            continue
        if variant == 'power_two_missing' and r in (1, 2):
            continue
        nodes = ['node_0', 'node_1']
        if variant == 'power_bad_name' and r == 0:
            nodes = ['node_0', 'node_5']
        if variant == 'power_node_count' and r == 3:
            nodes = ['node_0']
        t0 = start_ms + r * 10_000_000 + 61_000
        for k, node in enumerate(nodes):
            L = Log(t0)
            L.point('power_measurement_start', None)
            for i in range(6):
                L.tick(100_000)
                L.point('power_reading', 5200.0 + 37.5 * i + 11 * k + r, unit='W')
            if variant != 'power_no_stop':
                L.tick(1000)
                L.point('power_measurement_stop', None)
            if k == 1:
                L.point('conversion_eff', 0.95)
            out['power/result_%d/%s.txt' % (r, node)] = L.text()
        L = Log(t0)
        L.point('conversion_eff', 0.9)
        L.point('interconnect_power_est', 850.0 + r)
        out['power/result_%d/sw_0.txt' % r] = L.text()
    return out


def package_dir_logs(ruleset, benchmark, bs, mean, sizes, variant, spread=True):
    n = RUN_COUNTS[benchmark]
    unit = conv_unit(benchmark, ruleset)
    scale = {'rcp_too_fast': 0.5, 'rcp_scaled': 0.995, 'rcp_bypass': 0.5, 'rcp_bypass_newline': 0.5}.get(variant, 1.0)
    if variant == 'rcp_scaled' and not spread:
        scale = 1.0  # a reference whose runs all converged alike allows no speedup at all
    if variant == 'rcp_scaled' and benchmark == 'llama31_405b':
        scale = 1 - 20000 / mean  # within the 46080 samples that its own formula allows from 5.0.0
    if variant == 'rcp_interpolated' and len(sizes) > 1:
        bigger = [s for s in sizes if s > bs]
        bs = (bs + bigger[0]) // 2 if bigger and bigger[0] - bs > 1 else bs
        scale = 1.3
    if variant == 'rcp_missing_bs':
        bs = sizes[-1] * 2
    if variant == 'wrong_count':
        n -= 1
    logs = []
    for r in range(n):
        # Slightly different convergence per run, except where the olympic mean must stay just
        # under the reference's (a normalisation factor within the allowed speedup).
        conv = mean * scale * (1 + (0 if variant == 'rcp_scaled' else 0.002 * (r % 5)))
        if unit == 'epoch_num':
            conv = math.ceil(conv * 1000) / 1000
        v = 'compliant'
        if variant == 'one_bad_file' and r == 1:
            v = 'bad_hyperparameter' if TEMPLATES[benchmark]['bad'] else 'missing_key'
        if variant == 'two_bad_files' and 1 <= r <= (5 if benchmark == 'unet3d' else 2):  # one more than olympic scoring drops
            v = 'missing_key'
        if variant == 'not_converged_runs' and r < (5 if benchmark == 'unet3d' else 2):  # one more than dropped
            v = 'not_converged'
        if variant == 'relaunched' and r == 2:
            v = 'second_run_start'
        if variant == 'one_aborted' and r == 0:
            v = 'aborted'
        if variant in ('eval_after_target', 'float_times', 'prefixed_lines', 'crlf'):
            v = variant
        seed = 7 if variant == 'duplicate_seeds' and r < 2 else 1000 + r
        if variant == 'string_seed' and r == 0:
            seed = 'abc'
        logs.append(write_log(ruleset, benchmark, bs, conv, r, variant=v, seed=seed,
                              duration_ms=500_000 + 13_000 * ((r * 7) % n)))
    return logs


def generate(rules_root, out, rounds, write_manifest=True):
    manifest = {'logs': [], 'packages': []}
    counts = {}
    for ruleset in rounds:
        base = os.path.join(out, 'training_' + ruleset)
        org = os.path.join(base, 'GenOrg')
        nlogs = 0  # result files in packages
        nsingle = 0
        systems = {'gen_closed': 'closed', 'gen_open': 'open'}
        for i, benchmark in enumerate(BENCHMARKS[ruleset]):
            bs, mean, sizes, spread = rcp_choice(rules_root, ruleset, benchmark)
            conv = math.ceil(mean * 1000) / 1000 if conv_unit(benchmark, ruleset) == 'epoch_num' else math.ceil(mean)
            for variant in LOG_VARIANTS:
                if variant == 'bad_hyperparameter' and not TEMPLATES[benchmark]['bad']:
                    continue
                division = 'open' if variant == 'open_division' else 'closed'
                path = os.path.join(base, 'logs', benchmark, variant + '.txt')
                write(path, write_log(ruleset, benchmark, bs, conv, 0, variant=variant, division=division))
                manifest['logs'].append({'path': path, 'ruleset': ruleset, 'benchmark': benchmark, 'variant': variant})
                nsingle += 1
            k = 2 * i + 3 * ROUNDS.index(ruleset)
            extras = [PACKAGE_VARIANTS[k % len(PACKAGE_VARIANTS)], PACKAGE_VARIANTS[(k + 1) % len(PACKAGE_VARIANTS)]]
            if benchmark == 'llama31_405b' and 'rcp_scaled' not in extras:
                extras.append('rcp_scaled')  # its max speedup has a formula of its own
            for system, variant in [('gen_closed', 'compliant'), ('gen_open', 'compliant')] + [('gen_' + x, x) for x in extras]:
                division = 'open' if system == 'gen_open' else 'closed'
                if variant == 'division_mismatch':
                    systems[system] = 'open'  # the logs say closed
                if division == 'open' and not os.path.exists(os.path.join(
                        rules_root, 'compliance_checker', 'training_' + ruleset, 'open_%s.yaml' % benchmark)):
                    # The consortium's checker raises on such a log and its summarizer then stops for
                    # the whole package; the single open-division log covers the case.
                    continue
                systems.setdefault(system, division)
                logs = package_dir_logs(ruleset, benchmark, bs, mean, sizes, variant, spread)
                for r, text in enumerate(logs):
                    lines = text if division == 'closed' else text.replace('"value": "closed"', '"value": "open"')
                    write(os.path.join(org, 'results', system, benchmark, 'result_%d.txt' % r), lines)
                    nlogs += 1
                for fname, text in DIR_EXTRAS.get(variant, {}).items():
                    write(os.path.join(org, 'results', system, benchmark, fname), text)
        for system, division in systems.items():
            write(os.path.join(org, 'systems', system + '.json'), system_json(system, division, ruleset))
        manifest['packages'].append({'path': org, 'ruleset': ruleset})
        # A second package whose system description has numbers where the consortium expects
        # strings, and an old-style status value.
        org2 = os.path.join(base, 'GenOrgOdd')
        bench = BENCHMARKS[ruleset][0]
        bs, mean, sizes, spread = rcp_choice(rules_root, ruleset, bench)
        for r, text in enumerate(package_dir_logs(ruleset, bench, bs, mean, sizes, 'compliant', spread)):
            write(os.path.join(org2, 'results', 'gen_numeric', bench, 'result_%d.txt' % r), text)
            write(os.path.join(org2, 'results', 'gen_oldstatus', bench, 'result_%d.txt' % r), text)
            nlogs += 2
        write(os.path.join(org2, 'systems', 'gen_numeric.json'), system_json('gen_numeric', 'closed', ruleset, numeric=True))
        write(os.path.join(org2, 'systems', 'gen_oldstatus.json'),
              system_json('gen_oldstatus', 'closed', ruleset, status='onprem'))
        manifest['packages'].append({'path': org2, 'ruleset': ruleset})
        # Two packages on which the consortium's summarizer stops with a traceback: a system
        # description without a field its table needs (NameError in its error path), and a
        # directory of a benchmark the round does not have (its compliance check raises).
        org3 = os.path.join(base, 'GenOrgNoField')
        org4 = os.path.join(base, 'GenOrgStale')
        stale = 'resnet' if 'resnet' not in BENCHMARKS[ruleset] else 'flux1'
        for r, text in enumerate(package_dir_logs(ruleset, bench, bs, mean, sizes, 'compliant', spread)):
            write(os.path.join(org3, 'results', 'gen_nofield', bench, 'result_%d.txt' % r), text)
            write(os.path.join(org4, 'results', 'gen_stale', bench, 'result_%d.txt' % r), text)
            write(os.path.join(org4, 'results', 'gen_stale', stale, 'result_%d.txt' % r),
                  text.replace('"value": "%s"' % bench, '"value": "%s"' % stale))
            nlogs += 3
        desc = json.loads(system_json('gen_nofield', 'closed', ruleset))
        del desc['hw_notes']
        write(os.path.join(org3, 'systems', 'gen_nofield.json'), json.dumps(desc, indent=4) + '\n')
        write(os.path.join(org4, 'systems', 'gen_stale.json'), system_json('gen_stale', 'closed', ruleset))
        manifest['packages'].append({'path': org3, 'ruleset': ruleset})
        manifest['packages'].append({'path': org4, 'ruleset': ruleset})
        # Power: every variant on a benchmark of the round (a different one each round).
        # Runs without power files stop the summarizer: those variants get a package of their own.
        org5 = os.path.join(base, 'GenOrgPower')
        org6 = os.path.join(base, 'GenOrgPowerMissing')
        candidates = [b for b in BENCHMARKS[ruleset] if b != 'unet3d']  # 40 runs a directory: too slow here
        pbench = candidates[-1 - ROUNDS.index(ruleset) % len(candidates)]
        bs, mean, sizes, spread = rcp_choice(rules_root, ruleset, pbench)
        logs = package_dir_logs(ruleset, pbench, bs, mean, sizes, 'compliant', spread)
        for variant in POWER_VARIANTS:
            system = 'gen_' + variant
            org5 = os.path.join(base, 'GenOrgPowerMissing' if 'missing' in variant else 'GenOrgPower')
            d = os.path.join(org5, 'results', system, pbench)
            for r, text in enumerate(logs):
                write(os.path.join(d, 'result_%d.txt' % r), text)
                nlogs += 1
            for fname, text in power_files(variant, len(logs)).items():
                write(os.path.join(d, fname), text)
            write(os.path.join(org5, 'systems', system + '.json'), system_json(system, 'closed', ruleset))
        manifest['packages'].append({'path': os.path.join(base, 'GenOrgPower'), 'ruleset': ruleset})
        manifest['packages'].append({'path': org6, 'ruleset': ruleset})
        counts[ruleset] = {'single_logs': nsingle, 'package_logs': nlogs, 'packages': 6}
    manifest['counts'] = counts
    if write_manifest:
        write(os.path.join(out, 'manifest.json'), json.dumps(manifest, indent=1) + '\n')
    return manifest



# ====================================================================== training rounds 0.7 to 2.1
# Written in each round's style: its benchmarks (gnmt, transformer and the first ssd in 0.7,
# dlrm and minigo up to 2.1, rnnt and unet3d from 1.0), its closed-division hyperparameters
# (compliance_checker/training_X/closed_*.yaml) and, from 1.1 on (rnnt from 1.0), one
# weights_initialization record per tensor that the round's rules list (read from the rule file:
# the lists run to hundreds of names).

OLD_BENCHMARKS = {
    '0.7.0': ['bert', 'dlrm', 'gnmt', 'maskrcnn', 'minigo', 'resnet', 'ssd', 'transformer'],
    '1.0.0': ['bert', 'dlrm', 'maskrcnn', 'minigo', 'resnet', 'ssd', 'rnnt', 'unet3d'],
    '1.1.0': ['bert', 'dlrm', 'maskrcnn', 'minigo', 'resnet', 'ssd', 'rnnt', 'unet3d'],
    '2.0.0': ['bert', 'dlrm', 'maskrcnn', 'minigo', 'resnet', 'ssd', 'rnnt', 'unet3d'],
    '2.1.0': ['bert', 'dlrm', 'maskrcnn', 'minigo', 'resnet', 'ssd', 'rnnt', 'unet3d'],
}
OLD_RUN_COUNTS = {'bert': 10, 'dlrm': 5, 'gnmt': 10, 'maskrcnn': 5, 'minigo': 10, 'resnet': 5, 'ssd': 5,
                  'transformer': 10, 'rnnt': 10, 'unet3d': 40}

_BERT_HP = [('opt_base_learning_rate', 0.0004), ('opt_epsilon', 1e-06), ('opt_learning_rate_training_steps', 7100),
            ('opt_learning_rate_warmup_steps', 0), ('num_warmup_steps', 0), ('start_warmup_step', 0),
            ('opt_lamb_beta_1', 0.9), ('opt_lamb_beta_2', 0.999), ('opt_lamb_weight_decay_rate', 0.01)]
OLD_TEMPLATES = {
    'bert': dict(hp=_BERT_HP, good=0.7215, poor=0.7012, bad=None),
    'dlrm': dict(hp=[('opt_base_learning_rate', 24.0), ('opt_learning_rate_warmup_steps', 2750),
                     ('lr_decay_start_steps', 49315), ('sgd_opt_base_learning_rate', 24.0),
                     ('sgd_opt_learning_rate_decay_steps', 27772), ('sgd_opt_learning_rate_decay_poly_power', 2)],
                 eval_samples=89137319, good=0.80261, poor=0.79012, bad=('sgd_opt_learning_rate_decay_poly_power', 3)),
    'gnmt': dict(hp=[('opt_base_learning_rate', 0.002), ('opt_learning_rate_alt_decay_func', True),
                     ('opt_learning_rate_decay_factor', 0.5), ('opt_learning_rate_decay_interval', 809),
                     ('opt_learning_rate_decay_steps', 4), ('opt_learning_rate_remain_steps', 6453),
                     ('max_sequence_length', 75), ('opt_learning_rate_alt_warmup_func', True),
                     ('opt_learning_rate_warmup_steps', 200)],
                 good=0.2412, poor=0.2213, bad=None),
    'maskrcnn': dict(TEMPLATES['maskrcnn']),
    'minigo': dict(hp=[('train_batch_size', 8192), ('lr_boundaries', [3000, 5000]), ('lr_rates', [0.32, 0.032, 0.0032]),
                       ('actual_selfplay_games_per_generation', 8192), ('min_selfplay_games_per_generation', 8192)],
                   good=0.5201, poor=0.4512, bad=('min_selfplay_games_per_generation', 4096)),
    'resnet': dict(TEMPLATES['resnet']),
    'ssd': dict(hp=[('model_bn_span', 32), ('opt_learning_rate_warmup_factor', 0), ('opt_learning_rate_warmup_steps', 300),
                    ('opt_weight_decay', 0.0005), ('opt_base_learning_rate', 0.003),
                    ('opt_learning_rate_decay_boundary_epochs', [40, 50]), ('max_samples', 1)],
                good=0.2312, poor=0.2011, bad=('max_samples', 10)),
    'transformer': dict(hp=[('opt_name', 'adam'), ('opt_base_learning_rate', 0.002), ('opt_learning_rate_warmup_steps', 500),
                            ('opt_adam_beta_1', 0.9), ('opt_adam_beta_2', 0.98),
                            ('max_sequence_length', 256, {'method': 'discard'}), ('opt_adam_epsilon', 1e-09)],
                        good=0.2512, poor=0.2413, bad=('opt_adam_epsilon', 1e-08)),
    'rnnt': dict(TEMPLATES['rnnt']),
    'unet3d': dict(TEMPLATES['unet3d']),
}
OLD_TEMPLATES['rnnt']['hp'] = [hp for hp in TEMPLATES['rnnt']['hp']] + [('model_weights_initialization_scale', 1.0)]
# The maskrcnn rule reads global_batch_size before opt_base_learning_rate from 2.0 on.


def old_template(ruleset, benchmark):
    tpl = dict(OLD_TEMPLATES[benchmark])
    if benchmark == 'ssd' and ruleset >= '2.0.0':
        tpl = dict(TEMPLATES['ssd'], good=0.3412)  # 2.0 replaced SSD (adam, mAP 0.34)
    if benchmark == 'bert' and ruleset == '2.1.0':
        # Today's rules of 2.1 ask for opt_lamb_epsilon, the 2.1.0 release's for opt_epsilon: both.
        tpl['hp'] = [('opt_lamb_epsilon', 1e-06)] + _BERT_HP
    if benchmark == 'rnnt' and ruleset >= '1.1.0':
        tpl['hp'] = [hp for hp in tpl['hp']]
    return tpl


def required_tensors(rules_root, ruleset, benchmark):
    """The tensor names of the END check of closed_<benchmark>.yaml (comments skipped), or ()."""
    path = os.path.join(rules_root, 'compliance_checker', 'training_' + ruleset, 'closed_%s.yaml' % benchmark)
    with open(path) as f:
        text = ''.join(line for line in f if not line.lstrip().startswith('#'))
    if 'weights_initialization' not in text or '- END:' not in text:
        return ()
    m = re.search(r'sorted\(\[(.*?)\]\)', text[text.index('- END:'):], re.S)
    return tuple(re.findall(r'["\']([^"\']+)["\']', m.group(1))) if m else ()


OLD_RELEASES = {'0.7.0': '0.7.1', '1.0.0': '1.0.0', '1.1.0': '1.1.0-rc4', '2.0.0': '2.0.0', '2.1.0': '2.1.0'}


def release_rcp_sizes(rules_root, ruleset, benchmark):
    """The batch sizes of the references that the round's own release had (its RCP checker is
    the second oracle; later releases added references), or None where it is not beside
    rules_root (<root>/logging/mlperf_logging and <root>/logging-history/<tag>/mlperf_logging)."""
    tag = OLD_RELEASES.get(ruleset)
    if not tag:
        return None
    history = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(rules_root))), 'logging-history', tag,
                           'mlperf_logging', 'rcp_checker')
    for folder in ('training_' + ruleset, ruleset):
        path = os.path.join(history, folder, 'rcps_%s.json' % benchmark)
        if os.path.exists(path):
            with open(path) as f:
                return {rec['BS'] for rec in json.load(f).values()}
    return None


def old_rcp_choice(rules_root, ruleset, benchmark):
    """As rcp_choice, among the references the round's release has too, where the round has a
    reference for the benchmark; else a batch size and a convergence point of this generator's
    choice (0.7, minigo: no RCP check)."""
    path = os.path.join(rules_root, 'rcp_checker', 'training_' + ruleset, 'rcps_%s.json' % benchmark)
    if not os.path.exists(path):
        return 1024, 12.5, [1024], True
    with open(path) as f:
        table = json.load(f)
    keep = release_rcp_sizes(rules_root, ruleset, benchmark)
    best = None
    for rec in table.values():
        if keep is not None and rec['BS'] not in keep:
            continue
        e = rec['Epochs to converge']
        mean = olympic_mean(e, benchmark)
        if best is None or mean < best[1]:
            best = (rec['BS'], mean, max(e) != min(e))
    sizes = sorted(rec['BS'] for rec in table.values())
    return best[0], best[1], sizes, best[2]


OLD_LOG_VARIANTS = ['compliant', 'missing_key', 'bad_hyperparameter', 'not_converged', 'aborted', 'init_too_long',
                    'open_division', 'no_seed', 'bad_status', 'unknown_benchmark', 'parse_error', 'eval_after_target',
                    'no_weights_init', 'crlf', 'prefixed_lines', 'no_run_stop_status', 'empty']
# A passing directory per benchmark in gen_closed and gen_open, and one variant in turn (unet3d,
# 40 runs a directory, gets gen_closed alone).
OLD_PACKAGE_VARIANTS = ['rcp_too_fast', 'one_bad_file', 'two_bad_files', 'wrong_count', 'duplicate_seeds',
                        'no_seeds', 'rcp_scaled', 'not_converged_runs']


def old_expect_log(ruleset, variant):
    """What both oracles must say of a single log (None: no expectation)."""
    if variant == 'no_weights_init':
        return None  # compliant where the round lists no tensor
    return {'compliant': True, 'missing_key': False, 'bad_hyperparameter': False, 'not_converged': False,
            'init_too_long': False, 'parse_error': False, 'eval_after_target': True, 'crlf': True,
            'prefixed_lines': True, 'no_run_stop_status': False, 'empty': False}.get(variant)


def old_expect_dir(ruleset, variant):
    return {'closed': 'pass', 'open': 'pass', 'two_bad_files': 'fail', 'not_converged_runs': 'fail',
            'rcp_too_fast': None if ruleset == '0.7.0' else 'fail'}.get(variant)


def old_dir_logs(ruleset, benchmark, bs, mean, sizes, variant, tensors, spread=True, division='closed'):
    n = OLD_RUN_COUNTS[benchmark]
    tpl = old_template(ruleset, benchmark)
    scale = {'rcp_too_fast': 0.5, 'rcp_scaled': 0.995}.get(variant, 1.0)
    if variant == 'rcp_scaled' and not spread:
        scale = 1.0
    if variant == 'wrong_count':
        n -= 1
    logs = []
    for r in range(n):
        conv = mean * scale * (1 + (0 if variant == 'rcp_scaled' else 0.002 * (r % 5)))
        conv = math.ceil(conv * 1000) / 1000
        v = 'compliant'
        if variant == 'one_bad_file' and r == 1:
            v = 'bad_hyperparameter' if tpl['bad'] else 'missing_key'
        if variant == 'two_bad_files' and 1 <= r <= (5 if benchmark == 'unet3d' else 2):
            v = 'missing_key'
        if variant == 'not_converged_runs' and r < (5 if benchmark == 'unet3d' else 2):
            v = 'not_converged'
        if variant == 'no_seeds':
            v = 'no_seed'
        seed = 7 if variant == 'duplicate_seeds' and r < 2 else 1000 + r
        text = write_log(ruleset, benchmark, bs, conv, r, variant=v, seed=seed, division=division,
                         duration_ms=500_000 + 13_000 * ((r * 7) % n), tpl=tpl, tensors=tensors)
        logs.append(text)
    return logs


def generate_old(rules_root, out, rounds):
    manifest = {'logs': [], 'packages': []}
    counts = {}
    for ruleset in rounds:
        base = os.path.join(out, 'training_' + ruleset)
        org = os.path.join(base, 'GenOrg')
        nlogs = nsingle = 0
        systems = {'gen_closed': 'closed', 'gen_open': 'open'}
        for i, benchmark in enumerate(OLD_BENCHMARKS[ruleset]):
            bs, mean, sizes, spread = old_rcp_choice(rules_root, ruleset, benchmark)
            tensors = required_tensors(rules_root, ruleset, benchmark)
            tpl = old_template(ruleset, benchmark)
            conv = math.ceil(mean * 1000) / 1000
            for variant in OLD_LOG_VARIANTS:
                if variant == 'bad_hyperparameter' and not tpl['bad']:
                    continue
                division = 'open' if variant == 'open_division' else 'closed'
                path = os.path.join(base, 'logs', benchmark, variant + '.txt')
                write(path, write_log(ruleset, benchmark, bs, conv, 0, variant=variant, division=division, tpl=tpl,
                                      tensors=tensors))
                manifest['logs'].append({'path': path, 'ruleset': ruleset, 'usage': 'training',
                                         'benchmark': benchmark, 'variant': variant})
                nsingle += 1
            k = i + 3 * OLD_ROUNDS.index(ruleset)
            dirs = [('gen_closed', 'compliant')]
            if benchmark != 'unet3d':
                dirs += [('gen_open', 'compliant'), ('gen_' + OLD_PACKAGE_VARIANTS[k % len(OLD_PACKAGE_VARIANTS)],
                                                     OLD_PACKAGE_VARIANTS[k % len(OLD_PACKAGE_VARIANTS)])]
            for system, variant in dirs:
                division = 'open' if system == 'gen_open' else 'closed'
                systems.setdefault(system, division)
                for r, text in enumerate(old_dir_logs(ruleset, benchmark, bs, mean, sizes, variant, tensors, spread,
                                                      division)):
                    write(os.path.join(org, 'results', system, benchmark, 'result_%d.txt' % r), text)
                    nlogs += 1
        for system, division in systems.items():
            write(os.path.join(org, 'systems', system + '.json'), system_json(system, division, ruleset))
        manifest['packages'].append({'path': org, 'ruleset': ruleset, 'usage': 'training'})
        npk = 1
        if ruleset == '0.7.0':
            # Round 0.7's package checker reads no system description: a system without
            # "division", and results of a system without a description (today's package
            # checker stops on both: KeyError, FileNotFoundError).
            # A package each: today's summarizer stops on the first (NameError) and not on the second.
            bench = 'resnet'
            bs, mean, sizes, spread = old_rcp_choice(rules_root, ruleset, bench)
            for pkg, system in (('GenOrgNoDivision', 'gen_nodivision'), ('GenOrgNoSystem', 'gen_nosystem')):
                org2 = os.path.join(base, pkg)
                for r, text in enumerate(old_dir_logs(ruleset, bench, bs, mean, sizes, 'compliant', (), spread)):
                    write(os.path.join(org2, 'results', system, bench, 'result_%d.txt' % r), text)
                    nlogs += 1
                if system == 'gen_nodivision':
                    desc = json.loads(system_json(system, 'closed', ruleset))
                    del desc['division']
                    write(os.path.join(org2, 'systems', system + '.json'), json.dumps(desc, indent=4) + '\n')
                else:
                    os.makedirs(os.path.join(org2, 'systems'), exist_ok=True)
                manifest['packages'].append({'path': org2, 'ruleset': ruleset, 'usage': 'training'})
                npk += 1
        counts[ruleset] = {'single_logs': nsingle, 'package_logs': nlogs, 'packages': npk}
    return manifest, counts


# ====================================================================== MLPerf HPC
# Rounds hpc 1.0.0, 2.0.0 and 3.0.0. A package has results/<system>/strong/<benchmark>/ (an exact
# number of runs, scored like training) and results/<system>/weak/<benchmark>/ (at least that
# many model instances trained at once, scored by the time to train them all).

HPC_ROUNDS = ['1.0.0', '2.0.0', '3.0.0']
HPC_BENCHMARKS = {'1.0.0': ['cosmoflow', 'deepcam', 'oc20'], '2.0.0': ['cosmoflow', 'deepcam', 'oc20'],
                  '3.0.0': ['cosmoflow', 'deepcam', 'oc20', 'openfold']}
HPC_RUN_COUNTS = {'cosmoflow': 10, 'deepcam': 5, 'oc20': 5, 'openfold': 10}

# Written from compliance_checker/hpc_X/closed_<benchmark>.yaml (and the deepcam LAMB and
# multistep files it enqueues). The last hyperparameter of each is required (missing_key).
HPC_TEMPLATES = {
    'cosmoflow': dict(
        hp=[('opt_name', 'SGD'), ('opt_base_learning_rate', 0.004), ('opt_learning_rate_warmup_epochs', 4),
            ('opt_learning_rate_warmup_factor', 4.0), ('dropout', 0.5), ('opt_weight_decay', 0.0),
            ('opt_learning_rate_decay_boundary_epochs', [16, 32]), ('opt_learning_rate_decay_factor', 0.25)],
        metric='eval_error', good=0.121, poor=0.2503, bad=('dropout', 1.5), train_samples=524288, eval_samples=65536),
    'deepcam': dict(
        hp=[('gradient_accumulation_frequency', 1), ('batchnorm_group_size', 1), ('opt_name', 'LAMB'),
            ('opt_lr', 0.0055), ('opt_betas', [0.9, 0.999]), ('opt_eps', 1e-06), ('opt_weight_decay', 0.01),
            ('opt_bias_correction', True), ('opt_grad_averaging', True), ('opt_max_grad_norm', 1.0),
            ('scheduler_type', 'multistep'), ('scheduler_milestones', [800]), ('scheduler_decay_rate', 0.1),
            ('scheduler_lr_warmup_steps', 400), ('scheduler_lr_warmup_factor', 1.0)],
        metric='eval_accuracy', good=0.8231, poor=0.7512, bad=('opt_eps', 1e-08), train_samples=121266,
        eval_samples=15158),
    'oc20': dict(
        hp=[('opt_name', 'AdamW'), ('opt_base_learning_rate', 0.0016), ('opt_learning_rate_warmup_steps', 3908),
            ('opt_learning_rate_warmup_factor', 0.2), ('opt_learning_rate_decay_boundary_steps', [23448, 31264]),
            ('opt_learning_rate_decay_factor', 0.1)],
        metric='eval_error', good=0.0352, poor=0.0501, bad=('opt_name', 'Adam'), train_samples=2000000,
        eval_samples=1000000),
    'openfold': dict(
        hp=[('target_avg_lddt_ca_value', 0.8), ('train_max_pdb_release_date', '2021-09-16'),
            ('val_min_cameo_submission_date', '2021-09-17'), ('val_max_cameo_submission_date', '2021-12-11'),
            ('val_max_sequence_length', 700), ('val_every_iters', 40), ('model_parameters_count', 93229082),
            ('init_checkpoint_sha256sum', 'b518be4677048f2c0f94889c91e2da73655a73b825a8aa7f8b6f5e580d8ffbed'),
            ('train_sequence_crop_size', 256), ('num_recycling_iters', 3), ('max_msa_clusters', 124),
            ('max_extra_msa', 1024), ('templates_enabled', True), ('max_templates', 4), ('fape_loss_weight', 1.0),
            ('fape_loss_backbone_weight', 0.5), ('fape_loss_sidechain_weight', 0.5),
            ('supervised_chi_loss_weight', 1.0), ('distogram_loss_weight', 0.3), ('masked_msa_loss_weight', 2.0),
            ('plddt_loss_weight', 0.01), ('opt_name', 'Adam'), ('opt_adam_beta_1', 0.9), ('opt_adam_beta_2', 0.999),
            ('opt_adam_epsilon', 1e-6), ('opt_weight_decay', 0.0), ('opt_amsgrad', False),
            ('opt_gradient_clipping', True), ('opt_gradient_clip_norm', 0.1), ('swa_enabled', True),
            ('swa_decay_rate', 0.9), ('opt_base_learning_rate', 0.001), ('opt_learning_rate_warmup_init', 0.0),
            ('opt_learning_rate_warmup_steps', 1000), ('initial_training_dataloader_type', 'InitialTrainingDataloaderPT')],
        metric='eval_accuracy', good=0.8012, poor=0.7503, bad=('val_every_iters', 20), train_samples=594595,
        eval_samples=180),
}

HPC_LOG_VARIANTS = ['compliant', 'missing_key', 'bad_hyperparameter', 'not_converged', 'aborted', 'init_too_long',
                    'open_division', 'no_seed', 'bad_status', 'unknown_benchmark', 'parse_error', 'eval_after_target',
                    'no_number_of_nodes', 'no_accelerators_per_node', 'zero_accelerators', 'no_cache_clear',
                    'staging_before_run', 'staging_stop_without_start', 'no_staging', 'no_run_stop_status', 'crlf',
                    'prefixed_lines', 'empty']


def hpc_rcp_choice(rules_root, ruleset, benchmark):
    """As rcp_choice, for the hpc tables (all in epochs)."""
    path = os.path.join(rules_root, 'rcp_checker', 'hpc_' + ruleset, 'rcps_%s.json' % benchmark)
    with open(path) as f:
        table = json.load(f)
    best = None
    for rec in table.values():
        mean = olympic_mean(rec['Epochs to converge'], benchmark)
        if best is None or mean < best[1]:
            e = rec['Epochs to converge']
            best = (rec['BS'], mean, max(e) != min(e))
    sizes = sorted(rec['BS'] for rec in table.values())
    return best[0], best[1], sizes, best[2]


def write_hpc_log(ruleset, benchmark, bs, conv, run, variant='compliant', division='closed', seed=None,
                  duration_ms=None, evals=3, t0=None, nodes=4, accelerators=4, org='GenHpcOrg'):
    """One HPC result log. conv: the epoch of convergence."""
    tpl = HPC_TEMPLATES[benchmark]
    L = Log(t0 if t0 is not None else 1700000000000 + run * 10_000_000)
    if variant != 'no_cache_clear':
        L.point('cache_clear', True)
    L.start('init_start')
    L.point('submission_org', org)
    L.point('submission_platform', 'gen_hpc_system')
    L.point('submission_division', division)
    L.point('submission_status', 'bad' if variant == 'bad_status' else 'onprem')
    L.point('submission_benchmark', 'nosuchbench' if variant == 'unknown_benchmark' else benchmark)
    if variant != 'no_number_of_nodes':
        L.point('number_of_nodes', nodes)
    if variant != 'no_accelerators_per_node':
        L.point('accelerators_per_node', 0 if variant == 'zero_accelerators' else accelerators)
    if variant != 'no_seed':
        L.point('seed', seed if seed is not None else 1000 + run)
    L.point('global_batch_size', bs)
    L.point('gradient_accumulation_steps', 1)
    L.point('train_samples', tpl['train_samples'])
    L.point('eval_samples', tpl['eval_samples'])
    missing = tpl['hp'][-1][0] if variant == 'missing_key' else None
    for k, v in tpl['hp']:
        if k == missing:
            continue
        if variant == 'bad_hyperparameter' and k == tpl['bad'][0]:
            v = tpl['bad'][1]
        L.point(k, v)
    if variant == 'parse_error':
        L.lines.append(':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "x"')
    L.tick(31 * 60 * 1000 if variant == 'init_too_long' else 60_000)
    L.stop('init_stop')
    L.tick(1000)

    def staging():
        L.start('staging_start')
        L.tick(20_000)
        L.stop('staging_stop', staging_duration=20.0)

    if variant == 'staging_before_run':
        staging()  # allowed outside the timed run from hpc 3.0 on
    L.start('run_start')
    if variant not in ('staging_before_run', 'no_staging', 'staging_stop_without_start'):
        staging()
    if variant == 'staging_stop_without_start':
        L.stop('staging_stop')
    total = duration_ms if duration_ms is not None else 600_000 + run * 7_000
    for i in range(1, evals + (2 if variant == 'eval_after_target' else 1)):
        epoch = round(conv * i / evals, 3)
        L.start('epoch_start', epoch_num=epoch)
        L.tick(total / evals / 2)
        L.stop('epoch_stop', epoch_num=epoch)
        L.start('eval_start', epoch_num=epoch)
        reached = i >= evals and variant != 'not_converged'
        L.point(tpl['metric'], tpl['good'] if reached else tpl['poor'], epoch_num=epoch)
        L.stop('eval_stop', epoch_num=epoch)
        L.tick(total / evals / 2)
    status = 'aborted' if variant in ('aborted', 'not_converged') else 'success'
    if variant == 'no_run_stop_status':
        L.stop('run_stop')
    else:
        L.stop('run_stop', status=status)
    if variant == 'empty':
        return ''
    text = L.text()
    if variant == 'prefixed_lines':
        text = ''.join('[1,0]<stdout>:' + line + '\n' for line in text.splitlines())
    if variant == 'crlf':
        text = text.replace('\n', '\r\n')
    return text


def hpc_system_json(name, division):
    d = json.loads(system_json(name, division, '3.0.0'))
    d['submitter'] = 'GenHpcOrg'
    d['status'] = 'onprem'
    d['number_of_nodes'] = '16'
    d['accelerators_per_node'] = '4'
    return json.dumps(d, indent=4) + '\n'


# Strong-scaling directory variants (as training) and weak-scaling ones. Each benchmark gets a
# passing directory of each kind in gen_closed and gen_open and two variants of each kind in
# turn.
HPC_STRONG_VARIANTS = ['rcp_too_fast', 'rcp_scaled', 'one_bad_file', 'two_bad_files', 'wrong_count',
                       'duplicate_seeds', 'not_converged_runs', 'rcp_missing_bs', 'staging_before_run']
HPC_WEAK_VARIANTS = ['weak_fewer', 'weak_more', 'weak_one_bad', 'weak_no_nodes', 'weak_open_no_nodes',
                     'weak_zero_accel', 'weak_not_converged', 'weak_two_bad']


def hpc_dir_logs(ruleset, benchmark, bs, mean, sizes, variant, spread=True, weak=False, division='closed'):
    n = HPC_RUN_COUNTS[benchmark]
    scale = {'rcp_too_fast': 0.5, 'rcp_scaled': 0.995}.get(variant, 1.0)
    if variant == 'rcp_scaled' and not spread:
        scale = 1.0
    if variant == 'rcp_missing_bs':
        bs = sizes[-1] * 2
    if variant == 'wrong_count':
        n -= 1
    if weak:
        n += {'weak_fewer': -1, 'weak_more': 3}.get(variant, 1)
    logs = []
    for r in range(n):
        conv = mean * scale * (1 + (0 if variant == 'rcp_scaled' else 0.002 * (r % 5)))
        conv = math.ceil(conv * 1000) / 1000
        v = 'compliant'
        if variant in ('one_bad_file', 'weak_one_bad') and r == 1:
            v = 'bad_hyperparameter'
        if variant in ('two_bad_files', 'weak_two_bad') and 1 <= r <= 2:
            v = 'missing_key'
        if variant in ('not_converged_runs', 'weak_not_converged') and r < 2:
            v = 'not_converged'
        if variant in ('weak_no_nodes', 'weak_open_no_nodes') and r == 0:
            v = 'no_number_of_nodes'
        if variant == 'staging_before_run':
            v = 'staging_before_run'
        seed = 7 if variant == 'duplicate_seeds' and r < 2 else 1000 + r
        accel = 0 if variant == 'weak_zero_accel' else 4
        # Weak-scaling instances run side by side, each on 4 nodes of the 16.
        t0 = 1700000000000 + (r * 45_000 if weak else r * 10_000_000)
        logs.append(write_hpc_log(ruleset, benchmark, bs, conv, r, variant=v, seed=seed, t0=t0,
                                  duration_ms=500_000 + 13_000 * ((r * 7) % n), accelerators=accel,
                                  division=division))
    return logs


def generate_hpc(rules_root, out, rounds):
    manifest = {'logs': [], 'packages': []}
    counts = {}
    for ruleset in rounds:
        base = os.path.join(out, 'hpc_' + ruleset)
        org = os.path.join(base, 'GenHpcOrg')
        nlogs = nsingle = 0
        systems = {'gen_closed': 'closed', 'gen_open': 'open'}
        for i, benchmark in enumerate(HPC_BENCHMARKS[ruleset]):
            bs, mean, sizes, spread = hpc_rcp_choice(rules_root, ruleset, benchmark)
            conv = math.ceil(mean * 1000) / 1000
            for variant in HPC_LOG_VARIANTS:
                division = 'open' if variant == 'open_division' else 'closed'
                path = os.path.join(base, 'logs', benchmark, variant + '.txt')
                write(path, write_hpc_log(ruleset, benchmark, bs, conv, 0, variant=variant, division=division))
                manifest['logs'].append({'path': path, 'ruleset': ruleset, 'usage': 'hpc', 'benchmark': benchmark,
                                         'variant': variant})
                nsingle += 1
            k = 2 * i + 3 * HPC_ROUNDS.index(ruleset)
            strong = [HPC_STRONG_VARIANTS[k % len(HPC_STRONG_VARIANTS)],
                      HPC_STRONG_VARIANTS[(k + 1) % len(HPC_STRONG_VARIANTS)]]
            weak = [HPC_WEAK_VARIANTS[k % len(HPC_WEAK_VARIANTS)], HPC_WEAK_VARIANTS[(k + 1) % len(HPC_WEAK_VARIANTS)]]
            dirs = [('gen_closed', 'strong', 'compliant'), ('gen_closed', 'weak', 'compliant'),
                    ('gen_open', 'strong', 'compliant'), ('gen_open', 'weak', 'compliant')]
            dirs += [('gen_' + v, 'strong', v) for v in strong] + [('gen_' + v, 'weak', v) for v in weak]
            for system, scaling, variant in dirs:
                division = 'open' if system == 'gen_open' or variant == 'weak_open_no_nodes' else 'closed'
                systems.setdefault(system, division)
                logs = hpc_dir_logs(ruleset, benchmark, bs, mean, sizes, variant, spread,
                                    weak=scaling == 'weak', division=division)
                for r, text in enumerate(logs):
                    write(os.path.join(org, 'results', system, scaling, benchmark, 'result_%d.txt' % r), text)
                    nlogs += 1
        for system, division in systems.items():
            write(os.path.join(org, 'systems', system + '.json'), hpc_system_json(system, division))
        manifest['packages'].append({'path': org, 'ruleset': ruleset, 'usage': 'hpc'})
        # Weak-scaling runs of different sizes in one directory: the summarizer stops with an
        # AssertionError (and scores nothing), so they get a package of their own, beside a
        # strong-scaling directory whose score is lost with it.
        org2 = os.path.join(base, 'GenHpcOrgScale')
        bench = HPC_BENCHMARKS[ruleset][1]
        bs, mean, sizes, spread = hpc_rcp_choice(rules_root, ruleset, bench)
        for r, text in enumerate(hpc_dir_logs(ruleset, bench, bs, mean, sizes, 'compliant', spread)):
            write(os.path.join(org2, 'results', 'gen_scale', 'strong', bench, 'result_%d.txt' % r), text)
            nlogs += 1
        n = HPC_RUN_COUNTS[bench] + 1
        for r in range(n):
            text = write_hpc_log(ruleset, bench, bs, math.ceil(mean * 1000) / 1000, r, t0=1700000000000 + r * 45_000,
                                 nodes=8 if r == n - 1 else 4)
            write(os.path.join(org2, 'results', 'gen_scale', 'weak', bench, 'result_%d.txt' % r), text)
            nlogs += 1
        write(os.path.join(org2, 'systems', 'gen_scale.json'), hpc_system_json('gen_scale', 'closed'))
        manifest['packages'].append({'path': org2, 'ruleset': ruleset, 'usage': 'hpc'})
        counts['hpc-' + ruleset] = {'single_logs': nsingle, 'package_logs': nlogs, 'packages': 2}
    return manifest, counts


def round_ids(usage=None):
    """Every round this generator writes, as differential.py names them: "X.Y.Z" for training,
    "hpc-X.Y.Z" for HPC."""
    out = []
    if usage in (None, 'training'):
        out += OLD_ROUNDS + ROUNDS
    if usage in (None, 'hpc'):
        out += ['hpc-' + r for r in HPC_ROUNDS]
    return out


def round_id(usage, version):
    """The id differential.py gives a round: "X.Y.Z" for training, "hpc-X.Y.Z"."""
    return version if usage == 'training' else '%s-%s' % (usage, version)


def split_round(rid):
    """("training"|"hpc", "X.Y.Z") of a round id ("3.1.0", "training-3.1.0", "hpc-3.0.0")."""
    for usage in ('hpc', 'training'):
        if rid.startswith(usage + '-') or rid.startswith(usage + '_'):
            return usage, rid[len(usage) + 1:]
    return 'training', rid


def generate_all(rules_root, out, rounds):
    """Writes every round in `rounds` (round ids) and the manifest; returns the manifest."""
    by_usage = {'training': [], 'hpc': []}
    for rid in rounds:
        usage, version = split_round(rid)
        if round_id(usage, version) not in round_ids():
            raise SystemExit('generate.py: no round %r (rounds: %s)' % (rid, ', '.join(round_ids())))
        by_usage[usage].append(version)
    manifest = {'logs': [], 'packages': [], 'counts': {}}
    old = [r for r in by_usage['training'] if r in OLD_ROUNDS]
    if old:
        m, counts = generate_old(rules_root, out, old)
        manifest['logs'] += m['logs']
        manifest['packages'] += m['packages']
        manifest['counts'].update(counts)
    current = [r for r in by_usage['training'] if r not in OLD_ROUNDS]
    if current:
        m = generate(rules_root, out, current, write_manifest=False)
        for e in m['logs'] + m['packages']:
            e.setdefault('usage', 'training')
        manifest['logs'] += m['logs']
        manifest['packages'] += m['packages']
        manifest['counts'].update(m['counts'])
    if by_usage['hpc']:
        m, counts = generate_hpc(rules_root, out, by_usage['hpc'])
        manifest['logs'] += m['logs']
        manifest['packages'] += m['packages']
        manifest['counts'].update(counts)
    write(os.path.join(out, 'manifest.json'), json.dumps(manifest, indent=1) + '\n')
    return manifest


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rules', required=True, help="the consortium's mlperf_logging folder")
    p.add_argument('--out', required=True)
    p.add_argument('--rounds', help='round ids, comma-separated: "3.1.0" (training), "hpc-3.0.0" (default: all '
                                    'of --usage)')
    p.add_argument('--usage', choices=['training', 'hpc'], help='only the rounds of this usage')
    a = p.parse_args()
    rounds = a.rounds.split(',') if a.rounds else round_ids(a.usage)
    if a.usage:
        rounds = [r for r in rounds if split_round(r)[0] == a.usage]
    m = generate_all(a.rules, a.out, rounds)
    print(json.dumps(m['counts']))


if __name__ == '__main__':
    main()
