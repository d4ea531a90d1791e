#!/usr/bin/python3
"""Differential test: referee against the consortium's tools on generated data.

    /usr/bin/python3 tests/oracle/differential.py --referee build/referee [--rounds 3.0.0,...] [--keep DIR]

For every training round from 3.0.0 to 5.1.0, tests/oracle/generate.py writes logs and small
packages for every benchmark (compliant ones and systematic variants). Then:
  - every log goes through `referee check --json` and the consortium's compliance checker;
  - every package through `referee check-package --json` and the consortium's package checker
    (system descriptions, then each result directory);
  - every package through `referee score --json` (published scaling) and `--rescale`
    (the pipeline's scaling) and the consortium's result summarizer (on a fresh copy, and after
    the package checker's RCP pass).
Any verdict or score that differs is a failure, printed with the file, both verdicts and both
tools' messages, unless KNOWN_DIFFERENCES below names it, with the reason (see
docs/known-differences.md). An entry of KNOWN_DIFFERENCES that no longer matches anything is
a failure too, so that the list stays true.

The consortium's tools come from $REFEREE_REFERENCE_DATA/mlperf/logging (default
../shared/mlperf/logging beside the repository) and need Debian's python3-numpy,
python3-scipy, python3-pandas and python3-yaml. Without them the test exits 77 (CTest's
SKIP_RETURN_CODE), or 1 when CI is set. Exit 0: no difference; 1: differences.
"""

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate  # noqa: E402

SKIP = 77

# Differences we keep on purpose: id -> reason. Ids: "<round>/log/<benchmark>/<variant>",
# "<round>/<package>/<system>/<benchmark>" (package checker), "<round>/<package>/systems/<file>",
# "<round>/<package>/score-<published|pipeline>/<system>/<benchmark>".
# Patterns (fnmatch) are allowed; each entry must match at least one comparison.
KNOWN_DIFFERENCES = {
    '*/log/*/unknown_benchmark':
        'the consortium raises FileNotFoundError on enqueue_config of a file the rule set lacks '
        '(submission_benchmark names no benchmark of the round); referee reports "Could not find config '
        'file" and the log is non-compliant',
    '3.[01].0/log/gpt3/open_division':
        'rounds 3.0 and 3.1 have no open_gpt3.yaml: the consortium raises FileNotFoundError, referee '
        'reports "Could not find config file" and the log is non-compliant',
    '*/log/resnet/duplicate_hp_different':
        'opt_name logged twice, the second time as a list: the rule enqueues closed_resnet_[\'lars\'].yaml and '
        'the consortium raises FileNotFoundError; referee reports "Could not find config file" and the duplicate',
    '*/GenOrgNoField/score-*':
        'the summarizer raises NameError (its FieldError handler names an undefined variable) on a system '
        'description that lacks a field of its table and scores nothing; referee scores the package and '
        'marks the row incomplete',
    '*/GenOrgStale/score-*':
        'the summarizer runs the compliance checker on a directory of a benchmark the round does not have, '
        'which raises FileNotFoundError, and scores nothing; referee skips that directory, as the package '
        'checker does, and scores the rest',
    '*/GenOrgPowerMissing/score-*':
        'a run without power files: the summarizer stops with an AssertionError and scores nothing; referee '
        'scores the package and says, in energy_note, which run has no power files',
    '*/log/maskrcnn/eval_before_run_start':
        'an eval_accuracy whose value is a number where maskrcnn expects {"BBOX", "SEGM"}: the consortium\'s '
        'ATLEAST_ONE_CHECK raises TypeError; referee counts the line as not passing and the log fails',
}

# Differences that are referee defects being fixed elsewhere. They are reported, not failed,
# while they occur; once they no longer occur the test says so, and they must be removed
# from here. (Round 4.0's ResNet, whose rules enqueue a 3.1 file, and llama31_405b's max
# speedup from 5.0.0 agree now.)
PENDING_FIXES = {
}


# What the consortium must say about generated data, so that the comparison exercises both
# verdicts (two tools agreeing that everything fails would prove little). A mismatch here is a
# defect of the generator's templates, reported as such.
EXPECT_LOG = {'compliant': True, 'missing_key': False, 'bad_hyperparameter': False, 'not_converged': False,
              'init_too_long': False, 'parse_error': False, 'duplicate_hp_same': True, 'duplicate_hp_different': False,
              'eval_after_target': True, 'float_times': True, 'prefixed_lines': True, 'noise_lines': True,
              'crlf': True, 'no_run_stop_status': False, 'empty': False}
EXPECT_DIR = {'closed': 'pass', 'one_bad_file': 'pass', 'rcp_scaled': 'pass', 'rcp_interpolated': 'pass',
              'rcp_too_fast': 'fail', 'two_bad_files': 'fail', 'wrong_count': 'fail', 'duplicate_seeds': 'fail',
              'not_converged_runs': 'fail', 'rcp_missing_bs': 'fail', 'relaunched': 'pass', 'published_scaling': 'pass',
              'rcp_bypass': 'pass', 'rcp_bypass_newline': 'fail', 'extra_file': 'pass', 'string_seed': 'fail',
              'one_aborted': 'pass', 'eval_after_target': 'pass', 'float_times': 'pass', 'prefixed_lines': 'pass',
              'crlf': 'pass', 'power': 'pass', 'power_one_missing': 'pass', 'power_two_missing': 'fail',
              'power_bad_name': 'pass', 'power_node_count': 'pass', 'power_no_stop': 'pass'}


def fail_or_skip(msg):
    if os.environ.get('CI'):
        print('differential: FAILED: %s (CI is set: the reference data and the Python deps are required)' % msg)
        return 1
    print('differential: SKIPPED: %s' % msg)
    return SKIP


def run_referee(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError('%s exited %d: %s' % (' '.join(args), p.returncode, p.stderr[-2000:]))
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise RuntimeError('%s printed no JSON (exit %d): %s %s' % (' '.join(args), p.returncode, p.stdout[-1000:],
                                                                   p.stderr[-1000:]))


def short(msgs, n=4, width=300):
    out = []
    for m in msgs[:n]:
        if isinstance(m, dict):
            m = '%s (line %s, %s)' % (m.get('message', ''), m.get('line'), m.get('rule', ''))
        out.append(str(m).replace('\n', ' | ')[:width])
    if len(msgs) > n:
        out.append('... %d more' % (len(msgs) - n))
    return out


class Report:
    def __init__(self):
        self.diffs = []
        self.used_known = {}
        self.used_pending = {}
        self.pending = []
        self.generator = []
        self.differing = set()
        self.ids = set()
        self.compared = {'logs': 0, 'package_dirs': 0, 'systems': 0, 'scores': 0}

    def differ(self, ident, what, ours, theirs):
        self.differing.add(ident)
        for table, used in ((KNOWN_DIFFERENCES, self.used_known), (PENDING_FIXES, self.used_pending)):
            for pattern in table:
                if fnmatch.fnmatchcase(ident, pattern):
                    used.setdefault(pattern, []).append(ident)
                    if table is PENDING_FIXES:
                        self.pending.append((ident, what, ours, theirs))
                    return
        self.diffs.append((ident, what, ours, theirs))


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--referee', required=True)
    ap.add_argument('--rounds', default=','.join(generate.ROUNDS))
    ap.add_argument('--keep', help='write the generated data here and keep it')
    a = ap.parse_args()

    ref_root = os.environ.get('REFEREE_REFERENCE_DATA') or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), 'shared')
    rules = os.path.join(ref_root, 'mlperf', 'logging', 'mlperf_logging')
    if not os.path.isdir(os.path.join(rules, 'compliance_checker')):
        return fail_or_skip('reference data not found at %s (set REFEREE_REFERENCE_DATA)' % ref_root)
    try:
        import mlperf_oracle
        oracle = mlperf_oracle.Oracle()
    except ImportError as e:
        return fail_or_skip('the consortium\'s tools cannot run here: %s (install python3-numpy python3-scipy '
                            'python3-pandas python3-yaml, and run with /usr/bin/python3)' % e)
    if not os.access(a.referee, os.X_OK):
        print('differential: FAILED: no referee binary at %s' % a.referee)
        return 1

    t0 = time.time()
    tmp = None
    if a.keep:
        out = a.keep
    else:
        tmp = tempfile.TemporaryDirectory(prefix='referee-differential-')
        out = tmp.name
    rounds = a.rounds.split(',')
    manifest = generate.generate(rules, out, rounds)
    rep = Report()
    referee = os.path.abspath(a.referee)

    # ------------------------------------------------------------------ logs
    for rnd in rounds:
        entries = [e for e in manifest['logs'] if e['ruleset'] == rnd]
        paths = [e['path'] for e in entries]
        ours = run_referee([referee, 'check', '--json', '--ruleset', 'training-' + rnd, '--rules', rules] + paths)['files']
        theirs = oracle.check(paths, rnd)['files']
        for e in entries:
            ident = '%s/log/%s/%s' % (rnd, e['benchmark'], e['variant'])
            o, t = ours.get(e['path'], {}), theirs[e['path']]
            rep.compared['logs'] += 1
            rep.ids.add(ident)
            tv = 'crash: ' + t['crash'] if t['crash'] else t['compliant']
            want = EXPECT_LOG.get(e['variant'])
            if want is not None and not t['crash'] and t['compliant'] is not want:
                rep.generator.append('%s: the consortium says compliant=%s (%s), the generator meant %s' % (
                    ident, tv, short(t['messages'] + t['parse_errors'], 2), want))
            if o.get('compliant') != tv:
                rep.differ(ident, 'compliance verdict of %s' % e['path'],
                           {'compliant': o.get('compliant'), 'errors': short(o.get('errors', []))},
                           {'compliant': tv, 'messages': short(t['messages'] + t['parse_errors'])})

    # ------------------------------------------------------------------ packages
    for pk in manifest['packages']:
        rnd, org = pk['ruleset'], pk['path']
        name = os.path.basename(org)
        ours = run_referee([referee, 'check-package', '--json', '--ruleset', 'training-' + rnd, '--rules', rules, org])
        theirs = oracle.check_package(org, rnd)
        for sysfile, t in theirs['systems'].items():
            rep.compared['systems'] += 1
            rep.ids.add('%s/%s/systems/%s' % (rnd, name, sysfile))
            o = ours.get('systems', {}).get(sysfile, {})
            tv = False if t['crash'] else t['valid']  # what the consortium cannot read must be rejected
            if o.get('valid') != tv:
                rep.differ('%s/%s/systems/%s' % (rnd, name, sysfile), 'system description %s/systems/%s' % (org, sysfile),
                           {'valid': o.get('valid'), 'errors': short(o.get('errors', []))},
                           {'valid': t['valid'], 'crash': t['crash'], 'log': short([l for l in t['log'] if 'ERROR' in l])})
        for key, t in theirs['benchmarks'].items():
            rep.compared['package_dirs'] += 1
            rep.ids.add('%s/%s/%s' % (rnd, name, key))
            o = ours.get('benchmarks', {}).get(key, {})
            ov = 'skipped' if o.get('skipped') else o.get('verdict')
            tv = 'crash: ' + t['crash'] if t['crash'] else t['verdict']
            want = EXPECT_DIR.get(key.split('/')[0][len('gen_'):]) if name.startswith('GenOrg') else None
            if want is not None and not t['crash'] and tv != want:
                rep.generator.append('%s/%s/%s: the consortium says %s (%s), the generator meant %s' % (
                    rnd, name, key, tv, short([l for l in t['log'] if 'ERROR' in l], 2), want))
            if ov != tv:
                errs = []
                for fname, f in sorted(o.get('files', {}).items()):
                    errs += ['%s: %s' % (fname, m) for m in short(f.get('errors', []), 2)]
                for k in ('errors', 'rcp', 'seeds_ok', 'result_count', 'expected_count'):
                    if k in o:
                        errs.append('%s=%s' % (k, json.dumps(o[k])[:300]))
                rep.differ('%s/%s/%s' % (rnd, name, key), 'package checker verdict of %s/results/%s' % (org, key),
                           {'verdict': ov, 'findings': errs[:8]},
                           {'verdict': tv, 'log': short([l for l in t['log'] if not l.startswith('INFO')], 6)})
        # scores, both scalings
        oscore = oracle.score_package(org, rnd)
        for mode, flag in (('published', []), ('pipeline', ['--rescale'])):
            ours_s = run_referee([referee, 'score', '--json', '--ruleset', 'training-' + rnd, '--rules', rules, org] + flag)
            ourmap = {}
            for sysname, row in ours_s.get('systems', {}).items():
                for bench, s in row.get('benchmarks', {}).items():
                    ourmap[sysname + '/' + bench] = s
            t = oscore[mode]
            if t['crash']:
                rep.differ('%s/%s/score-%s' % (rnd, name, mode), 'summarizer on %s' % org,
                           {'scores': len(ourmap)}, {'crash': t['crash']})
                continue
            for key in sorted(set(ourmap) | set(t['scores'])):
                rep.compared['scores'] += 1
                rep.ids.add('%s/%s/score-%s/%s' % (rnd, name, mode, key))
                om = ourmap.get(key, {}).get('score_minutes')
                tm = t['scores'].get(key, {}).get('minutes')
                oe = ourmap.get(key, {}).get('energy_joules')
                te = t['scores'].get(key, {}).get('energy')
                if not close(oe, te):
                    rep.differ('%s/%s/energy-%s/%s' % (rnd, name, mode, key), '%s energy of %s/results/%s' % (mode, org, key),
                               {'energy': oe, 'note': ourmap.get(key, {}).get('energy_note')}, {'energy': te})
                if not close(om, tm):
                    rep.differ('%s/%s/score-%s/%s' % (rnd, name, mode, key), '%s score of %s/results/%s' % (mode, org, key),
                               {'minutes': om, 'factor': ourmap.get(key, {}).get('factor'),
                                'note': ourmap.get(key, {}).get('note')},
                               {'minutes': tm, 'scaling_factor': t['scores'].get(key, {}).get('scaling_factor'),
                                'rcp': t['scores'].get(key, {}).get('rcp')})

    def in_rounds(pattern):  # the pattern names something this run compared
        return any(fnmatch.fnmatchcase(i, pattern) for i in rep.ids)
    stale = sorted(k for k in KNOWN_DIFFERENCES if k not in rep.used_known and in_rounds(k))
    elapsed = time.time() - t0
    counts = manifest['counts']
    print('differential: generated %s' % ', '.join('%s: %d single logs, %d packages of %d result files' % (
        r, c['single_logs'], c['packages'], c['package_logs']) for r, c in counts.items()))
    print('differential: compared %d log verdicts, %d system descriptions, %d result directories, %d scores; '
          '%d known differences excluded; %.1f s' % (rep.compared['logs'], rep.compared['systems'],
                                                    rep.compared['package_dirs'], rep.compared['scores'],
                                                    sum(len(v) for v in rep.used_known.values()), elapsed))
    for pattern, ids in sorted(rep.used_known.items()):
        print('known difference (%d): %s: %s' % (len(ids), pattern, KNOWN_DIFFERENCES[pattern]))
    for ident, what, ours, theirs in rep.pending:
        print('PENDING FIX %s: %s' % (ident, what))
        print('  referee:    %s' % json.dumps(ours))
        print('  consortium: %s' % json.dumps(theirs))
    for pattern in sorted(PENDING_FIXES):
        if pattern not in rep.used_pending and in_rounds(pattern):
            print('NOTE: pending fix %s (%s) no longer differs: remove it from PENDING_FIXES' % (pattern, PENDING_FIXES[pattern]))
    for ident, what, ours, theirs in rep.diffs:
        print('DIFFERENCE %s: %s' % (ident, what))
        print('  referee:    %s' % json.dumps(ours))
        print('  consortium: %s' % json.dumps(theirs))
    for k in stale:
        print('STALE known difference %s (%s): it no longer occurs; remove it' % (k, KNOWN_DIFFERENCES[k]))
    for g in rep.generator:
        print('GENERATOR %s' % g)
    if tmp:
        tmp.cleanup()
    if rep.generator:
        print('differential: FAILED: %d generated inputs are not what the generator meant' % len(rep.generator))
        return 1
    if rep.diffs or stale:
        print('differential: FAILED: %d differences, %d stale exclusions' % (len(rep.diffs), len(stale)))
        return 1
    print('differential: PASSED')
    return 0


if __name__ == '__main__':
    sys.exit(main())
