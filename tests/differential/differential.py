#!/usr/bin/python3
"""Differential tests: referee against the consortium's tools on mutated real logs.

    /usr/bin/python3 tests/differential/differential.py mutations [--referee BIN] [--keep DIR]
    /usr/bin/python3 tests/differential/differential.py fuzz [--seed N] [--count N]
                     [--seconds S] [--case N] [--referee BIN] [--keep DIR]
    /usr/bin/python3 tests/differential/differential.py selftest

`mutations` applies every mutation class of tests/mutations_test.cc (mutations.py's
catalog) to copies of published logs of round 3.1: file cases are checked by the
consortium's compliance checker and `referee check`, package cases by its package checker
and `referee check-package`. `fuzz` mutates randomly chosen published logs of rounds 3.0
and 3.1 with random operators (mutations.random_mutation), seeded, until --count cases or
--seconds have passed, and checks each with both tools. A case's mutation depends only on
the seed and its number: `fuzz --seed S --case N` redoes case N alone. `selftest` checks
that the comparison catches a stand-in referee that calls every file compliant.

Any verdict that differs fails (exit 1), printing the file, the mutation and both tools'
messages, and keeps the mutated input under --keep. Where the consortium's checker stops with
a traceback it gives no verdict; those cases are counted, by exception, and referee must
still give a verdict of its own (docs/known-differences.md lists them).

The reference data is $REFEREE_REFERENCE_DATA, else ../shared beside the repository; the
consortium's package is imported from its mlperf/logging folder (Debian's python3-numpy,
-scipy, -pandas, -yaml). Without either: exit 77 with the reason (CTest reports the test as
skipped), or exit 1 when CI is set. Exit 2: referee could not be run.
"""

import argparse
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, 'tests', 'oracle'))

import mutations as mut  # noqa: E402

SKIP = 77


def reference_dir():
    return os.environ.get('REFEREE_REFERENCE_DATA') or os.path.join(os.path.dirname(REPO), 'shared')


def skip_or_fail(reason):
    if os.environ.get('CI'):
        print('FAIL: %s; CI must have it' % reason)
        sys.exit(1)
    print('SKIPPED: %s' % reason)
    sys.exit(SKIP)


def load_oracle():
    ref = reference_dir()
    if not os.path.isdir(os.path.join(ref, 'mlperf', 'expected')):
        skip_or_fail('reference data not found at %s (set REFEREE_REFERENCE_DATA)' % ref)
    try:
        from mlperf_oracle import Oracle
        return Oracle()
    except ImportError as e:
        skip_or_fail("cannot load the consortium's tools: %s (Debian: python3-numpy python3-scipy "
                     "python3-pandas python3-yaml)" % e)


# ----------------------------------------------------------------------- referee

class Referee:
    def __init__(self, binary, rules):
        self.binary, self.rules = binary, rules
        if not os.access(binary, os.X_OK):
            print('differential: no referee binary at %s (--referee)' % binary)
            sys.exit(2)

    def _run(self, args):
        p = subprocess.run([self.binary] + args + ['--rules', self.rules, '--json'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = p.stdout.decode('utf-8', 'replace')
        if p.returncode not in (0, 1):
            return None, 'exit %d: %s' % (p.returncode, p.stderr.decode('utf-8', 'replace')[-2000:])
        try:
            return json.loads(out), None
        except ValueError as e:
            return None, 'exit %d, output is not JSON (%s): %s' % (p.returncode, e, out[:500])

    def check(self, paths, ruleset):
        """{path: {"compliant": bool|None, "errors": [...], "crash": str|None}}"""
        out = {}
        for i in range(0, len(paths), 400):
            chunk = paths[i:i + 400]
            j, err = self._run(['check'] + chunk + ['--ruleset', 'training-' + ruleset])
            for p in chunk:
                if j is None:
                    out[p] = {'compliant': None, 'errors': [], 'crash': err}
                    continue
                f = j['files'].get(p, {})
                out[p] = {'compliant': f.get('compliant'), 'crash': f.get('error'),
                          'errors': ['[line %s] %s: %s' % (e.get('line'), e.get('rule'), e.get('message'))
                                     for e in f.get('errors', [])]}
        return out

    def check_package(self, org, ruleset):
        j, err = self._run(['check-package', org, '--ruleset', 'training-' + ruleset])
        if j is None:
            return {'verdict': None, 'crash': err, 'benchmarks': {}, 'messages': []}
        msgs, dirs = [], {}
        for name, s in j.get('systems', {}).items():
            for e in s.get('errors', []):
                msgs.append('%s: %s' % (name, e.get('message')))
        for key, b in j.get('benchmarks', {}).items():
            dirs[key] = b.get('verdict')
            for e in b.get('errors', []):
                msgs.append('%s: %s: %s' % (key, e.get('rule'), e.get('message')))
            for fname, f in b.get('files', {}).items():
                for e in f.get('errors', []):
                    msgs.append('%s/%s [line %s] %s: %s' % (key, fname, e.get('line'), e.get('rule'), e.get('message')))
        return {'verdict': j.get('verdict'), 'crash': None, 'benchmarks': dirs, 'messages': msgs}


# ----------------------------------------------------------------------- comparing

def short(msgs, n=4, width=300):
    out = []
    for m in msgs[:n]:
        m = ' | '.join(x for x in str(m).split('\n')[:3] if x.strip())
        out.append(m[:width])
    if len(msgs) > n:
        out.append('... %d more' % (len(msgs) - n))
    return out


def file_agrees(cons, ref):
    """(agrees, note) for one file's verdicts.

    When the consortium's checker raises it gives no verdict: referee's own (a finding, or
    for an ATLEAST_ONE_CHECK that raises on one line, the other lines deciding) is then
    accepted, as docs/known-differences.md lists; referee must still give one."""
    if ref['compliant'] is None:
        return False, 'referee could not check it'
    if cons['compliant'] is None:
        return True, 'consortium raised ' + str(cons['crash'])
    return cons['compliant'] == ref['compliant'], None


def crash_kind(cons):
    return str(cons.get('crash')).split(':')[0]


def kinds(counter):
    return ', '.join('%d %s' % (n, k) for k, n in counter.most_common()) or 'none'


def describe_file(path, mutation, cons, ref, note):
    lines = ['DISAGREE %s' % path, '  mutation: %s' % mutation]
    cv = {True: 'compliant', False: 'NOT compliant', None: 'raised %s' % cons.get('crash')}[cons['compliant']]
    lines.append('  consortium: %s' % cv)
    lines += ['    ' + m for m in short(cons.get('messages', []) + ['parse error: ' + e for e in cons.get('parse_errors', [])])]
    rv = {True: 'compliant', False: 'NOT compliant', None: 'failed: %s' % ref.get('crash')}[ref['compliant']]
    lines.append('  referee: %s' % rv)
    lines += ['    ' + m for m in short(ref['errors'])]
    if note:
        lines.append('  note: %s' % note)
    return '\n'.join(lines)


def keep(keep_dir, src_path, name, report):
    os.makedirs(keep_dir, exist_ok=True)
    dst = os.path.join(keep_dir, name)
    if os.path.isdir(src_path):
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src_path, dst)
    else:
        shutil.copyfile(src_path, dst)
    with open(dst.rstrip('/') + '.why.txt', 'w') as f:
        f.write(report + '\n')
    return dst


# ----------------------------------------------------------------------- mutations

def run_mutations(args, oracle, referee):
    ref = reference_dir()
    tmp = tempfile.mkdtemp(prefix='referee-diff-')
    disagreements = 0
    try:
        # file cases
        cases, paths = [], []
        for k, (name, src, n, fn) in enumerate(mut.file_cases()):
            text = fn(mut.read_text(src.file(ref, n)))
            path = os.path.join(tmp, 'f%03d_%s_%s_result_%d.txt' % (k, src.org, src.benchmark, n))
            mut.write_text(path, text)
            cases.append((name, src, n, path))
            paths.append(path)
        t0 = time.time()
        cons = {p: oracle.check_file(p, '3.1.0') for p in paths}
        t_cons = time.time() - t0
        t0 = time.time()
        refs = referee.check(paths, '3.1.0')
        t_ref = time.time() - t0
        crashes = collections.Counter()
        for name, src, n, path in cases:
            ok, note = file_agrees(cons[path], refs[path])
            if cons[path]['compliant'] is None:
                crashes[crash_kind(cons[path])] += 1
            if not ok:
                disagreements += 1
                report = describe_file(path, '%s (%s/%s result_%d.txt)' % (name, src.org, src.benchmark, n),
                                       cons[path], refs[path], note)
                print(report)
                print('  kept: %s' % keep(args.keep, path, os.path.basename(path), report))
        print('file mutations: %d cases, %d disagreements, consortium tracebacks: %s '
              '(consortium %.1f s, referee %.2f s)' % (len(cases), disagreements, kinds(crashes), t_cons, t_ref))

        # package cases
        pkg_disagree = 0
        pcases = mut.package_cases()
        for k, (name, src, fn) in enumerate(pcases):
            ptmp = os.path.join(tmp, 'p%02d' % k)
            p = mut.MiniPackage(ptmp, src, ref)
            fn(p)
            r = referee.check_package(p.org, '3.1.0')
            c = oracle.check_package(p.org, '3.1.0')
            cdirs = {key: b['verdict'] for key, b in c['benchmarks'].items()}
            agree = r['verdict'] is not None and c['verdict'] == r['verdict'] and all(
                r['benchmarks'].get(key) == v for key, v in cdirs.items() if v in ('pass', 'fail'))
            if c['verdict'] == 'crash':
                agree = r['verdict'] == 'fail'
            if not agree:
                pkg_disagree += 1
                clog = [l for b in c['benchmarks'].values() for l in b.get('log', [])
                        if l.startswith(('ERROR', 'WARNING'))]
                report = '\n'.join(
                    ['DISAGREE package %s' % p.org, '  mutation: %s (%s/%s)' % (name, src.org, src.benchmark),
                     '  consortium: %s %s' % (c['verdict'], json.dumps(cdirs))] +
                    ['    ' + m for m in short(clog, 6)] +
                    ['  referee: %s %s' % (r['verdict'], json.dumps(r['benchmarks']))] +
                    ['    ' + m for m in short(r['messages'] + ([r['crash']] if r['crash'] else []), 6)])
                print(report)
                print('  kept: %s' % keep(args.keep, p.org, 'p%02d_%s' % (k, src.org), report))
        print('package mutations: %d cases, %d disagreements' % (len(pcases), pkg_disagree))
        disagreements += pkg_disagree
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return disagreements


# ----------------------------------------------------------------------- fuzz

def fuzz_sources(ref):
    """Published result files of rounds 3.0 and 3.1 under 1 MB: [(path, ruleset)]."""
    out = []
    for rnd, ruleset in (('training_results_v3.0', '3.0.0'), ('training_results_v3.1', '3.1.0')):
        base = os.path.join(ref, 'mlperf', rnd)
        for root, _, files in os.walk(base):
            for f in files:
                p = os.path.join(root, f)
                if f.startswith('result_') and f.endswith('.txt') and os.path.getsize(p) < 1000000:
                    out.append((p, ruleset))
    out.sort()
    return out


OTHER_RULESETS = ['3.0.0', '3.1.0', '4.0.0', '4.1.0', '5.0.0', '5.1.0']


def make_case(sources, seed, case, other_rulesets=False):
    """A mutated log and the rule set to check it against: its round's, or with
    other_rulesets, in one case of three a rule set of another round (3.0 to 5.1)."""
    rng = random.Random('%d:%d' % (seed, case))
    path, ruleset = rng.choice(sources)
    text, what = mut.random_mutation(rng, mut.read_text(path))
    if other_rulesets and rng.random() < 1 / 3:
        ruleset = rng.choice(OTHER_RULESETS)
    return path, ruleset, text, what


def run_fuzz(args, oracle, referee):
    ref = reference_dir()
    sources = fuzz_sources(ref)
    if not sources:
        skip_or_fail('no result files under %s/mlperf' % ref)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    rerun = 'tests/differential/differential.py fuzz --seed %d%s' % (
        seed, ' --other-rulesets' if args.other_rulesets else '')
    print('fuzz: seed %d, %d source logs, up to %d cases in %d s (rerun: %s)' % (
        seed, len(sources), args.count, args.seconds, rerun))
    tmp = tempfile.mkdtemp(prefix='referee-fuzz-')
    disagreements = done = 0
    crashes = collections.Counter()
    verdicts = collections.Counter()  # agreed verdicts
    t_end = time.time() + args.seconds
    try:
        batch = []  # (case, src, ruleset, path, what, consortium)

        def flush():
            nonlocal disagreements
            by_rs = {}
            for b in batch:
                by_rs.setdefault(b[2], []).append(b[3])
            refs = {}
            for rs, paths in by_rs.items():
                refs.update(referee.check(paths, rs))
            for case, src, rs, path, what, cons in batch:
                ok, note = file_agrees(cons, refs[path])
                if ok and cons['compliant'] is not None:
                    verdicts['compliant' if cons['compliant'] else 'not compliant'] += 1
                if not ok:
                    disagreements += 1
                    report = describe_file(path, '%s of %s (ruleset %s; case %d: %s --case %d)' % (
                        what, os.path.relpath(src, ref), rs, case, rerun, case), cons, refs[path], note)
                    print(report)
                    print('  kept: %s' % keep(args.keep, path, 'seed%d_case%d_%s' % (seed, case, os.path.basename(path)),
                                               report))
            batch.clear()

        cases = [args.case] if args.case is not None else range(args.count)
        for case in cases:
            if args.case is None and time.time() > t_end:
                break
            src, rs, text, what = make_case(sources, seed, case, args.other_rulesets)
            path = os.path.join(tmp, 'case%d_%s' % (case, os.path.basename(src)))
            mut.write_text(path, text)
            cons = oracle.check_file(path, rs)
            if cons['compliant'] is None:
                crashes[crash_kind(cons)] += 1
            batch.append((case, src, rs, path, what, cons))
            done += 1
            if len(batch) >= 200:
                flush()
        flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('fuzz: seed %d: %d mutated logs (both tools: %s), %d disagreements, consortium tracebacks: %s' % (
        seed, done, kinds(verdicts), disagreements, kinds(crashes)))
    return disagreements


FAKE_REFEREE = """#!/usr/bin/python3
# A referee that calls every file compliant, for the self-test.
import json, sys
args = sys.argv[1:]
files = args[1:args.index('--ruleset')]
print(json.dumps({'files': {f: {'compliant': True, 'errors': []} for f in files}, 'verdict': 'pass'}))
"""


def run_selftest(args, oracle):
    """The comparison must catch a referee that accepts everything, and keep the inputs."""
    tmp = tempfile.mkdtemp(prefix='referee-diff-selftest-')
    try:
        fake = os.path.join(tmp, 'referee')
        with open(fake, 'w') as f:
            f.write(FAKE_REFEREE)
        os.chmod(fake, 0o755)
        keep_dir = os.path.join(tmp, 'kept')
        ns = argparse.Namespace(seed=7, count=40, seconds=600, case=None, keep=keep_dir, other_rulesets=False)
        found = run_fuzz(ns, oracle, Referee(fake, '/nonexistent'))
        kept = [n for n in os.listdir(keep_dir) if n.endswith('.why.txt')] if os.path.isdir(keep_dir) else []
        print('self-test: %d disagreements found with a referee that accepts everything, %d inputs kept' % (
            found, len(kept)))
        return 0 if found > 0 and len(kept) == found else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('mode', choices=['mutations', 'fuzz', 'selftest'])
    ap.add_argument('--referee', default=os.path.join(REPO, 'build', 'referee'))
    ap.add_argument('--keep', default=os.path.join(REPO, 'build', 'differential-findings'),
                    help='where inputs that disagree are kept')
    ap.add_argument('--seed', type=int, help='fuzz seed (default: random, printed)')
    ap.add_argument('--count', type=int, default=1000000, help='most fuzz cases')
    ap.add_argument('--seconds', type=float, default=float(os.environ.get('FUZZ_SECONDS', 60)),
                    help='fuzz time budget (default $FUZZ_SECONDS, else 60)')
    ap.add_argument('--case', type=int, help='redo one fuzz case of --seed')
    ap.add_argument('--other-rulesets', action='store_true',
                    help="fuzz: check one log in three against another round's rule set (3.0 to 5.1)")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    warnings.simplefilter('ignore')  # the consortium's UserWarnings (more than one seed, ...) are not verdicts
    oracle = load_oracle()
    if args.mode == 'selftest':
        if run_selftest(args, oracle):
            print('FAIL: the comparison did not catch a referee that accepts everything')
            return 1
        return 0
    referee = Referee(args.referee, os.path.join(reference_dir(), 'mlperf', 'logging', 'mlperf_logging'))
    if args.mode == 'mutations':
        bad = run_mutations(args, oracle, referee)
    else:
        if args.case is not None and args.seed is None:
            ap.error('--case needs --seed')
        bad = run_fuzz(args, oracle, referee)
    if bad:
        print('FAIL: %d disagreement(s) with the consortium; inputs kept in %s' % (bad, args.keep))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
