#!/usr/bin/python3
"""The consortium's package checker on a package of one of referee's own rule sets.

    /usr/bin/python3 tests/oracle/ruleset_package_checker.py ORG_DIR [--ruleset mini-1.0.0] [--rules rules/sets]

The consortium's tools find their rules inside their own package
(mlperf_logging/compliance_checker/<usage>_<version>/, rcp_checker/<usage>_<version>/)
and keep the number of runs per benchmark in code (benchmark_meta, rcp_checker). referee's
rule sets are laid out the same way (rules/sets/README.md): set mini-1.0.0 is usage "mini",
version "1.0.0". This script runs the consortium's own, unmodified code on such a set:

1. it builds, in a temporary folder, a view of mlperf_logging from the reference data
   ($REFEREE_REFERENCE_DATA/mlperf/logging, by default ../shared beside the repository):
   every file a symbolic link to the original, with compliance_checker/mini_1.0.0 and
   rcp_checker/mini_1.0.0 linked to referee's rule set beside the consortium's rounds;
2. it tells benchmark_meta and the RCP checker the set's benchmarks and their numbers of
   runs, read from the set's facts file (facts/mini_1.0.0.yaml), which is what the
   consortium's code would hold for a round of its own;
3. it runs package_checker.check_training_package on a copy of ORG_DIR (the checker
   writes scaling.json and a log) and reads its verdict from its log: the package passes
   when the checker logs no error and ends with "PACKAGE CHECKER FOUND NO ERRORS".

The checker's log goes to stderr; the verdict line to stdout. Exit status: 0 the package
passes, 1 it fails, 2 the checker could not be run (mlperf_logging, its Python
dependencies or the rule set missing: the message says which).
"""

import argparse
import logging
import os
import shutil
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def reference_root():
    env = os.environ.get('REFEREE_REFERENCE_DATA')
    return env if env else os.path.join(os.path.dirname(REPO), 'shared')


def link_tree(src, dst, extra):
    """dst/ holds a link to every entry of src/, and the entries of `extra` (name -> path)."""
    os.makedirs(dst)
    for name in os.listdir(src):
        if name == '__pycache__':
            continue
        os.symlink(os.path.join(src, name), os.path.join(dst, name))
    for name, path in extra.items():
        if os.path.lexists(os.path.join(dst, name)):
            os.remove(os.path.join(dst, name))
        os.symlink(path, os.path.join(dst, name))


def main(argv=None):
    p = argparse.ArgumentParser(prog='ruleset_package_checker.py', description=__doc__.split('\n')[0])
    p.add_argument('org_dir')
    p.add_argument('--ruleset', default='mini-1.0.0')
    p.add_argument('--rules', default=os.path.join(REPO, 'rules', 'sets'))
    a = p.parse_args(argv)

    folder = a.ruleset.replace('-', '_', 1)           # mini-1.0.0 -> mini_1.0.0
    usage, _, version = folder.partition('_')
    rules = os.path.abspath(a.rules)
    compliance = os.path.join(rules, 'compliance_checker', folder)
    rcps = os.path.join(rules, 'rcp_checker', folder)
    facts_file = os.path.join(rules, 'facts', folder + '.yaml')
    for path in (compliance, rcps, facts_file):
        if not os.path.exists(path):
            print('ruleset_package_checker.py: %s not found (rule set %s under %s)' % (path, a.ruleset, rules),
                  file=sys.stderr)
            return 2
    if not os.path.isdir(os.path.join(a.org_dir, 'results')):
        print('ruleset_package_checker.py: %s is not a package (no results/ folder)' % a.org_dir, file=sys.stderr)
        return 2
    consortium = os.path.join(reference_root(), 'mlperf', 'logging', 'mlperf_logging')
    if not os.path.isdir(consortium):
        print('ruleset_package_checker.py: no mlperf_logging under %s (set REFEREE_REFERENCE_DATA)'
              % os.path.dirname(consortium), file=sys.stderr)
        return 2
    try:
        import yaml
        for dep in ('numpy', 'scipy', 'pandas'):
            __import__(dep)
    except ImportError as e:
        print('ruleset_package_checker.py: %s (Debian: python3-numpy python3-scipy python3-pandas python3-yaml)' % e,
              file=sys.stderr)
        return 2
    with open(facts_file) as f:
        facts = yaml.safe_load(f)
    runs = {name: int(b['runs']) for name, b in facts['benchmarks'].items()}

    with tempfile.TemporaryDirectory(prefix='referee-consortium-') as tmp:
        view = os.path.join(tmp, 'view', 'mlperf_logging')
        os.makedirs(os.path.dirname(view))
        link_tree(consortium, view, {})
        for sub, path in (('compliance_checker', compliance), ('rcp_checker', rcps)):
            os.remove(os.path.join(view, sub))
            link_tree(os.path.join(consortium, sub), os.path.join(view, sub), {folder: path})
        sys.path.insert(0, os.path.dirname(view))
        sys.dont_write_bytecode = True  # nothing written beside the reference data's sources
        from mlperf_logging import benchmark_meta
        from mlperf_logging.rcp_checker import rcp_checker
        from mlperf_logging.package_checker import package_checker
        # What the consortium's code keeps for each of its rounds, for this set.
        benchmark_meta._ALL_RESULT_FILE_COUNTS[usage] = dict(runs)
        benchmark_meta._ALL_ALLOWED_BENCHMARKS[usage] = {version: sorted(runs)}
        rcp_checker.submission_runs[usage] = dict(runs)

        pkg = os.path.join(tmp, 'package', os.path.basename(os.path.normpath(a.org_dir)))
        shutil.copytree(a.org_dir, pkg, symlinks=True)
        errors, success = [], []

        class Verdict(logging.Handler):
            def emit(self, record):
                if record.levelno >= logging.ERROR:
                    errors.append(record.getMessage())
                elif 'PACKAGE CHECKER FOUND NO ERRORS' in record.getMessage():
                    success.append(True)

        root = logging.getLogger()
        root.setLevel(logging.INFO)
        out = logging.StreamHandler(sys.stderr)
        out.setFormatter(logging.Formatter('%(levelname)s - %(message)s'))
        verdict = Verdict()
        root.addHandler(out)
        root.addHandler(verdict)
        cwd = os.getcwd()
        os.chdir(os.path.dirname(pkg))
        saved_stdout = sys.stdout
        sys.stdout = sys.stderr  # the checker's own print()s
        try:
            package_checker.check_training_package(pkg, usage, version, False, False, False, False, False,
                                                   os.path.join(tmp, 'package_checker.log'))
        except Exception as e:  # a crash is a verdict too, never a pass
            errors.append('the package checker raised %s: %s' % (type(e).__name__, e))
        finally:
            sys.stdout = saved_stdout
            os.chdir(cwd)
            root.removeHandler(out)
            root.removeHandler(verdict)
    if not errors and not success:
        errors.append('the package checker did not say "PACKAGE CHECKER FOUND NO ERRORS"')
    if errors:
        print('FAIL: the consortium\'s package checker (usage %s, ruleset %s) found %d error(s) in %s: %s'
              % (usage, version, len(errors), a.org_dir, '; '.join(errors)))
        return 1
    print('PASS: the consortium\'s package checker (usage %s, ruleset %s) found no errors in %s'
          % (usage, version, a.org_dir))
    return 0


if __name__ == '__main__':
    sys.exit(main())
