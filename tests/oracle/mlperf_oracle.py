#!/usr/bin/python3
"""The consortium's tools (mlperf_logging) as an oracle: many inputs, one process, JSON out.

Run it with Debian's Python (python3-numpy, python3-scipy, python3-pandas, python3-yaml):

    /usr/bin/python3 tests/oracle/mlperf_oracle.py check   --ruleset 3.1.0 FILE...
    /usr/bin/python3 tests/oracle/mlperf_oracle.py package --ruleset 3.1.0 ORG_DIR...
    /usr/bin/python3 tests/oracle/mlperf_oracle.py score   --ruleset 3.1.0 ORG_DIR...
    /usr/bin/python3 tests/oracle/mlperf_oracle.py batch   < jobs.json

mlperf_logging is imported from $REFEREE_REFERENCE_DATA/mlperf/logging, by default from
../shared/mlperf/logging beside the repository (as tests/reference_data.h finds it).
`--usage` defaults to training. Nothing is written into the inputs: packages are copied to a
temporary folder first (the package checker and the summarizer write scaling.json files).
Exit status: 0 when the oracle ran (whatever the verdicts), 2 when it could not start
(mlperf_logging or its Python dependencies missing: the message says which).

Output (one JSON object on stdout; the consortium's own prints go to stderr):

check   -> {"files": {FILE: {"compliant": true|false|null, "messages": [...],
                             "warnings": [...], "parse_errors": [...], "crash": null|"Type: msg"}}}
           `compliant` is the compliance checker's verdict (mlp_compliance.main, as its __main__
           runs it); `messages` are its failures, `warnings` its warnings, `parse_errors` the
           lines its parser rejected. When the checker raises, `compliant` is null and `crash`
           names the exception.
package -> {"packages": {ORG_DIR: {"verdict": "pass"|"fail"|"crash", "crash": null|str,
             "systems": {"X.json": {"valid": bool|null, "crash": null|str, "log": [...]}},
             "benchmarks": {"SYSTEM/BENCHMARK": {"verdict": "pass"|"fail"|"crash"|"skipped",
                            "crash": null|str, "log": ["LEVEL - message", ...]}}}}}
           Each result directory is checked by the package checker's own
           check_training_result_files on a copy of the package holding that directory alone
           (with its system description, package_checker_params and benchmarks/ code), so
           each verdict is the package checker's for that directory. The package verdict is
           "pass" when every system description and every directory passes.
score   -> {"packages": {ORG_DIR: {"published": SCORES, "pipeline": SCORES}}} where SCORES is
           {"crash": null|str, "scores": {"SYSTEM/BENCHMARK": {"minutes": float|null,
            "energy": float|null, "rcp": str|null, "scaling_factor": float|null}}}.
           "published": result_summarizer.summarize_results on a fresh copy (honours the
           package's scaling.json files). "pipeline": the package checker's result pass on a
           copy first (it rewrites scaling.json), then the summarizer on that copy.
batch   -> reads a JSON list of jobs from stdin, each {"op": "check"|"package"|"score",
           "ruleset": "3.1.0", "usage": "training", "paths": [...]}, and prints a JSON list of
           the outputs above, in order. One process for everything: use it from other tests.
"""

import argparse
import contextlib
import io
import json
import logging
import os
import shutil
import sys
import tempfile
import traceback


def _reference_root():
    env = os.environ.get('REFEREE_REFERENCE_DATA')
    if env:
        return env
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(os.path.dirname(repo), 'shared')


def _import_consortium():
    root = os.path.join(_reference_root(), 'mlperf', 'logging')
    if not os.path.isdir(os.path.join(root, 'mlperf_logging')):
        raise ImportError('no mlperf_logging under %s (set REFEREE_REFERENCE_DATA)' % root)
    sys.path.insert(0, root)
    for dep in ('numpy', 'scipy', 'pandas', 'yaml'):
        __import__(dep)  # an ImportError here names the missing Debian package's module
    from mlperf_logging.compliance_checker import mlp_compliance
    from mlperf_logging.compliance_checker import mlp_parser
    from mlperf_logging.package_checker import package_checker
    from mlperf_logging.result_summarizer import result_summarizer
    from mlperf_logging.system_desc_checker import system_desc_checker
    mlp_compliance.yaml = _CachedYaml(mlp_compliance.yaml)
    return mlp_compliance, mlp_parser, package_checker, result_summarizer, system_desc_checker


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

    def emit(self, record):
        try:
            self.records.append('%s - %s' % (record.levelname, record.getMessage()))
        except Exception:  # a record whose arguments do not format
            self.records.append('%s - %s' % (record.levelname, record.msg))


@contextlib.contextmanager
def _captured():
    """Route logging to a capture handler and the tools' print()s to stderr."""
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    cap = _Capture()
    root.handlers = [cap]
    root.setLevel(logging.INFO)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield cap
    finally:
        root.handlers = saved_handlers
        root.setLevel(saved_level)


def _crash_text(exc):
    return '%s: %s' % (type(exc).__name__, exc)


class Oracle:
    def __init__(self):
        (self.mlp_compliance, self.mlp_parser, self.package_checker, self.result_summarizer,
         self.system_desc_checker) = _import_consortium()

    # ---------------------------------------------------------------- compliance checker
    def check_file(self, path, ruleset, usage='training'):
        mc = self.mlp_compliance
        mc.enqueued_configs.clear()  # a crash leaves the module-level queue non-empty
        checker = mc.make_checker(usage, ruleset, False, False)
        out = {'compliant': None, 'messages': [], 'warnings': [], 'parse_errors': [], 'crash': None}
        config_file = '%s_%s/common.yaml' % (usage, ruleset)
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

    def _dir_copy(self, org, system, bench, tmp):
        """A package holding one result directory, as the package checker needs it."""
        pkg = os.path.join(tmp, os.path.basename(os.path.normpath(org)) or 'org')
        os.makedirs(os.path.join(pkg, 'systems'))
        os.makedirs(os.path.join(pkg, 'results', system))
        sysjson = os.path.join(org, 'systems', system + '.json')
        if os.path.exists(sysjson):
            shutil.copy(sysjson, os.path.join(pkg, 'systems'))
        params = os.path.join(org, 'results', system, 'package_checker_params')
        if os.path.isfile(params):
            shutil.copy(params, os.path.join(pkg, 'results', system))
        self._copy_dir(os.path.join(org, 'results', system, bench), os.path.join(pkg, 'results', system, bench))
        code = os.path.join(org, 'benchmarks', bench)
        if os.path.isdir(code):
            os.makedirs(os.path.join(pkg, 'benchmarks'))
            os.symlink(os.path.abspath(code), os.path.join(pkg, 'benchmarks', bench))
        return pkg

    def check_package(self, org, ruleset, usage='training'):
        pc = self.package_checker
        out = {'verdict': 'pass', 'crash': None, 'systems': {}, 'benchmarks': {}}
        from mlperf_logging.benchmark_meta import get_allowed_benchmarks
        allowed = get_allowed_benchmarks(usage, ruleset)
        for name in sorted(os.listdir(os.path.join(org, 'systems')) if os.path.isdir(os.path.join(org, 'systems')) else []):
            if not name.endswith('.json'):
                continue
            entry = {'valid': None, 'crash': None, 'log': []}
            with _captured() as cap:
                try:
                    valid, _, _, _ = self.system_desc_checker.check_system_desc(
                        os.path.join(org, 'systems', name), usage, ruleset)
                    entry['valid'] = bool(valid)
                except Exception as e:
                    entry['crash'] = _crash_text(e)
            entry['log'] = cap.records
            if entry['valid'] is not True:
                out['verdict'] = 'fail'
            out['systems'][name] = entry
        results = os.path.join(org, 'results')
        for system in sorted(os.listdir(results)) if os.path.isdir(results) else []:
            if not os.path.isdir(os.path.join(results, system)):
                continue
            for bench in sorted(os.listdir(os.path.join(results, system))):
                if not os.path.isdir(os.path.join(results, system, bench)):
                    continue
                key = system + '/' + bench
                entry = {'verdict': None, 'crash': None, 'log': []}
                if bench not in allowed:
                    entry['verdict'] = 'skipped'
                    out['benchmarks'][key] = entry
                    continue
                with tempfile.TemporaryDirectory(prefix='oracle-') as tmp:
                    pkg = self._dir_copy(org, system, bench, tmp)
                    cwd = os.getcwd()
                    os.chdir(tmp)
                    self.mlp_compliance.enqueued_configs.clear()
                    with _captured() as cap:
                        try:
                            ok = pc.check_training_result_files(pkg, usage, ruleset, False, False, False, False, False)
                            entry['verdict'] = 'pass' if ok else 'fail'
                        except Exception as e:
                            entry['verdict'] = 'crash'
                            entry['crash'] = _crash_text(e)
                        finally:
                            os.chdir(cwd)
                            self.mlp_compliance.enqueued_configs.clear()
                    entry['log'] = [r for r in cap.records if not r.startswith('INFO - ---')]
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
        rs = self.result_summarizer
        scores, crash = {}, None
        original = rs._compute_strong_scaling_scores

        def recording(desc, system_folder, usage_, ruleset_, division, rcp_bypass=False):
            basic, detailed = original(desc, system_folder, usage_, ruleset_, division, rcp_bypass=rcp_bypass)
            system = os.path.basename(os.path.normpath(system_folder))
            for bench in sorted(os.listdir(system_folder)):
                if not os.path.isdir(os.path.join(system_folder, bench)):
                    continue
                b = rs._benchmark_alias(bench)
                if b not in basic and ('%s:rcp_scaling_factor' % b) not in detailed:
                    continue
                rcp = detailed.get('%s:RCP' % b)
                scores[system + '/' + bench] = {
                    'minutes': basic.get(b),
                    'energy': detailed.get('%s:Energy' % b),
                    'rcp': rcp if rcp else None,
                    'scaling_factor': detailed.get('%s:rcp_scaling_factor' % b),
                }
            return basic, detailed

        rs._compute_strong_scaling_scores = recording
        self.mlp_compliance.enqueued_configs.clear()
        with _captured():
            try:
                rs.summarize_results(pkg, usage, ruleset)
            except Exception as e:
                crash = _crash_text(e)
            finally:
                rs._compute_strong_scaling_scores = original
                self.mlp_compliance.enqueued_configs.clear()
        return {'crash': crash, 'scores': scores}

    def score_package(self, org, ruleset, usage='training'):
        out = {}
        for mode in ('published', 'pipeline'):
            with tempfile.TemporaryDirectory(prefix='oracle-') as tmp:
                pkg = os.path.join(tmp, os.path.basename(os.path.normpath(org)) or 'org')
                self._copy_dir(org, pkg)
                cwd = os.getcwd()
                os.chdir(tmp)
                try:
                    if mode == 'pipeline':
                        self.mlp_compliance.enqueued_configs.clear()
                        with _captured():
                            try:
                                self.package_checker.check_training_result_files(
                                    pkg, usage, ruleset, False, False, False, False, False)
                            except Exception:
                                pass  # the pipeline goes on to the summarizer, as a script would
                    out[mode] = self._summarize(pkg, ruleset, usage)
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


def main(argv=None):
    parser = argparse.ArgumentParser(prog='mlperf_oracle.py', description=__doc__.split('\n')[0])
    parser.add_argument('op', choices=['check', 'package', 'score', 'batch'])
    parser.add_argument('paths', nargs='*')
    parser.add_argument('--ruleset', default='3.1.0')
    parser.add_argument('--usage', default='training')
    args = parser.parse_intermixed_args(argv)
    try:
        oracle = Oracle()
    except ImportError as e:
        print('mlperf_oracle: cannot load the consortium\'s tools: %s' % e, file=sys.stderr)
        return 2
    if args.op == 'batch':
        jobs = json.load(sys.stdin)
        result = [oracle.run(j['op'], j['paths'], j.get('ruleset', args.ruleset), j.get('usage', args.usage))
                  for j in jobs]
    else:
        result = oracle.run(args.op, args.paths, args.ruleset, args.usage)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
