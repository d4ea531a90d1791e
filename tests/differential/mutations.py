"""Mutations of real result logs, for the differential tests (differential.py).

Two kinds:
- CATALOG: every mutation class of tests/mutations_test.cc, as named cases. A file case
  rewrites one copy of a published log (checked by the compliance checker and
  `referee check`); a package case rewrites a mini package (one published result
  directory and its system description; checked by the package checker and
  `referee check-package`).
- random_mutation(): the fuzz's operators (line deletions, duplications, value and number
  edits, key swaps, JSON damage, reordering, truncation), applied 1 to 4 at a time.

Texts are handled as latin-1 strings (one character per byte, as the consortium reads
files), so any byte survives a round trip.
"""

import os
import random
import re
import shutil

# ----------------------------------------------------------------- sources (round 3.1)

RESULTS31 = os.path.join('mlperf', 'training_results_v3.1')


class Source:
    def __init__(self, org, system, benchmark):
        self.org, self.system, self.benchmark = org, system, benchmark

    def dir(self, ref):
        return os.path.join(ref, RESULTS31, self.org, 'results', self.system, self.benchmark)

    def file(self, ref, n):
        return os.path.join(self.dir(ref), 'result_%d.txt' % n)

    def system_json(self, ref):
        return os.path.join(ref, RESULTS31, self.org, 'systems', self.system + '.json')


GPT3 = Source('Azure+NVIDIA', 'ND_H100_v5_n1344_pytorch', 'gpt3')  # 3 files, ~2.6 MB each
BERT = Source('Azure', 'ND_H100_v5_pytorch', 'bert')  # 10 small files
SSD = Source('NVIDIA', 'eos_n8_ngc23.09_pytorch', 'ssd')  # 5 files


class MutationError(Exception):
    """A mutation did not find what it edits (the source logs changed)."""


def read_text(path):
    with open(path, 'rb') as f:
        return f.read().decode('latin-1')


def write_text(path, text):
    with open(path, 'wb') as f:
        f.write(text.encode('latin-1'))


def key_text(name):
    return '"key": "%s"' % name


def index_of(lines, needle, start=0):
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i
    raise MutationError('no line contains %r' % needle)


def replace_once(s, old, new):
    if old not in s:
        raise MutationError('%r not in %r' % (old, s[:200]))
    return s.replace(old, new, 1)


def drop_lines(lines, needle):
    kept = [l for l in lines if needle not in l]
    n = len(lines) - len(kept)
    lines[:] = kept
    return n


def with_time_ms(line, t):
    out, n = re.subn(r'"time_ms": [0-9.eE+-]+', '"time_ms": %d' % t, line, count=1)
    if not n:
        raise MutationError('no time_ms in %r' % line[:200])
    return out


def with_epoch_num(line, n):
    out, k = re.subn(r'"epoch_num": [0-9.eE+-]+', '"epoch_num": %s' % n, line)
    if not k:
        raise MutationError('no epoch_num in %r' % line[:200])
    return out


def first_init_start(lines):
    t = None
    for l in lines:
        if key_text('init_start') in l:
            m = re.search(r'"time_ms": ([0-9.eE+-]+)', l)
            v = float(m.group(1))
            t = v if t is None else min(t, v)
    if t is None:
        raise MutationError('no init_start')
    return int(t)


def edit(fn):
    """A text mutation from a function that edits the list of lines in place."""

    def apply(text):
        lines = text.split('\n')
        fn(lines)
        return '\n'.join(lines)

    return apply


# ------------------------------------------------------------------- file mutations

def _set(key, old, new):
    def f(lines):
        i = index_of(lines, key_text(key))
        lines[i] = replace_once(lines[i], old, new)
    return f


def _repeat(key, old=None, new=None, at_key=None):
    """Inserts a copy of key's line (value old -> new) after it, or before at_key's line."""
    def f(lines):
        i = index_of(lines, key_text(key))
        line = lines[i] if old is None else replace_once(lines[i], old, new)
        j = index_of(lines, key_text(at_key)) if at_key else i + 1
        lines.insert(j, line)
    return f


def _init_stop_after(minutes_ms, division_open=False):
    def f(lines):
        first = first_init_start(lines)
        i = index_of(lines, key_text('init_stop'))
        lines[i] = with_time_ms(lines[i], first + minutes_ms)
        if division_open:
            d = index_of(lines, key_text('submission_division'))
            lines[d] = replace_once(lines[d], '"value": "closed"', '"value": "open"')
    return f


def _eval_after_run_stop(lines):
    e = index_of(lines, key_text('eval_accuracy'))
    stop = index_of(lines, key_text('run_stop'))
    lines.insert(stop + 1, with_epoch_num(lines[e], '1'))


def _half_line(lines):
    i = index_of(lines, key_text('opt_base_learning_rate'))
    lines[i] = lines[i][:len(lines[i]) // 2]


def _stray_brace(lines):
    i = index_of(lines, key_text('weights_initialization'))
    lines[i] = replace_once(lines[i], '{"namespace"', '{}"namespace"')
    j = index_of(lines, key_text('submission_status'))
    lines[j] = replace_once(lines[j], '"value": "cloud"', '"value": "in the basement"')


def _truncate_mid_line(text):
    cut = len(text) * 6 // 10
    while cut < len(text) and (text[cut - 1] == '\n' or text[cut] == '\n'):
        cut += 1
    return text[:cut]


def _truncate_at(cut):
    return lambda text: text[:cut]


def _corrupt_byte(seed):
    def f(text):
        rng = random.Random(seed)
        lines = text.split('\n')
        mllog = [i for i, l in enumerate(lines) if ':::MLLOG {' in l]
        li = rng.choice(mllog)
        at = lines[li].find(':::MLLOG ') + 9
        pos = at + rng.randrange(len(lines[li]) - at)
        b = rng.choice('{}[]",:x0 \x01\xff\\')
        lines[li] = lines[li][:pos] + b + lines[li][pos + 1:]
        return '\n'.join(lines)
    return f


def _not_utf8(lines):
    _set('submission_platform', '"value": "ND_H100_v5"', '"value": "ND_H100\xff\xfe_v5\xc3"')(lines)
    _set('weights_initialization', '"tensor": "', '"tensor": "\x80\x81\xe9')(lines)
    lines.insert(3, 'garbage from stdout \xff\xfe\xfd not a log line')


def _line_ends(eol, dup=False):
    def f(text):
        lf = text.replace('\r\n', '\n')
        if dup:
            lf = edit(_repeat('global_batch_size', '"value": 768,', '"value": 4,'))(lf)
        return lf.replace('\n', eol)
    return f


def _bom_nul(text):
    lines = text.split('\n')
    lines.insert(5, 'binary junk \0\0\x01 from a crashed rank')
    return '\xef\xbb\xbf' + '\n'.join(lines)


def _nan_infinity(lines):
    _set('opt_lamb_beta_1', '"value": 0.60466,', '"value": NaN,')(lines)
    _set('opt_lamb_beta_2', '"value": 0.85437,', '"value": -Infinity,')(lines)
    _set('tracked_stats', '"throughput": ', '"throughput": Infinity, "x": ')(lines)


def _python_json(lines):
    _set('opt_lamb_beta_1', '"value": 0.60466,', '"value": "first", "value": 0.60466,')(lines)
    _set('opt_lamb_beta_2', '"value": 0.85437,', '"value": 123456789012345678901234567890,')(lines)
    k = index_of(lines, key_text('opt_lamb_weight_decay_rate'))
    lines[k], n = re.subn(r'"time_ms": ([0-9]+)', r'"time_ms": "\1"', lines[k], count=1)
    if not n:
        raise MutationError('no time_ms')


def _rank_prefix(state=False):
    def f(lines):
        for i, l in enumerate(lines):
            if ':::MLLOG ' in l:
                lines[i] = '[1,0]<stdout>: ' + l
        if state:
            _set('run_stop', '"status": "success"', '"state": "success"')(lines)
    return f


def _two_tokens(lines):
    i = index_of(lines, key_text('opt_lamb_beta_1'))
    lines[i] = ':::MLLOG {"namespace": "", "time_ms": 12' + lines[i]


def _white_space(lines):
    i = index_of(lines, key_text('opt_lamb_beta_1'))
    lines[i] = replace_once(lines[i], ':::MLLOG {', ':::MLLOG  \t {') + ' \t '


def _nan_twice(lines):
    i = index_of(lines, key_text('opt_lamb_beta_1'))
    lines[i] = replace_once(lines[i], '"value": 0.60466,', '"value": NaN,')
    lines.insert(i + 1, lines[i])


MIN = 60 * 1000


def file_cases():
    """(name, source, file number, text -> text) for every file-level mutation class."""
    cases = [
        # 1: run_stop
        ('drop run_stop', BERT, 0, edit(lambda l: drop_lines(l, key_text('run_stop')))),
        ('run_stop status aborted', BERT, 6, edit(_set('run_stop', '"status": "success"', '"status": "aborted"'))),
        ('an evaluation after run_stop', SSD, 0, edit(_eval_after_run_stop)),
        # 2: closed-division hyperparameters
        ('gpt3 opt_adam_beta_2 0.95 -> 0.9', GPT3, 0, edit(_set('opt_adam_beta_2', '"value": 0.95,', '"value": 0.9,'))),
        ('gpt3 opt_base_learning_rate 2e-5 -> 3e-5 (allowed)', GPT3, 1,
         edit(_set('opt_base_learning_rate', '"value": 2e-05,', '"value": 3e-05,'))),
        ('gpt3 opt_base_learning_rate 2e-5 -> 4e-5', GPT3, 1,
         edit(_set('opt_base_learning_rate', '"value": 2e-05,', '"value": 4e-05,'))),
        # 3: repeated keys
        ('global_batch_size repeated with another value', BERT, 0,
         edit(_repeat('global_batch_size', '"value": 768,', '"value": 769,'))),
        ('global_batch_size repeated with the same value', BERT, 0, edit(_repeat('global_batch_size'))),
        ('global_batch_size repeated as 768.0', BERT, 0,
         edit(_repeat('global_batch_size', '"value": 768,', '"value": 768.0,'))),
        ('opt_base_learning_rate repeated far away with another value', BERT, 2,
         edit(_repeat('opt_base_learning_rate', '"value": 0.00096,', '"value": 0.001,', at_key='init_stop'))),
        ('a NaN value logged twice', BERT, 5, edit(_nan_twice)),
        # 4: initialization time
        ('init_stop 31 minutes after init_start', BERT, 0, edit(_init_stop_after(31 * MIN))),
        ('init_stop exactly 30 minutes after init_start', BERT, 0, edit(_init_stop_after(30 * MIN))),
        ('init_stop 1 ms under 30 minutes', BERT, 0, edit(_init_stop_after(30 * MIN - 1))),
        ('open division, init_stop after 31 minutes', BERT, 0, edit(_init_stop_after(31 * MIN, True))),
        ('open division, init_stop after 241 minutes', BERT, 0, edit(_init_stop_after(241 * MIN, True))),
        # 7: corrupt JSON
        ('a required line cut in half', BERT, 0, edit(_half_line)),
        ('a stray brace and a bad submission_status', BERT, 0, edit(_stray_brace)),
        # 9: bytes and line shapes
        ('bytes that are not UTF-8', BERT, 5, edit(_not_utf8)),
        ('LF line ends', BERT, 5, _line_ends('\n')),
        ('CRLF line ends', BERT, 5, _line_ends('\r\n')),
        ('lone CR line ends', BERT, 5, _line_ends('\r')),
        ('LF line ends, global_batch_size repeated', BERT, 5, _line_ends('\n', True)),
        ('CRLF line ends, global_batch_size repeated', BERT, 5, _line_ends('\r\n', True)),
        ('lone CR line ends, global_batch_size repeated', BERT, 5, _line_ends('\r', True)),
        ('a byte order mark and NUL bytes', BERT, 5, _bom_nul),
        ('NaN and Infinity as values', BERT, 5, edit(_nan_infinity)),
        ('NaN where a CHECK compares', GPT3, 0, edit(_set('opt_adam_beta_1', '"value": 0.9,', '"value": NaN,'))),
        ('a repeated member, a huge integer, time_ms as a string', BERT, 5, edit(_python_json)),
        ('a raw TAB inside a JSON string', BERT, 5,
         edit(_set('submission_platform', '"value": "ND_H100_v5"', '"value": "ND_H100\t_v5"'))),
        ('a repeated member decides a CHECK', GPT3, 0,
         edit(_set('opt_adam_beta_2', '"value": 0.95,', '"value": 0.95, "value": 0.9,'))),
        ('a rank prefix before every MLLOG line', BERT, 5, edit(_rank_prefix())),
        ('a rank prefix, run_stop without status', BERT, 5, edit(_rank_prefix(True))),
        ('two tokens on a line', BERT, 5, edit(_two_tokens)),
        ('white space around the JSON', BERT, 5, edit(_white_space)),
        # 12: the binary's cases
        ('ssd opt_name adam -> sgd', SSD, 3, edit(_set('opt_name', '"value": "adam"', '"value": "sgd"'))),
        ('ssd opt_weight_decay 0 -> 0.0001', SSD, 2,
         edit(_set('opt_weight_decay', '"value": 0,', '"value": 0.0001,'))),
        # not a log at all
        ('an empty file', BERT, 0, lambda text: ''),
        ('text without MLLOG lines', BERT, 0, lambda text: 'root:x:0:0:root:/root:/bin/bash\n' * 20),
    ]
    # 8: truncation
    for n in range(10):
        cases.append(('truncated mid-line at 60%', BERT, n, _truncate_mid_line))
    for n in range(5):
        cases.append(('truncated mid-line at 60%', SSD, n, _truncate_mid_line))
    cases.append(('truncated mid-line at 60%', GPT3, 2, _truncate_mid_line))
    for cut in (0, 1, 3, 9, 10, 29) + tuple(range(251, 58000, 251 * 12)):
        cases.append(('truncated at byte %d' % cut, SSD, 1, _truncate_at(cut)))
    # one corrupted byte
    for seed in range(40):
        cases.append(('one corrupted byte (seed %d)' % seed, SSD, 3, _corrupt_byte(20231006 + seed)))
    return cases


# ----------------------------------------------------------------- package mutations

class MiniPackage:
    """<tmp>/<org>/{systems/<system>.json, results/<system>/<benchmark>/result_N.txt}."""

    def __init__(self, tmp, src, ref):
        self.org = os.path.join(tmp, src.org)
        self.system_dir = os.path.join(self.org, 'results', src.system)
        self.bench = os.path.join(self.system_dir, src.benchmark)
        os.makedirs(os.path.join(self.org, 'systems'))
        os.makedirs(self.bench)
        shutil.copyfile(src.system_json(ref), os.path.join(self.org, 'systems', src.system + '.json'))
        for name in sorted(os.listdir(src.dir(ref))):
            if name.startswith('result_') and name.endswith('.txt'):
                shutil.copyfile(os.path.join(src.dir(ref), name), os.path.join(self.bench, name))

    def file(self, n):
        return os.path.join(self.bench, 'result_%d.txt' % n)

    def edit(self, n, fn):
        write_text(self.file(n), edit(fn)(read_text(self.file(n))))

    def write(self, rel, data):
        with open(os.path.join(self.bench if rel[0] != '/' else self.system_dir, rel.lstrip('/')), 'wb') as f:
            f.write(data.encode('latin-1'))


def _converge_in_one_epoch(p):
    for n in range(5):
        def f(lines):
            for i, l in enumerate(lines):
                if key_text('eval_accuracy') in l:
                    lines[i] = with_epoch_num(l, '1')
        p.edit(n, f)


def _seed_line(p, n):
    lines = read_text(p.file(n)).split('\n')
    return lines[index_of(lines, key_text('seed'))]


def _put_seed(line):
    def f(lines):
        lines[index_of(lines, key_text('seed'))] = line
    return f


def _pkg_drop_run_stop(files):
    def f(p):
        for n in files:
            p.edit(n, lambda l: drop_lines(l, key_text('run_stop')))
    return f


def _pkg_aborted(p):
    p.edit(6, _set('run_stop', '"status": "success"', '"status": "aborted"'))


def _pkg_eval_after_stop(p):
    for n in range(5):
        p.edit(n, _eval_after_run_stop)


def _pkg_no_seeds(files, bypass=False):
    def f(p):
        for n in files:
            p.edit(n, lambda l: drop_lines(l, key_text('seed')))
        if bypass:
            p.write('package_checker_params', 'seed-checker-bypass')
    return f


def _pkg_same_seed(old=None, new=None):
    def f(p):
        line = _seed_line(p, 0)
        if old:
            line = replace_once(line, old, new)
        p.edit(1, _put_seed(line))
    return f


def _pkg_rcp(params=None, where=''):
    def f(p):
        _converge_in_one_epoch(p)
        if params is not None:
            p.write(where + 'package_checker_params', params)
    return f


def _pkg_bert_fast(p):
    for n in range(10):
        def g(lines):
            for i, l in enumerate(lines):
                if key_text('eval_accuracy') in l:
                    lines[i] = with_epoch_num(l, '1000000')
        p.edit(n, g)


def _pkg_parse_error(p):
    def f(lines):
        i = index_of(lines, key_text('weights_initialization'))
        lines[i] = replace_once(lines[i], '{"namespace"', '{}"namespace"')
    p.edit(0, f)


def _pkg_remove(p):
    os.remove(p.file(9))


def _pkg_rename(p):
    os.rename(p.file(9), os.path.join(p.bench, 'result9.txt'))


def _pkg_weight_decay(files):
    def f(p):
        for n in files:
            p.edit(n, _set('opt_weight_decay', '"value": 0,', '"value": 0.0001,'))
    return f


def _pkg_truncated(p):
    for n in range(5):
        t = read_text(p.file(n))
        write_text(p.file(n), t[:len(t) * 6 // 10 + 7])


def _pkg_sgd_and_no_stop(p):
    p.edit(3, _set('opt_name', '"value": "adam"', '"value": "sgd"'))
    p.edit(1, lambda l: drop_lines(l, key_text('run_stop')))


def package_cases():
    """(name, source, MiniPackage -> None) for every package-level mutation class."""
    return [
        ('unchanged bert', BERT, lambda p: None),
        ('unchanged ssd', SSD, lambda p: None),
        ('run_stop dropped in one bert run', BERT, _pkg_drop_run_stop([3])),
        ('run_stop dropped in two bert runs', BERT, _pkg_drop_run_stop([3, 7])),
        ('one bert run aborted', BERT, _pkg_aborted),
        ('an evaluation after run_stop in every ssd run', SSD, _pkg_eval_after_stop),
        ('no seed in any file', BERT, _pkg_no_seeds(range(10))),
        ('no seed in one file', BERT, _pkg_no_seeds([4])),
        ('the same seed line in two files', BERT, _pkg_same_seed()),
        ('the same seed from another source line', BERT, _pkg_same_seed('"lineno": 1272', '"lineno": 1273')),
        ('the same seed, lineno written as a float', BERT, _pkg_same_seed('"lineno": 1272', '"lineno": 1272.0')),
        ('no seeds, seed-checker-bypass', BERT, _pkg_no_seeds(range(10), bypass=True)),
        ('ssd converging faster than the RCP allows', SSD, _pkg_rcp()),
        ('... with rcp-bypass, no trailing newline', SSD, _pkg_rcp('rcp-bypass')),
        ('... with rcp-bypass in the system folder', SSD, _pkg_rcp('rcp-bypass', '/')),
        ('... with rcp-bypass and a trailing newline', SSD, _pkg_rcp('rcp-bypass\n')),
        ('... with rcp-bypass as the last of two lines', SSD, _pkg_rcp('seed-checker-bypass\nrcp-bypass')),
        ('... with CR line ends in package_checker_params', SSD, _pkg_rcp('seed-checker-bypass\rrcp-bypass')),
        ('... with CRLF line ends in package_checker_params', SSD, _pkg_rcp('seed-checker-bypass\r\nrcp-bypass')),
        ('... with rcp-bypass and CRLF', SSD, _pkg_rcp('rcp-bypass\r\n')),
        ('bert converging faster than the interpolated RCP', BERT, _pkg_bert_fast),
        ('a parse error in one file', BERT, _pkg_parse_error),
        ('one result file removed', BERT, _pkg_remove),
        ('one result file renamed', BERT, _pkg_rename),
        ('a stray notes.txt', BERT, lambda p: p.write('notes.txt', 'run on a quiet afternoon\n')),
        ('one ssd file breaks opt_weight_decay', SSD, _pkg_weight_decay([2])),
        ('two ssd files break opt_weight_decay', SSD, _pkg_weight_decay([2, 4])),
        ('every ssd file truncated', SSD, _pkg_truncated),
        ('opt_name sgd in one file, run_stop dropped in another', SSD, _pkg_sgd_and_no_stop),
    ]


# --------------------------------------------------------------------- the fuzz

_NUM = re.compile(r'-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')
_KEY = re.compile(r'"key": "([^"]*)"')
_VALUE = re.compile(r'"value": ("(?:[^"\\]|\\.)*"|-?[0-9.eE+-]+|true|false|null|NaN|-?Infinity)')
_NUMBERS = ['0', '1', '-1', '2', '0.5', '1e308', '-1e-308', '3.0', 'NaN', 'Infinity', '-Infinity',
            '123456789012345678901234567890', '1e400', '007', '-0', '0.0001', '4294967296']
_DAMAGE = '{}[]",:\\ \t\x00\xff0e-.nN'


def _mllog_indexes(lines):
    return [i for i, l in enumerate(lines) if ':::MLLOG' in l]


def _pick(rng, lines):
    idx = _mllog_indexes(lines)
    return rng.choice(idx) if idx and rng.random() < 0.9 else rng.randrange(len(lines))


def _op_delete(rng, lines):
    i = _pick(rng, lines)
    n = 1 if rng.random() < 0.8 else rng.randint(2, 20)
    del lines[i:i + n]
    return 'delete %d line(s) at %d' % (n, i + 1)


def _op_duplicate(rng, lines):
    i = _pick(rng, lines)
    j = i + 1 if rng.random() < 0.5 else rng.randrange(len(lines) + 1)
    lines.insert(j, lines[i])
    return 'duplicate line %d at %d' % (i + 1, j + 1)


def _op_value(rng, lines):
    i = _pick(rng, lines)
    m = list(_VALUE.finditer(lines[i]))
    if not m:
        return _op_number(rng, lines)
    m = rng.choice(m)
    new = rng.choice(_NUMBERS + ['"x"', '""', 'true', 'false', 'null', '[]', '{}', '[1, 2]',
                                 '{"a": 1}', '"success"', '"aborted"', '"closed"', '"open"', '"adam"'])
    lines[i] = lines[i][:m.start(1)] + new + lines[i][m.end(1):]
    return 'value on line %d -> %s' % (i + 1, new)


def _op_number(rng, lines):
    i = _pick(rng, lines)
    m = list(_NUM.finditer(lines[i]))
    if not m:
        return _op_damage(rng, lines)
    m = rng.choice(m)
    old = m.group(0)
    r = rng.random()
    if r < 0.3:
        new = rng.choice(_NUMBERS)
    elif r < 0.6:
        try:
            new = repr(float(old) * rng.choice([2, 0.5, 10, 0.1, -1, 1.0000001]))
        except ValueError:
            new = '0'
    else:
        try:
            new = str(int(float(old)) + rng.choice([-1000000, -1, 1, 1000000, 60000, 1800000]))
        except (ValueError, OverflowError):
            new = '1'
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return 'number on line %d: %s -> %s' % (i + 1, old, new)


def _op_key_swap(rng, lines):
    idx = [i for i in _mllog_indexes(lines) if _KEY.search(lines[i])]
    if len(idx) < 2:
        return _op_delete(rng, lines)
    a, b = rng.sample(idx, 2)
    ka, kb = _KEY.search(lines[a]).group(1), _KEY.search(lines[b]).group(1)
    if rng.random() < 0.5:  # swap the two keys
        lines[a] = _KEY.sub('"key": "%s"' % kb, lines[a], count=1)
        lines[b] = _KEY.sub('"key": "%s"' % ka, lines[b], count=1)
        return 'swap keys of lines %d (%s) and %d (%s)' % (a + 1, ka, b + 1, kb)
    lines[a] = _KEY.sub('"key": "%s"' % kb, lines[a], count=1)
    return 'key of line %d: %s -> %s' % (a + 1, ka, kb)


def _op_damage(rng, lines):
    i = _pick(rng, lines)
    s = lines[i]
    if not s:
        lines[i] = rng.choice(_DAMAGE)
        return 'damage empty line %d' % (i + 1)
    pos = rng.randrange(len(s))
    r = rng.random()
    if r < 0.4:
        lines[i] = s[:pos] + s[pos + 1:]
        what = 'delete byte'
    elif r < 0.7:
        lines[i] = s[:pos] + rng.choice(_DAMAGE) + s[pos:]
        what = 'insert byte'
    elif r < 0.9:
        lines[i] = s[:pos] + rng.choice(_DAMAGE) + s[pos + 1:]
        what = 'replace byte'
    else:
        lines[i] = s[:pos]
        what = 'cut line'
    return '%s at line %d column %d' % (what, i + 1, pos + 1)


def _op_reorder(rng, lines):
    i, j = _pick(rng, lines), _pick(rng, lines)
    if rng.random() < 0.5:
        lines[i], lines[j] = lines[j], lines[i]
        return 'swap lines %d and %d' % (i + 1, j + 1)
    n = rng.randint(1, 30)
    block = lines[i:i + n]
    del lines[i:i + n]
    j = min(j, len(lines))
    lines[j:j] = block
    return 'move %d line(s) from %d to %d' % (len(block), i + 1, j + 1)


def _op_metadata(rng, lines):
    i = _pick(rng, lines)
    choices = [('"status": "success"', '"status": "aborted"'), ('"metadata": {', '"metadata": {"x": 1, '),
               ('"metadata": {', '"metadata": 5, "m": {'), ('"event_type": "POINT_IN_TIME"', '"event_type": "X"'),
               ('"namespace": ""', '"namespace": "worker"'), ('"time_ms": ', '"time_ms": null, "t": '),
               ('"value": ', '"val": '), ('"key": ', '"KEY": '), ('"epoch_num": ', '"epoch_num": -')]
    old, new = rng.choice(choices)
    if old not in lines[i]:
        return _op_value(rng, lines)
    lines[i] = lines[i].replace(old, new, 1)
    return 'line %d: %s -> %s' % (i + 1, old, new)


_OPS = [(_op_delete, 3), (_op_duplicate, 3), (_op_value, 4), (_op_number, 4), (_op_key_swap, 2),
        (_op_damage, 3), (_op_reorder, 2), (_op_metadata, 2)]


def random_mutation(rng, text):
    """Applies 1 to 4 random operators; returns (text, description)."""
    lines = text.split('\n')
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        if not lines or lines == ['']:
            break
        op = rng.choices([o for o, _ in _OPS], weights=[w for _, w in _OPS])[0]
        done.append(op(rng, lines))
    text = '\n'.join(lines)
    r = rng.random()
    if r < 0.05:
        cut = rng.randrange(len(text) + 1)
        text = text[:cut]
        done.append('truncate at byte %d' % cut)
    elif r < 0.08:
        text = text.replace('\n', rng.choice(['\r\n', '\r']))
        done.append('line ends changed')
    return text, '; '.join(done)
