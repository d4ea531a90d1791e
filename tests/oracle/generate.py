#!/usr/bin/python3
"""Writes MLLOG result logs and small submission packages for every benchmark of every
training round from 3.0.0 to 5.1.0, compliant ones and systematic variants, for the
differential test (tests/oracle/differential.py) to run through referee and through the
consortium's tools.

    /usr/bin/python3 tests/oracle/generate.py --rules RULES_ROOT --out DIR [--rounds 3.1.0,...]

RULES_ROOT is the consortium's mlperf_logging folder (compliance_checker/, rcp_checker/); only
the RCP tables are read from it, to pick a batch size each round has a reference for and
convergence points that pass or fail the RCP test by design. The hyperparameter templates
below are this project's own data, written from the rounds' closed-division rules.

Layout written under DIR:
    manifest.json                       {"logs": [{"path", "ruleset", "benchmark", "variant"}],
                                         "packages": [{"path", "ruleset"}]}
    training_X/logs/<benchmark>/<variant>.txt
    training_X/GenOrg/systems/<system>.json
    training_X/GenOrg/results/<system>/<benchmark>/result_N.txt

Standard library only, deterministic (same bytes on every run).
"""

import argparse
import json
import math
import os
import re

ROUNDS = ['3.0.0', '3.1.0', '4.0.0', '4.1.0', '5.0.0', '5.1.0']

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


def hyperparameters(benchmark, bs):
    out = []
    for k, v in TEMPLATES[benchmark]['hp']:
        if v == 'LR405':
            v = bs * 8e-5 / 1152
        elif v == 'WARMUP405':
            v = math.ceil(8000 * 1152 / bs)
        elif v == 'DECAY405':
            v = math.ceil(1_200_000 * 1152 / bs) - math.ceil(8000 * 1152 / bs)
        out.append((k, v))
    return out


def write_log(ruleset, benchmark, bs, conv, run, variant='compliant', division='closed', seed=None,
              duration_ms=None, evals=3):
    """One result log. conv: the convergence point in the benchmark's unit."""
    tpl = TEMPLATES[benchmark]
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
    for k, v in hyperparameters(benchmark, bs):
        if k == missing:
            continue
        if variant == 'bad_hyperparameter' and bad and k == bad[0]:
            v = bad[1]
        L.point(k, v)
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


def generate(rules_root, out, rounds):
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
    write(os.path.join(out, 'manifest.json'), json.dumps(manifest, indent=1) + '\n')
    return manifest


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rules', required=True, help="the consortium's mlperf_logging folder")
    p.add_argument('--out', required=True)
    p.add_argument('--rounds', default=','.join(ROUNDS))
    a = p.parse_args()
    m = generate(a.rules, a.out, a.rounds.split(','))
    print(json.dumps(m['counts']))


if __name__ == '__main__':
    main()
