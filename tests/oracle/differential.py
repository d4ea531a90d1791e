#!/usr/bin/python3
"""Differential test: referee against the consortium's tools on generated data.

    /usr/bin/python3 tests/oracle/differential.py --referee build/referee [--rounds 3.0.0,hpc-3.0.0,...]
        [--usage training|hpc] [--keep DIR]

For every training round from 0.7.0 to 5.1.0 and every MLPerf HPC round from 1.0.0 to 3.0.0,
tests/oracle/generate.py writes logs and small packages for every benchmark (compliant ones and
systematic variants). Then:
  - every log goes through `referee check --json` and the consortium's compliance checker;
  - every package through `referee check-package --json` and the consortium's package checker
    (system descriptions, then each result directory: results/<system>/<benchmark>/ for training,
    results/<system>/{strong,weak}/<benchmark>/ for hpc);
  - every package through `referee score --json` (published scaling) and `--rescale`
    (the pipeline's scaling) and the consortium's result summarizer (on a fresh copy, and after
    the package checker's RCP pass): strong-scaling scores, energies, and for hpc the
    weak-scaling scores (time to train all models, number of models, instance scale).
Rounds are named "X.Y.Z" (training) or "hpc-X.Y.Z"; --rounds and --usage pick some.

Two oracles: today's consortium package, and for the rounds that have one the package as
released for that round (0.7.0: 0.7.1, 1.0.0: 1.0.0, 1.1.0: 1.1.0-rc4, 2.0.0: 2.0.0,
2.1.0: 2.1.0, hpc-3.0.0: hpc-3.0.0), run in a process of its own beside this one. Each
comparison is decided by the oracles that answer: both when they agree; the one that does not
crash when the other does (today's tools crash on several old rounds: the RCP checker's
KeyError('dlrm'), the package checker's KeyError('division'), missing system files on 0.7);
neither when they disagree with each other, which is reported as such ("ORACLES DISAGREE", with
referee's answer beside both) and not as a referee difference. The summary line counts which
oracle decided how many comparisons per round.

Any verdict or score that differs from the deciding oracle is a failure, printed with the file,
both verdicts and both tools' messages, unless KNOWN_DIFFERENCES below names it, with the reason
(see docs/known-differences.md). An entry of KNOWN_DIFFERENCES that no longer matches anything
is a failure too, so that the list stays true.

The consortium's tools come from $REFEREE_REFERENCE_DATA/mlperf/logging (and logging-history/)
(default ../shared/mlperf/ beside the repository) and need Debian's python3-numpy,
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

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate  # noqa: E402

SKIP = 77

# The consortium's package as released for a round (logging-history/<tag>): the second oracle.
RELEASES = {'0.7.0': '0.7.1', '1.0.0': '1.0.0', '1.1.0': '1.1.0-rc4', '2.0.0': '2.0.0', '2.1.0': '2.1.0',
            'hpc-3.0.0': 'hpc-3.0.0'}

# Differences we keep on purpose: id -> reason. Ids: "<round>/log/<benchmark>/<variant>",
# "<round>/<package>/<system>/<benchmark>" (package checker; "<system>/<scaling>/<benchmark>" for
# hpc), "<round>/<package>/systems/<file>", "<round>/<package>/score-<published|pipeline>/<key>".
# <round> is "X.Y.Z" for training, "hpc-X.Y.Z" for hpc. Patterns (fnmatch) are allowed; each
# entry must match at least one comparison.
KNOWN_DIFFERENCES = {
    '[012].[01].0/GenOrg/score-pipeline':
        "today's pipeline stops in its package checker pass on the closed DLRM directory (the RCP "
        "checker's KeyError('dlrm')), leaving a partly rescaled package for the summarizer; no round's "
        "own release computes today's pipeline; referee's --rescale applies it to every directory",
    '0.7.0/GenOrgNoSystem/score-pipeline':
        "today's pipeline stops in its package checker pass (FileNotFoundError on the missing system "
        "description); referee leaves the system out of its table, as the 0.7.1 summarizer does",
    '0.7.0/GenOrgNoDivision/score-pipeline':
        "today's summarizer raises NameError in its handler for a system description without division; "
        "referee leaves the system out of its table, as the 0.7.1 summarizer does",
    '2.1.0/GenOrg/gen_no_seeds/dlrm':
        "runs that log no seed: the 2.1.0 release's seed checker accepted that; today's fails it for "
        "every round from 1.0 (on this directory too, before its RCP checker stops with KeyError('dlrm')), "
        "and referee applies today's seed rule to every directory of the round alike",
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
    '*/GenHpcOrgScale/score-*':
        'weak-scaling runs of different sizes (number_of_nodes) in one directory: the summarizer\'s '
        '_compute_weak_scaling_scores stops with an AssertionError and scores nothing, not even the '
        'strong-scaling directory beside it',
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
EXPECT_HPC_LOG = {'compliant': True, 'missing_key': False, 'bad_hyperparameter': False, 'not_converged': False,
                  'init_too_long': False, 'parse_error': False, 'bad_status': False, 'eval_after_target': True,
                  'no_number_of_nodes': False, 'no_accelerators_per_node': False, 'zero_accelerators': True,
                  'no_cache_clear': False, 'staging_stop_without_start': False, 'no_staging': True,
                  'no_run_stop_status': False, 'crlf': True, 'prefixed_lines': True, 'empty': False}
EXPECT_DIR = {'closed': 'pass', 'one_bad_file': 'pass', 'rcp_scaled': 'pass', 'rcp_interpolated': 'pass',
              'rcp_too_fast': 'fail', 'two_bad_files': 'fail', 'wrong_count': 'fail', 'duplicate_seeds': 'fail',
              'not_converged_runs': 'fail', 'rcp_missing_bs': 'fail', 'relaunched': 'pass', 'published_scaling': 'pass',
              'rcp_bypass': 'pass', 'rcp_bypass_newline': 'fail', 'extra_file': 'pass', 'string_seed': 'fail',
              'one_aborted': 'pass', 'eval_after_target': 'pass', 'float_times': 'pass', 'prefixed_lines': 'pass',
              'crlf': 'pass', 'power': 'pass', 'power_one_missing': 'pass', 'power_two_missing': 'fail',
              'power_bad_name': 'pass', 'power_node_count': 'pass', 'power_no_stop': 'pass'}
EXPECT_HPC_DIR = {'closed': 'pass', 'open': 'pass', 'rcp_too_fast': 'fail', 'rcp_scaled': 'pass',
                  'one_bad_file': 'pass', 'two_bad_files': 'fail', 'wrong_count': 'fail', 'duplicate_seeds': 'fail',
                  'not_converged_runs': 'fail', 'rcp_missing_bs': 'fail', 'weak_fewer': 'fail', 'weak_more': 'pass',
                  'weak_one_bad': 'pass', 'weak_no_nodes': 'pass', 'weak_open_no_nodes': 'pass',
                  'weak_zero_accel': 'pass', 'weak_not_converged': 'fail', 'weak_two_bad': 'fail'}


def expect_log(rid, variant):
    usage, version = generate.split_round(rid)
    if usage == 'hpc':
        if variant == 'staging_before_run':  # data staging outside the timed run: allowed from hpc 3.0
            return version >= '3.0.0'
        return EXPECT_HPC_LOG.get(variant)
    if version in generate.OLD_ROUNDS:
        return generate.old_expect_log(version, variant)
    return EXPECT_LOG.get(variant)


def expect_dir(rid, system):
    usage, version = generate.split_round(rid)
    variant = system[len('gen_'):] if system.startswith('gen_') else None
    if usage == 'hpc':
        if variant == 'staging_before_run':
            return 'pass' if version >= '3.0.0' else 'fail'
        return EXPECT_HPC_DIR.get(variant)
    if version in generate.OLD_ROUNDS:
        return generate.old_expect_dir(version, variant)
    return EXPECT_DIR.get(variant)


def fail_or_skip(msg):
    if os.environ.get('CI'):
        print('differential: FAILED: %s (CI is set: the reference data and the Python deps are required)' % msg)
        return 1
    print('differential: SKIPPED: %s' % msg)
    return SKIP


def run_referee(args):
    """referee's JSON, or (None, why) when it printed none."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        return None, '%s exited %d: %s' % (' '.join(args[1:4]), p.returncode, p.stderr.strip()[-600:])
    try:
        return json.loads(p.stdout), None
    except ValueError:
        return None, '%s printed no JSON (exit %d): %s %s' % (' '.join(args[1:4]), p.returncode, p.stdout[-500:],
                                                             p.stderr[-500:])


def short(msgs, n=4, width=300):
    out = []
    for m in msgs[:n]:
        if isinstance(m, dict):
            m = '%s (line %s, %s)' % (m.get('message', ''), m.get('line'), m.get('rule', ''))
        out.append(str(m).replace('\n', ' | ')[:width])
    if len(msgs) > n:
        out.append('... %d more' % (len(msgs) - n))
    return out


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def is_crash(v):
    return isinstance(v, str) and v.startswith('crash')


NO_ANSWER = object()  # an oracle that has nothing to say here (no release for the round, ...)


class Report:
    def __init__(self):
        self.diffs = []
        self.used_known = {}
        self.used_pending = {}
        self.pending = []
        self.generator = []
        self.unsaid = []  # directories where today's checker stops and referee does not say so
        self.disagree = []
        self.oracle_errors = []
        self.ids = set()
        self.compared = {'logs': 0, 'package_dirs': 0, 'systems': 0, 'scores': 0}
        self.decided = {}  # round -> {"both"|"today"|"release"|"none": n}

    def differ(self, ident, what, ours, theirs):
        for table, used in ((KNOWN_DIFFERENCES, self.used_known), (PENDING_FIXES, self.used_pending)):
            for pattern in table:
                if fnmatch.fnmatchcase(ident, pattern):
                    used.setdefault(pattern, []).append(ident)
                    if table is PENDING_FIXES:
                        self.pending.append((ident, what, ours, theirs))
                    return
        self.diffs.append((ident, what, ours, theirs))

    def decide(self, rid, ident, today, release, same=lambda a, b: a == b):
        """The answer referee must give (or NO_ANSWER) and which oracle gave it. An answer is a
        value or "crash: ..."; NO_ANSWER where an oracle has none."""
        counts = self.decided.setdefault(rid, {'both': 0, 'today': 0, 'release': 0, 'none': 0})
        if release is NO_ANSWER:
            counts['today'] += 1
            return today, 'today'
        if today is NO_ANSWER:
            counts['release'] += 1
            return release, 'release'
        tc, rc = is_crash(today), is_crash(release)
        if tc and not rc:
            counts['release'] += 1
            return release, 'release'
        if rc and not tc:
            counts['today'] += 1
            return today, 'today'
        if tc or same(today, release):
            counts['both'] += 1
            return today, 'both'
        counts['none'] += 1
        return NO_ANSWER, 'none'

    def compare(self, rid, ident, what, ours, today, release, same=lambda a, b: a == b, detail=None):
        """Decides, then compares referee's answer `ours`; detail() gives (referee's, oracle's)
        details for the report. Returns the deciding answer (NO_ANSWER when the oracles
        disagree)."""
        self.ids.add(ident)
        want, by = self.decide(rid, ident, today, release, same)
        d = detail() if detail else ({}, {})
        if by == 'none':
            agrees = 'today' if same(ours, today) else 'release' if same(ours, release) else 'neither'
            self.disagree.append((ident, what, ours, today, release, agrees, d))
            return want
        if not same(ours, want):
            theirs = dict(d[1])
            theirs['oracle'] = {'both': 'both', 'today': 'today', 'release': 'release (%s)' % RELEASES.get(rid)}[by]
            self.differ(ident, what, dict(d[0], answer=ours), dict(theirs, answer=want))
        return want


def verdict_of_log(t):
    return 'crash: ' + t['crash'] if t['crash'] else t['compliant']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--referee', required=True)
    ap.add_argument('--rounds', help='round ids, comma-separated: "3.1.0" (training), "hpc-3.0.0"')
    ap.add_argument('--usage', choices=['training', 'hpc'], help='only the rounds of this usage')
    ap.add_argument('--no-release-oracle', action='store_true',
                    help="compare with today's tools only, not with the rounds' own releases")
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
    rounds = a.rounds.split(',') if a.rounds else generate.round_ids(a.usage)
    if a.usage:
        rounds = [r for r in rounds if generate.split_round(r)[0] == a.usage]
    rounds = [generate.round_id(*generate.split_round(r)) for r in rounds]
    manifest = generate.generate_all(rules, out, rounds)
    rep = Report()
    referee = os.path.abspath(a.referee)
    for rid in rounds:
        run_round(rep, oracle, mlperf_oracle, referee, rules, manifest, rid, not a.no_release_oracle)

    def in_rounds(pattern):  # the pattern names something this run compared
        return any(fnmatch.fnmatchcase(i, pattern) for i in rep.ids)
    stale = sorted(k for k in KNOWN_DIFFERENCES if k not in rep.used_known and in_rounds(k))
    elapsed = time.time() - t0
    counts = manifest['counts']
    print('differential: generated %s' % ', '.join('%s: %d single logs, %d packages of %d result files' % (
        r, c['single_logs'], c['packages'], c['package_logs']) for r, c in counts.items()))
    print('differential: compared %d log verdicts, %d system descriptions, %d result directories, %d scores; '
          '%d known differences excluded; %d places where the oracles disagree; %.1f s' % (
              rep.compared['logs'], rep.compared['systems'], rep.compared['package_dirs'], rep.compared['scores'],
              sum(len(v) for v in rep.used_known.values()), len(rep.disagree), elapsed))
    for rid, c in rep.decided.items():
        if c['release'] or c['none'] or rid in RELEASES:
            print('differential: %s decided by both oracles %d, today\'s only %d, release %s only %d, '
                  'undecided (oracles disagree) %d' % (rid, c['both'], c['today'], RELEASES.get(rid, '-'),
                                                       c['release'], c['none']))
    for pattern, ids in sorted(rep.used_known.items()):
        print('known difference (%d): %s: %s' % (len(ids), pattern, KNOWN_DIFFERENCES[pattern]))
    for ident, what, ours, today, release, agrees, d in rep.disagree:
        print('ORACLES DISAGREE %s: %s' % (ident, what))
        print('  today\'s:   %s %s' % (json.dumps(today), json.dumps(d[1])[:400]))
        print('  release:   %s' % json.dumps(release))
        print('  referee:   %s (agrees with %s)' % (json.dumps(ours), agrees))
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
    for e in rep.oracle_errors:
        print('ORACLE ERROR %s' % e)
    for g in rep.generator:
        print('GENERATOR %s' % g)
    for u in rep.unsaid:
        print('UNSAID %s' % u)
    if tmp:
        tmp.cleanup()
    if rep.oracle_errors:
        print('differential: FAILED: %d oracle processes failed' % len(rep.oracle_errors))
        return 1
    if rep.generator:
        print('differential: FAILED: %d generated inputs are not what the generator meant' % len(rep.generator))
        return 1
    if rep.unsaid:
        print('differential: FAILED: %d directories where the consortium stops and referee does not say so'
              % len(rep.unsaid))
        return 1
    if rep.diffs or stale:
        print('differential: FAILED: %d differences, %d stale exclusions' % (len(rep.diffs), len(stale)))
        return 1
    print('differential: PASSED')
    return 0


def run_round(rep, oracle, mlperf_oracle, referee, rules, manifest, rid, use_release):
    usage, version = generate.split_round(rid)
    ruleset = '%s-%s' % (usage, version)
    entries = [e for e in manifest['logs'] if generate.round_id(e.get('usage', 'training'), e['ruleset']) == rid]
    packages = [e['path'] for e in manifest['packages']
                if generate.round_id(e.get('usage', 'training'), e['ruleset']) == rid]
    paths = [e['path'] for e in entries]

    # The round's own release works in a process of its own meanwhile.
    release, proc = RELEASES.get(rid) if use_release else None, None
    if release:
        jobs = [{'op': 'check', 'ruleset': version, 'usage': usage, 'paths': paths}]
        jobs += [{'op': op, 'ruleset': version, 'usage': usage, 'paths': [org]} for op in ('package', 'score')
                 for org in packages]
        proc = mlperf_oracle.BatchProcess(jobs, release)

    ours_logs, err = run_referee([referee, 'check', '--json', '--ruleset', ruleset, '--rules', rules] + paths) if paths else ({'files': {}}, None)
    if ours_logs is None:
        # One log at a time, so that a log referee cannot check leaves the others compared.
        ours_logs = {'files': {}}
        for path in paths:
            j, err = run_referee([referee, 'check', '--json', '--ruleset', ruleset, '--rules', rules, path])
            ours_logs['files'][path] = (j or {}).get('files', {}).get(path, {'compliant': 'referee error: %s' % err})
    today_logs = oracle.check(paths, version, usage)['files']
    ours_pk, today_pk, ours_sc, today_sc = {}, {}, {}, {}
    for org in packages:
        ours_pk[org], err = run_referee([referee, 'check-package', '--json', '--ruleset', ruleset, '--rules', rules, org])
        if ours_pk[org] is None:
            rep.differ('%s/%s/referee-check-package' % (rid, os.path.basename(org)), 'referee check-package on %s' % org,
                       {'error': err}, {})
            ours_pk[org] = {}
        today_pk[org] = oracle.check_package(org, version, usage)
        today_sc[org] = oracle.score_package(org, version, usage)
        for mode, flag in (('published', []), ('pipeline', ['--rescale'])):
            j, err = run_referee([referee, 'score', '--json', '--ruleset', ruleset, '--rules', rules, org] + flag)
            if j is None:
                rep.differ('%s/%s/referee-score-%s' % (rid, os.path.basename(org), mode), 'referee score on %s' % org,
                           {'error': err}, {})
                j = {}
            ours_sc[(org, mode)] = j

    rel_logs, rel_pk, rel_sc = {}, {}, {}
    if proc:
        try:
            res = proc.result()
            rel_logs = res[0]['files']
            for i, org in enumerate(packages):
                rel_pk[org] = res[1 + i]['packages'][org]
                rel_sc[org] = res[1 + len(packages) + i]['packages'][org]
        except (ImportError, RuntimeError) as e:
            rep.oracle_errors.append('%s: the release %s: %s' % (rid, release, e))
            release = None

    # ------------------------------------------------------------------ logs
    for e in entries:
        ident = '%s/log/%s/%s' % (rid, e['benchmark'], e['variant'])
        o, t = ours_logs['files'].get(e['path'], {}), today_logs[e['path']]
        r = rel_logs.get(e['path']) if release else None
        rep.compared['logs'] += 1
        tv = verdict_of_log(t)
        rv = verdict_of_log(r) if r else NO_ANSWER
        want = rep.compare(rid, ident, 'compliance verdict of %s' % e['path'], o.get('compliant'), tv, rv,
                           detail=lambda: ({'errors': short(o.get('errors', []))},
                                           {'messages': short((r if r and is_crash(tv) else t)['messages']
                                                              + (r if r and is_crash(tv) else t)['parse_errors'])}))
        expected = expect_log(rid, e['variant'])
        if expected is not None and want is not NO_ANSWER and not is_crash(want) and want is not expected:
            rep.generator.append('%s: the consortium says compliant=%s, the generator meant %s' % (ident, want, expected))

    # ------------------------------------------------------------------ packages
    for org in packages:
        name = os.path.basename(org)
        ours, theirs = ours_pk[org], today_pk[org]
        rel = rel_pk.get(org) if release else None
        for sysfile, t in theirs['systems'].items():
            rep.compared['systems'] += 1
            ident = '%s/%s/systems/%s' % (rid, name, sysfile)
            o = ours.get('systems', {}).get(sysfile, {})
            # what the consortium cannot read must be rejected; a package checker that reads no
            # system descriptions (rounds before 1.0) has nothing to say about them
            tv = NO_ANSWER if not t.get('counted', True) else False if t['crash'] else t['valid']
            rs = (rel or {}).get('systems', {}).get(sysfile)
            rv = NO_ANSWER if not rs or not rs.get('counted', True) else (False if rs['crash'] else rs['valid'])
            if tv is NO_ANSWER and rv is NO_ANSWER:
                continue
            rep.compare(rid, ident, 'system description %s/systems/%s' % (org, sysfile), o.get('valid'), tv, rv,
                        detail=lambda: ({'errors': short(o.get('errors', []))},
                                        {'crash': t['crash'], 'log': short([l for l in t['log'] if 'ERROR' in l])}))
        keys = list(theirs['benchmarks']) + [k for k in (rel or {}).get('benchmarks', {}) if k not in theirs['benchmarks']]
        for key in keys:
            rep.compared['package_dirs'] += 1
            ident = '%s/%s/%s' % (rid, name, key)
            o = ours.get('benchmarks', {}).get(key, {})
            ov = 'skipped' if o.get('skipped') else o.get('verdict')
            t = theirs['benchmarks'].get(key)
            rb = (rel or {}).get('benchmarks', {}).get(key)
            tv = NO_ANSWER if t is None else 'crash: ' + t['crash'] if t['crash'] else t['verdict']
            rv = NO_ANSWER if rb is None else 'crash: ' + rb['crash'] if rb['crash'] else rb['verdict']

            def detail(o=o, t=t, rb=rb, tv=tv):
                errs = []
                for fname, f in sorted(o.get('files', {}).items()):
                    errs += ['%s: %s' % (fname, m) for m in short(f.get('errors', []), 2)]
                for k in ('errors', 'rcp', 'seeds_ok', 'result_count', 'expected_count'):
                    if k in o:
                        errs.append('%s=%s' % (k, json.dumps(o[k])[:300]))
                src = rb if (t is None or is_crash(tv)) and rb else t
                return ({'findings': errs[:8]},
                        {'log': short([l for l in src['log'] if not l.startswith(('INFO', 'PRINT - Run', 'PRINT - ---'))], 6)})
            want = rep.compare(rid, ident, 'package checker verdict of %s/results/%s' % (org, key), ov, tv, rv,
                               detail=detail)
            if is_crash(tv) and not o.get('skipped') and not (o.get('consortium_stops')
                                                              or (o.get('power') or {}).get('consortium_stops')):
                # Where today's checker stops, referee's report must say so beside its verdict.
                rep.unsaid.append('%s: today\'s package checker stops (%s); referee\'s report does not say so '
                                  '(no consortium_stops)' % (ident, tv))
            expected = expect_dir(rid, key.split('/')[0]) if name.startswith('Gen') else None
            if expected is not None and want is not NO_ANSWER and not is_crash(want) and want != expected:
                rep.generator.append('%s: the consortium says %s, the generator meant %s' % (ident, want, expected))
        # scores, both scalings
        for mode in ('published', 'pipeline'):
            j = ours_sc[(org, mode)]
            ourmap = {}
            for sysname, row in j.get('systems', {}).items():
                if row.get('error'):
                    # An incomplete row (a system description missing or lacking a field of the
                    # table) is left out of referee's summary table, as the summarizer skips it.
                    continue
                for bench, s in row.get('benchmarks', {}).items():
                    ourmap[sysname + '/' + bench] = s
                for bench, s in (row.get('weak') or {}).items():
                    ourmap[sysname + '/weak/' + bench] = s
            t = today_sc[org][mode]
            r = rel_sc[org][mode] if release and org in rel_sc else None
            compare_scores(rep, rid, name, org, mode, ourmap, t, r)


def score_values(key, s, ours):
    """The figures compared for one score entry: strong (minutes, energy) or weak (time to train
    all, models, instance scale)."""
    if s is None:
        return None
    if '/weak/' in key:
        if ours:
            return (s.get('time_to_train_all_minutes'), s.get('number_of_models'), s.get('instance_scale'))
        return (s.get('time_to_train_all'), s.get('number_of_models'), s.get('instance_scale'))
    if ours:
        return (s.get('score_minutes'), s.get('energy_joules'))
    return (s.get('minutes'), s.get('energy'))


def same_scores(a, b):
    if is_crash(a) or is_crash(b):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))


def compare_scores(rep, rid, name, org, mode, ourmap, t, r):
    """Scores of one package in one mode. t, r: the summarizer's output of today's tools and of
    the release (r None: no release oracle)."""
    tcrash = 'crash: ' + t['crash'] if t['crash'] else None
    if mode == 'pipeline':
        # `--rescale` is today's pipeline: a round's own release computed no such thing (1.1 had no
        # normalisation at all). Where today's package checker pass stopped part way, the
        # summarizer scored a partly rescaled package: no answer.
        r = None
        if not tcrash and t.get('checker_crash'):
            tcrash = 'crash: package checker: ' + t['checker_crash']
    rcrash = 'crash: ' + r['crash'] if r and r['crash'] else None
    if r is not None and mode == 'pipeline':
        # Where the package checker's pass stopped part way, the pipeline's scores are those of a
        # partly rescaled package: no answer while the other oracle has one.
        if not tcrash and t.get('checker_crash') and not r.get('checker_crash'):
            tcrash = 'crash: package checker: ' + t['checker_crash']
        if not rcrash and r.get('checker_crash') and not t.get('checker_crash'):
            rcrash = 'crash: package checker: ' + r['checker_crash']
    if tcrash and (r is None or rcrash):
        rep.ids.add('%s/%s/score-%s' % (rid, name, mode))
        rep.decide(rid, '%s/%s/score-%s' % (rid, name, mode), tcrash, rcrash if r else NO_ANSWER)
        rep.differ('%s/%s/score-%s' % (rid, name, mode), 'summarizer on %s' % org,
                   {'scores': len(ourmap)}, {'crash': tcrash})
        return
    keys = set(ourmap)
    if not tcrash:
        keys |= set(t['scores'])
    if r and not rcrash:
        keys |= set(r['scores'])
    for key in sorted(keys):
        rep.compared['scores'] += 1
        ident = '%s/%s/score-%s/%s' % (rid, name, mode, key)
        o = ourmap.get(key)
        ov = score_values(key, o or {}, True)
        tv = tcrash or score_values(key, t['scores'].get(key, {}), False)
        rv = NO_ANSWER if r is None else rcrash or score_values(key, r['scores'].get(key, {}), False)
        src = t if not tcrash else r

        def detail(o=o, src=src, key=key):
            s = src['scores'].get(key, {}) if src else {}
            return ({'factor': (o or {}).get('factor'), 'note': (o or {}).get('note'),
                     'energy_note': (o or {}).get('energy_note')},
                    {'scaling_factor': s.get('scaling_factor'), 'rcp': s.get('rcp')})
        what = '%s %s of %s/results/%s' % (mode, 'weak-scaling scores' if '/weak/' in key else 'score and energy', org, key)
        rep.compare(rid, ident, what, ov, tv, rv, same=same_scores, detail=detail)


if __name__ == '__main__':
    sys.exit(main())
