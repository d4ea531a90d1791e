#!/usr/bin/python3
"""The consortium's tools (mlperf_logging) as an oracle: many inputs, one process, JSON out.

Run it with Debian's Python (python3-numpy, python3-scipy, python3-pandas, python3-yaml):

    /usr/bin/python3 tests/oracle/mlperf_oracle.py check   --ruleset 3.1.0 FILE...
    /usr/bin/python3 tests/oracle/mlperf_oracle.py package --ruleset 3.1.0 ORG_DIR...
    /usr/bin/python3 tests/oracle/mlperf_oracle.py score   --ruleset 3.1.0 ORG_DIR...
    /usr/bin/python3 tests/oracle/mlperf_oracle.py package --usage hpc --ruleset 3.0.0 --history hpc-3.0.0 ORG_DIR...
    /usr/bin/python3 tests/oracle/mlperf_oracle.py batch   < jobs.json

mlperf_logging is imported from $REFEREE_REFERENCE_DATA/mlperf/logging, by default from
../shared/mlperf/logging beside the repository (as tests/reference_data.h finds it).
`--history TAG` imports the package as released for an earlier round instead, from
$REFEREE_REFERENCE_DATA/mlperf/logging-history/TAG (TAG: 0.7.1, 1.0.0, 1.1.0-rc4, 2.0.0, 2.1.0,
hpc-3.0.0). A process imports one mlperf_logging only: batch jobs naming another version run in a
child process of their own (run_batch() does the same for other tests).
`--usage` defaults to training; `--usage hpc` reads MLPerf HPC packages.
Nothing is written into the inputs: packages are copied to a temporary folder first (the
package checker and the summarizer write scaling.json files).
Exit status: 0 when the oracle ran (whatever the verdicts), 2 when it could not start
(mlperf_logging or its Python dependencies missing: the message says which).

The releases differ in their interfaces; the oracle calls each as its own package checker and
summarizer did and reads its verdict where that release put it:
  - 0.7.1 and 1.0.0 know no usage (rule files under compliance_checker/<ruleset>/); their package
    checker raises "Found too many errors" for a failing package (0.7.1: only for more than one
    non-compliant file; a wrong number of files is printed, not failed) and 0.7.1's checks no
    system description (its system entries say "counted": false and the package verdict
    ignores them);
  - 1.1.0-rc4 to 2.1.0 and hpc-3.0.0 log "PACKAGE CHECKER FOUND ERRORS" (or "NO ERRORS") and
    return nothing;
  - today's package returns the verdict.
  The summarizers of 0.7.1 and 1.0.0 print a table with two decimals: their exact figures are
  taken from their olympic average as it is computed (0.7.1 scores a directory with any number
  of dropped runs; 1.0.0 none with more than olympic scoring drops). Prints of the old tools go
  to each entry's log as "PRINT - ...".
Python 3.11 and today's numpy need no shim for these releases; one shim is needed: the 1.0.0
release's RCP checker opens its RCP tables relative to the working directory, so the tools run
in a temporary folder holding a link to the release's package. Bytecode is never written into
the reference data.

Output (one JSON object on stdout; the consortium's own prints go to stderr):

check   -> {"files": {FILE: {"compliant": true|false|null, "messages": [...],
                             "warnings": [...], "parse_errors": [...], "crash": null|"Type: msg"}}}
           `compliant` is the compliance checker's verdict (mlp_compliance.main, as its __main__
           runs it); `messages` are its failures, `warnings` its warnings, `parse_errors` the
           lines its parser rejected. When the checker raises, `compliant` is null and `crash`
           names the exception.
package -> {"packages": {ORG_DIR: {"verdict": "pass"|"fail"|"crash", "crash": null|str,
             "systems": {"X.json": {"valid": bool|null, "crash": null|str, "log": [...],
                                    "counted": bool}},
             "benchmarks": {KEY: {"verdict": "pass"|"fail"|"crash"|"skipped",
                            "crash": null|str, "log": ["LEVEL - message", ...]}}}}}
           KEY is "SYSTEM/BENCHMARK" for training, "SYSTEM/strong/BENCHMARK" and
           "SYSTEM/weak/BENCHMARK" for hpc (results/<system>/<scaling>/<benchmark>/).
           Each result directory is checked by the package checker's own
           check_training_result_files on a copy of the package holding that directory alone
           (inside its scaling folder for hpc, with its system description,
           package_checker_params and benchmarks/ code), so each verdict is the package checker's
           for that directory. The package verdict is "pass" when every counted system
           description and every directory passes.
score   -> {"packages": {ORG_DIR: {"published": SCORES, "pipeline": SCORES}}} where SCORES is
           {"crash": null|str, "scores": {"SYSTEM/BENCHMARK": {"minutes": float|null,
            "energy": float|null, "rcp": str|null, "scaling_factor": float|null},
            "SYSTEM/weak/BENCHMARK": {"time_to_train_all": float|null,
            "number_of_models": int|null, "instance_scale": int|null}}}.
           Strong-scaling scores (training, and hpc's strong/ folders) are those of the
           summarizer's strong-scaling table; "SYSTEM/weak/BENCHMARK" entries (hpc only) are its
           weak-scaling table (time to train all models in minutes, the number of models, the
           accelerators per model; all null when too few models converged).
           "published": result_summarizer.summarize_results on a fresh copy (honours the
           package's scaling.json files). "pipeline": the package checker's result pass on a
           copy first (it rewrites scaling.json), then the summarizer on that copy; "pipeline"
           also has "checker_crash": null, or the exception that stopped the package checker's
           pass part way (the summarizer then ran on a partly rescaled copy, as a script would).
batch   -> reads a JSON list of jobs from stdin, each {"op": "check"|"package"|"score",
           "ruleset": "3.1.0", "usage": "training", "history": null|"TAG", "paths": [...]}, and
           prints a JSON list of the outputs above, in order. One process for everything (one
           more per other version named): use it from other tests.
"""

import argparse
import contextlib
import glob as _glob_module
import inspect
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # never write __pycache__ into the reference data

HISTORY_TAGS = ('0.7.1', '1.0.0', '1.1.0-rc4', '2.0.0', '2.1.0', 'hpc-3.0.0')


def _reference_root():
    env = os.environ.get('REFEREE_REFERENCE_DATA')
    if env:
        return env
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(os.path.dirname(repo), 'shared')


def package_root(history=None):
    """The folder holding mlperf_logging/: today's, or the release named by `history`."""
    if history:
        return os.path.join(_reference_root(), 'mlperf', 'logging-history', history)
    return os.path.join(_reference_root(), 'mlperf', 'logging')


class _Modules:
    pass


def _import_consortium(history=None):
    root = package_root(history)
    if not os.path.isdir(os.path.join(root, 'mlperf_logging')):
        raise ImportError('no mlperf_logging under %s (set REFEREE_REFERENCE_DATA%s)' % (
            root, '' if not history else '; --history takes one of ' + ', '.join(HISTORY_TAGS)))
    loaded = sys.modules.get('mlperf_logging')
    if loaded is not None:
        where = os.path.dirname(os.path.dirname(os.path.abspath(loaded.__file__)))
        if os.path.realpath(where) != os.path.realpath(root):
            raise ImportError('this process imported mlperf_logging from %s already; one process per '
                              'version (run_batch() starts one)' % where)
    for dep in ('numpy', 'scipy', 'pandas', 'yaml'):
        __import__(dep)  # an ImportError here names the missing Debian package's module
    sys.path.insert(0, root)
    m = _Modules()
    from mlperf_logging.compliance_checker import mlp_compliance
    from mlperf_logging.compliance_checker import mlp_parser
    from mlperf_logging.package_checker import package_checker
    from mlperf_logging.result_summarizer import result_summarizer
    from mlperf_logging.system_desc_checker import system_desc_checker
    try:
        from mlperf_logging import benchmark_meta
    except ImportError:  # before 1.1: each tool has its own lists
        benchmark_meta = None
    m.mlp_compliance, m.mlp_parser, m.package_checker = mlp_compliance, mlp_parser, package_checker
    m.result_summarizer, m.system_desc_checker, m.benchmark_meta = result_summarizer, system_desc_checker, benchmark_meta
    mlp_compliance.yaml = _CachedYaml(mlp_compliance.yaml)
    return m


def _plain_copy(x):
    # What yaml's BaseLoader builds: dicts, lists and strings.
    if isinstance(x, dict):
        return {k: _plain_copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain_copy(v) for v in x]
    return x


class _CachedYaml:
    """Stands for the yaml module inside mlp_compliance: each rule file is parsed once per
    process and handed out as a fresh copy (the checker parses every file for every log, which
    is most of its time on small logs; the rule files do not change while the oracle runs)."""

    def __init__(self, real):
        self._real = real
        self._cache = {}

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load(self, stream, Loader=None):
        name = getattr(stream, 'name', None)
        if not isinstance(name, str):
            return self._real.load(stream, Loader=Loader)
        key = (os.path.abspath(name), Loader)
        if key not in self._cache:
            self._cache[key] = self._real.load(stream, Loader=Loader)
        return _plain_copy(self._cache[key])


class _Capture(logging.Handler):
    """Collects the consortium's logging records as "LEVEL - message" strings."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records = []
        self.printed = io.StringIO()

    def emit(self, record):
        try:
            self.records.append('%s - %s' % (record.levelname, record.getMessage()))
        except Exception:  # a record whose arguments do not format
            self.records.append('%s - %s' % (record.levelname, record.msg))

    def prints(self):
        return ['PRINT - ' + line for line in self.printed.getvalue().splitlines() if line.strip()]


@contextlib.contextmanager
def _captured(keep_prints=False):
    """Route logging to a capture handler and the tools' print()s to stderr (or, with
    keep_prints, into the capture: the releases before 1.1 print their findings)."""
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    cap = _Capture()
    root.handlers = [cap]
    root.setLevel(logging.INFO)
    try:
        with contextlib.redirect_stdout(cap.printed if keep_prints else sys.stderr):
            yield cap
    finally:
        root.handlers = saved_handlers
        root.setLevel(saved_level)


def _crash_text(exc):
    return '%s: %s' % (type(exc).__name__, exc)


def _call(func, **values):
    """Calls one of the consortium's functions with the arguments its signature names (the
    releases add and drop parameters); names it has and `values` lacks get False."""
    args = []
    for name, p in inspect.signature(func).parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            break
        if name in values:
            args.append(values[name])
        elif p.default is not inspect.Parameter.empty:
            break
        else:
            args.append(False)
    return func(*args)


_TOO_MANY = 'Found too many errors'  # what the package checkers of 0.7.1 and 1.0.0 raise


def _release_shim(tmp, history):
    """The 1.0.0 release's RCP checker opens mlperf_logging/rcp_checker/<ruleset>/rcps_*.json
    relative to the working directory (it ran from a clone's root): the tools run in `tmp`, so
    a link there to the release's package stands for that clone."""
    if history:
        os.symlink(os.path.join(os.path.abspath(package_root(history)), 'mlperf_logging'),
                   os.path.join(tmp, 'mlperf_logging'))


class Oracle:
    def __init__(self, history=None):
        self.history = history
        m = _import_consortium(history)
        self.m = m
        (self.mlp_compliance, self.mlp_parser, self.package_checker, self.result_summarizer,
         self.system_desc_checker) = (m.mlp_compliance, m.mlp_parser, m.package_checker, m.result_summarizer,
                                      m.system_desc_checker)
        # Releases before 1.1 know no usage: make_checker(ruleset, quiet, werror) and rule files
        # under compliance_checker/<ruleset>/.
        self.legacy = 'usage' not in inspect.signature(self.mlp_compliance.make_checker).parameters

    # ---------------------------------------------------------------- helpers per release
    def _make_checker(self, usage, ruleset, quiet=False):
        mc = self.mlp_compliance
        if self.legacy:
            return mc.make_checker(ruleset, quiet, False), '%s/common.yaml' % ruleset
        return mc.make_checker(usage, ruleset, quiet, False), '%s_%s/common.yaml' % (usage, ruleset)

    def allowed_benchmarks(self, usage, ruleset):
        if self.m.benchmark_meta is not None:
            return self.m.benchmark_meta.get_allowed_benchmarks(usage, ruleset)
        pc = self.package_checker
        short = ruleset.replace('.', '')[:2]  # 0.7.0 -> 07, 1.0.0 -> 10
        for name in ('_ALLOWED_BENCHMARKS_V' + short, '_ALLOWED_BENCHMARKS'):
            if hasattr(pc, name):
                return getattr(pc, name)
        raise ValueError('ruleset %s is not supported by release %s' % (ruleset, self.history))

    def _check_system(self, path, usage, ruleset):
        sdc = self.system_desc_checker
        if hasattr(sdc, 'check_system_desc'):
            return sdc.check_system_desc(path, usage, ruleset)
        return sdc.check_training_system_desc(path, ruleset)

    def _systems_counted(self, ruleset):
        # The package checker of 0.7.1 reads no system description; 1.0.0 checks them for 1.0.0;
        # later ones from 1.0.0 on (the set each release lists).
        if self.history == '0.7.1':
            return False
        return ruleset not in ('0.6.0', '0.7.0')

    def _run_package_checker(self, pkg, usage, ruleset):
        """The package checker's result pass on pkg: "pass"|"fail", or raises."""
        pc = self.package_checker
        try:
            ok = _call(pc.check_training_result_files, folder=pkg, usage=usage, ruleset=ruleset)
        except Exception as e:
            if str(e).startswith(_TOO_MANY):
                return 'fail'
            raise
        if isinstance(ok, bool):
            return 'pass' if ok else 'fail'
        return None  # the caller reads the log

    # ---------------------------------------------------------------- compliance checker
    def check_file(self, path, ruleset, usage='training'):
        mc = self.mlp_compliance
        mc.enqueued_configs.clear()  # a crash leaves the module-level queue non-empty
        checker, config_file = self._make_checker(usage, ruleset)
        out = {'compliant': None, 'messages': [], 'warnings': [], 'parse_errors': [], 'crash': None}
        with _captured():
            try:
                valid, _, _, _ = mc.main(path, config_file, checker)
                out['compliant'] = bool(valid)
            except BaseException as e:  # the checker's own tracebacks are verdicts to compare
                if isinstance(e, KeyboardInterrupt):
                    raise
                out['crash'] = _crash_text(e)
            finally:
                mc.enqueued_configs.clear()
        out['warnings'] = [str(w) for w in checker.warnings.values()]
        out['messages'] = [str(m) for m in checker.overwritable.values()] + [str(m) for m in checker.not_overwritable]
        try:
            with _captured():
                _, errors = self.mlp_parser.parse_file(path, ruleset=ruleset)
            out['parse_errors'] = ['%s: %s' % (str(line).rstrip('\n'), err) for line, err in errors]
        except Exception as e:
            out['parse_errors'] = ['parser raised ' + _crash_text(e)]
        return out

    def check(self, paths, ruleset, usage='training'):
        return {'files': {p: self.check_file(p, ruleset, usage) for p in paths}}

    # ---------------------------------------------------------------- package checker
    @staticmethod
    def _copy_dir(src, dst):
        shutil.copytree(src, dst, symlinks=True)

    def _dir_copy(self, org, system, rel, bench, tmp):
        """A package holding one result directory (results/<system>/<rel>), as the package
        checker needs it; rel is "<benchmark>" for training, "<scaling>/<benchmark>" for hpc."""
        pkg = os.path.join(tmp, os.path.basename(os.path.normpath(org)) or 'org')
        os.makedirs(os.path.join(pkg, 'systems'))
        os.makedirs(os.path.dirname(os.path.join(pkg, 'results', system, rel)))
        sysjson = os.path.join(org, 'systems', system + '.json')
        if os.path.exists(sysjson):
            shutil.copy(sysjson, os.path.join(pkg, 'systems'))
        params = os.path.join(org, 'results', system, 'package_checker_params')
        if os.path.isfile(params):
            shutil.copy(params, os.path.join(pkg, 'results', system))
        self._copy_dir(os.path.join(org, 'results', system, rel), os.path.join(pkg, 'results', system, rel))
        code = os.path.join(org, 'benchmarks', bench)
        if os.path.isdir(code):
            os.makedirs(os.path.join(pkg, 'benchmarks'))
            os.symlink(os.path.abspath(code), os.path.join(pkg, 'benchmarks', bench))
        return pkg

    @staticmethod
    def _result_dirs(org, usage):
        """[(system, rel, benchmark)] of the package's result directories, sorted."""
        results = os.path.join(org, 'results')
        out = []
        for system in sorted(os.listdir(results)) if os.path.isdir(results) else []:
            sdir = os.path.join(results, system)
            if not os.path.isdir(sdir):
                continue
            if usage == 'hpc':
                for scaling in sorted(os.listdir(sdir)):
                    if not os.path.isdir(os.path.join(sdir, scaling)):
                        continue
                    for bench in sorted(os.listdir(os.path.join(sdir, scaling))):
                        if os.path.isdir(os.path.join(sdir, scaling, bench)):
                            out.append((system, scaling + '/' + bench, bench))
            else:
                for bench in sorted(os.listdir(sdir)):
                    if os.path.isdir(os.path.join(sdir, bench)):
                        out.append((system, bench, bench))
        return out

    def check_package(self, org, ruleset, usage='training'):
        out = {'verdict': 'pass', 'crash': None, 'systems': {}, 'benchmarks': {}}
        allowed = self.allowed_benchmarks(usage, ruleset)
        counted = self._systems_counted(ruleset)
        for name in sorted(os.listdir(os.path.join(org, 'systems')) if os.path.isdir(os.path.join(org, 'systems')) else []):
            if not name.endswith('.json'):
                continue
            entry = {'valid': None, 'crash': None, 'log': [], 'counted': counted}
            with _captured(keep_prints=self.legacy) as cap:
                try:
                    valid, _, _, _ = self._check_system(os.path.join(org, 'systems', name), usage, ruleset)
                    entry['valid'] = bool(valid)
                except Exception as e:
                    entry['crash'] = _crash_text(e)
            entry['log'] = cap.records + cap.prints()
            if entry['valid'] is not True and counted:
                out['verdict'] = 'fail'
            out['systems'][name] = entry
        for system, rel, bench in self._result_dirs(org, usage):
            key = system + '/' + rel
            entry = {'verdict': None, 'crash': None, 'log': []}
            if bench not in allowed:
                entry['verdict'] = 'skipped'
                out['benchmarks'][key] = entry
                continue
            with tempfile.TemporaryDirectory(prefix='oracle-') as tmp:
                _release_shim(tmp, self.history)
                pkg = self._dir_copy(org, system, rel, bench, tmp)
                cwd = os.getcwd()
                os.chdir(tmp)
                self.mlp_compliance.enqueued_configs.clear()
                with _captured(keep_prints=self.legacy) as cap:
                    try:
                        entry['verdict'] = self._run_package_checker(pkg, usage, ruleset)
                    except Exception as e:
                        entry['verdict'] = 'crash'
                        entry['crash'] = _crash_text(e)
                    finally:
                        os.chdir(cwd)
                        self.mlp_compliance.enqueued_configs.clear()
                entry['log'] = [r for r in cap.records + cap.prints() if not r.startswith(('INFO - ---', 'PRINT - ---'))]
                if entry['verdict'] is None:
                    failed = any('PACKAGE CHECKER FOUND ERRORS' in r for r in cap.records)
                    entry['verdict'] = 'fail' if failed else 'pass'
            if entry['verdict'] != 'pass':
                out['verdict'] = 'fail' if out['verdict'] != 'crash' else 'crash'
            if entry['verdict'] == 'crash':
                out['verdict'] = 'crash'
            out['benchmarks'][key] = entry
        return out

    def package(self, paths, ruleset, usage='training'):
        return {'packages': {p: self.check_package(p, ruleset, usage) for p in paths}}

    # ---------------------------------------------------------------- result summarizer
    def _summarize(self, pkg, ruleset, usage):
        if not hasattr(self.result_summarizer, '_compute_strong_scaling_scores'):
            return self._summarize_legacy(pkg, ruleset)
        rs = self.result_summarizer
        scores, crash = {}, None
        factors = {}
        originals = {name: getattr(rs, name) for name in
                     ('_compute_strong_scaling_scores', '_compute_weak_scaling_scores', '_get_scaling_factor')
                     if hasattr(rs, name)}

        def strong(*args, **kwargs):
            res = originals['_compute_strong_scaling_scores'](*args, **kwargs)
            basic, second = res if isinstance(res, tuple) else (res, {})
            # Today's second dict is the detailed table ("bench:Energy", ...); hpc-3.0.0's holds
            # the energies by benchmark.
            detailed = any(':' in k for k in second)
            system_folder = args[1] if len(args) > 1 else kwargs['system_folder']
            parent = os.path.join(system_folder, 'strong') if usage == 'hpc' else system_folder
            system = os.path.basename(os.path.normpath(system_folder))
            for bench in sorted(os.listdir(parent)) if os.path.isdir(parent) else []:
                bdir = os.path.join(parent, bench)
                if not os.path.isdir(bdir):
                    continue
                b = rs._benchmark_alias(bench)
                if b not in basic and ('%s:rcp_scaling_factor' % b) not in second:
                    continue
                if detailed:
                    rcp = second.get('%s:RCP' % b)
                    scores[system + '/' + bench] = {
                        'minutes': basic.get(b), 'energy': second.get('%s:Energy' % b),
                        'rcp': rcp if rcp else None, 'scaling_factor': second.get('%s:rcp_scaling_factor' % b)}
                else:
                    scores[system + '/' + bench] = {
                        'minutes': basic.get(b), 'energy': second.get(b), 'rcp': None,
                        'scaling_factor': factors.get(os.path.normpath(bdir))}
            return res

        def weak(*args, **kwargs):
            res = originals['_compute_weak_scaling_scores'](*args, **kwargs)
            table = res[0] if isinstance(res, tuple) else res
            system_folder = args[1] if len(args) > 1 else kwargs['system_folder']
            parent = os.path.join(system_folder, 'weak')
            system = os.path.basename(os.path.normpath(system_folder))
            for bench in sorted(os.listdir(parent)) if os.path.isdir(parent) else []:
                if not os.path.isdir(os.path.join(parent, bench)):
                    continue
                b = rs._benchmark_alias(bench)
                if '%s:time_to_train_all' % b not in table:
                    continue
                scores[system + '/weak/' + bench] = {
                    metric: table.get('%s:%s' % (b, metric)) for metric in
                    ('time_to_train_all', 'number_of_models', 'instance_scale')}
            return res

        def scaling_factor(folder):
            f = originals['_get_scaling_factor'](folder)
            factors[os.path.normpath(folder)] = f
            return f

        rs._compute_strong_scaling_scores = strong
        if '_compute_weak_scaling_scores' in originals:
            rs._compute_weak_scaling_scores = weak
        if '_get_scaling_factor' in originals:
            rs._get_scaling_factor = scaling_factor
        self.mlp_compliance.enqueued_configs.clear()
        with _captured():
            try:
                _call(rs.summarize_results, folder=pkg, usage=usage, ruleset=ruleset)
            except Exception as e:
                crash = _crash_text(e)
            finally:
                for name, f in originals.items():
                    setattr(rs, name, f)
                self.mlp_compliance.enqueued_configs.clear()
        return {'crash': crash, 'scores': scores}

    def _summarize_legacy(self, pkg, ruleset):
        """The summarizers of 0.7.1 and 1.0.0 print their table only: the figure of each
        directory is taken from _compute_olympic_average as it returns, the directory from the
        glob of its result files just before."""
        rs = self.result_summarizer
        scores, crash = {}, None
        allowed = set(self.allowed_benchmarks('training', ruleset))
        current = {'key': None}
        real_glob, real_avg = rs.glob, rs._compute_olympic_average
        suffix = '/result_*.txt'

        class _Glob:
            @staticmethod
            def glob(pattern, recursive=False):
                if pattern.endswith(suffix):
                    parts = os.path.normpath(pattern[:-len(suffix)]).split(os.sep)
                    current['key'] = None
                    if rs._benchmark_alias(parts[-1]) in allowed:
                        current['key'] = parts[-2] + '/' + parts[-1]
                        scores[current['key']] = {'minutes': None, 'energy': None, 'rcp': None,
                                                  'scaling_factor': None}
                return real_glob.glob(pattern, recursive=recursive)

        def average(*args):
            value = real_avg(*args)
            if current['key'] is not None:
                scores[current['key']]['minutes'] = value
            return value

        rs.glob, rs._compute_olympic_average = _Glob, average
        self.mlp_compliance.enqueued_configs.clear()
        with _captured():
            try:
                rs.summarize_results(pkg, ruleset)
            except Exception as e:
                crash = _crash_text(e)
            finally:
                rs.glob, rs._compute_olympic_average = real_glob, real_avg
                self.mlp_compliance.enqueued_configs.clear()
        return {'crash': crash, 'scores': scores}

    def score_package(self, org, ruleset, usage='training'):
        out = {}
        for mode in ('published', 'pipeline'):
            with tempfile.TemporaryDirectory(prefix='oracle-') as tmp:
                _release_shim(tmp, self.history)
                pkg = os.path.join(tmp, os.path.basename(os.path.normpath(org)) or 'org')
                self._copy_dir(org, pkg)
                cwd = os.getcwd()
                os.chdir(tmp)
                try:
                    checker_crash = None
                    if mode == 'pipeline':
                        self.mlp_compliance.enqueued_configs.clear()
                        with _captured(keep_prints=self.legacy):
                            try:
                                self._run_package_checker(pkg, usage, ruleset)
                            except Exception as e:  # it stopped part way: later directories keep their scaling.json
                                checker_crash = _crash_text(e)
                    out[mode] = self._summarize(pkg, ruleset, usage)
                    if mode == 'pipeline':
                        out[mode]['checker_crash'] = checker_crash
                finally:
                    os.chdir(cwd)
        return out

    def score(self, paths, ruleset, usage='training'):
        return {'packages': {p: self.score_package(p, ruleset, usage) for p in paths}}

    def run(self, op, paths, ruleset, usage='training'):
        if op == 'check':
            return self.check(paths, ruleset, usage)
        if op == 'package':
            return self.package(paths, ruleset, usage)
        if op == 'score':
            return self.score(paths, ruleset, usage)
        raise ValueError('unknown op %r (check, package, score)' % op)


def run_batch(jobs, history=None, python=None):
    """Runs jobs ({"op", "ruleset", "usage", "paths"}) in a child oracle process importing the
    release `history` (None: today's package); returns the list of outputs. Raises ImportError
    when that process cannot load the tools, RuntimeError when it fails otherwise."""
    return BatchProcess(jobs, history, python).result()


class BatchProcess:
    """run_batch() in the background: the child oracle works while this process does
    something else; result() waits for it and returns the list of outputs (raising as
    run_batch does). Its prints go to a temporary file, so that it never waits on a pipe."""

    def __init__(self, jobs, history=None, python=None):
        self.history = history
        cmd = [python or sys.executable, '-B', os.path.abspath(__file__), 'batch']
        if history:
            cmd += ['--history', history]
        self._out = tempfile.TemporaryFile(mode='w+')
        self._err = tempfile.TemporaryFile(mode='w+')
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=self._out, stderr=self._err, text=True)
        self._proc.stdin.write(json.dumps([dict(j, history=history) for j in jobs]))
        self._proc.stdin.close()

    def result(self):
        rc = self._proc.wait()
        self._out.seek(0)
        self._err.seek(0)
        out, err = self._out.read(), self._err.read()
        self._out.close()
        self._err.close()
        if rc == 2:
            raise ImportError(err.strip().splitlines()[-1] if err.strip() else 'oracle exited 2')
        if rc != 0:
            raise RuntimeError('oracle (%s) exited %d: %s' % (self.history or 'today', rc, err[-3000:]))
        return json.loads(out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='mlperf_oracle.py', description=__doc__.split('\n')[0])
    parser.add_argument('op', choices=['check', 'package', 'score', 'batch'])
    parser.add_argument('paths', nargs='*')
    parser.add_argument('--ruleset', default='3.1.0')
    parser.add_argument('--usage', default='training')
    parser.add_argument('--history', default=None,
                        help='import mlperf_logging as released with TAG (%s)' % ', '.join(HISTORY_TAGS))
    args = parser.parse_intermixed_args(argv)
    history = args.history or None
    try:
        oracle = Oracle(history)
    except ImportError as e:
        print('mlperf_oracle: cannot load the consortium\'s tools: %s' % e, file=sys.stderr)
        return 2
    if args.op == 'batch':
        jobs = json.load(sys.stdin)
        result = [None] * len(jobs)
        others = {}
        for i, j in enumerate(jobs):
            h = j.get('history', history) or None
            if h != history:
                others.setdefault(h, []).append(i)
                continue
            result[i] = oracle.run(j['op'], j['paths'], j.get('ruleset', args.ruleset), j.get('usage', args.usage))
        for h, idx in others.items():
            sub = [dict(jobs[i], ruleset=jobs[i].get('ruleset', args.ruleset), usage=jobs[i].get('usage', args.usage))
                   for i in idx]
            try:
                for i, r in zip(idx, run_batch(sub, h)):
                    result[i] = r
            except ImportError as e:
                print('mlperf_oracle: cannot load the consortium\'s tools (%s): %s' % (h, e), file=sys.stderr)
                return 2
    else:
        result = oracle.run(args.op, args.paths, args.ruleset, args.usage)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
