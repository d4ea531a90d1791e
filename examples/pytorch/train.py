#!/usr/bin/python3
"""torchclf: a small PyTorch classifier that logs the MLPerf Training protocol.

A real client of referee's harness: an ordinary PyTorch training program (CPU,
one thread) that logs with the consortium's logger, mlperf_logging.mllog, the
way a benchmark implementation does. It follows benchmark `torchclf` of
referee's rule set mini-1.0.0 (rules/sets/, docs/workloads.md).

Task: 5-way classification of points from a fixed Gaussian mixture in 10
dimensions (each class a mixture of 3 clusters). The data come from a fixed
data seed, the same in every run; the run's --seed draws the initial weights
and the order of the training samples. No download, no file read.

Model: MLP 10 -> 64 -> 64 -> 5 (ReLU), cross-entropy, SGD with momentum 0.9,
linear warmup then constant learning rate. Evaluated after every epoch; the
run stops with status "success" at the first evaluation whose accuracy
reaches the target, or "aborted" after --max-epochs or on SIGTERM/SIGINT.

    /usr/bin/python3 examples/pytorch/train.py --seed 7 --log result_0.txt

mlperf_logging is imported as installed, else from
$REFEREE_REFERENCE_DATA/mlperf/logging (by default ../shared/mlperf/logging
beside the repository). Exit status: 0 converged, 1 not converged within
--max-epochs, 2 cannot run (bad arguments, no torch, no mlperf_logging),
128 + the signal number when stopped by SIGTERM or SIGINT (after logging
run_stop with status "aborted").
"""

import argparse
import math
import os
import signal
import sys

BENCHMARK = 'torchclf'
TARGET = 0.90            # eval accuracy to reach (rules/sets/compliance_checker/mini_1.0.0/closed_torchclf.yaml)
DIM, CLASSES, CLUSTERS = 10, 5, 3
SPREAD, NOISE = 1.0, 0.7  # cluster centres ~ N(0, SPREAD^2 I); points = centre + N(0, NOISE^2 I)
TRAIN_SAMPLES, EVAL_SAMPLES = 4096, 4096
DATA_SEED = 20240611     # fixed: every run trains and evaluates on the same data
HIDDEN = 64


def default_lr(batch_size):
    """0.02 at batch 64, scaled linearly with the batch size."""
    return 0.02 * batch_size / 64


def default_warmup(batch_size):
    """One warmup epoch per doubling of the batch size above 64."""
    return max(0, int(round(math.log2(batch_size / 64)))) if batch_size > 64 else 0


def import_mllog():
    try:
        from mlperf_logging import mllog  # installed
        return mllog
    except ImportError:
        pass
    ref = os.environ.get('REFEREE_REFERENCE_DATA') or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'shared')
    path = os.path.join(ref, 'mlperf', 'logging')
    if not os.path.isdir(os.path.join(path, 'mlperf_logging', 'mllog')):
        raise ImportError('mlperf_logging is not installed and not found under %s '
                          '(set REFEREE_REFERENCE_DATA to the reference data)' % os.path.abspath(path))
    sys.path.insert(0, path)
    from mlperf_logging import mllog
    return mllog


def make_data(torch):
    """The fixed mixture and a training and an evaluation set drawn from it."""
    g = torch.Generator().manual_seed(DATA_SEED)
    centres = torch.randn(CLASSES, CLUSTERS, DIM, generator=g, dtype=torch.float64) * SPREAD

    def draw(n):
        y = torch.randint(0, CLASSES, (n,), generator=g)
        k = torch.randint(0, CLUSTERS, (n,), generator=g)
        x = centres[y, k] + torch.randn(n, DIM, generator=g, dtype=torch.float64) * NOISE
        return x.float(), y

    xtr, ytr = draw(TRAIN_SAMPLES)
    xev, yev = draw(EVAL_SAMPLES)
    return centres, xtr, ytr, xev, yev


def bayes_accuracy(torch, centres, x, y):
    """Accuracy of the classifier that knows the mixture (the best possible)."""
    d = ((x.double()[:, None, None, :] - centres[None]) ** 2).sum(-1)  # n x classes x clusters
    score = torch.logsumexp(-d / (2 * NOISE * NOISE), dim=2)
    return (score.argmax(1) == y).double().mean().item()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--seed', type=int, default=None, help='required: the run\'s seed (weights, sample order)')
    p.add_argument('--batch-size', type=int, default=128)
    p.add_argument('--lr', type=float, default=None, help='base learning rate (default: 0.02 x batch/64)')
    p.add_argument('--warmup-epochs', type=int, default=None, help='default: one per doubling of the batch above 64')
    p.add_argument('--max-epochs', type=int, default=40)
    p.add_argument('--log', default=None, help='result log file (replaced); the lines also go to stdout')
    p.add_argument('--org', default='referee')
    p.add_argument('--division', default='closed', choices=['closed', 'open'])
    p.add_argument('--status', default='onprem')
    p.add_argument('--platform', default='cpu')
    p.add_argument('--bayes', action='store_true', help='print the Bayes accuracy of the evaluation set and exit')
    a = p.parse_args(argv)
    if not a.bayes and a.seed is None:
        print('train.py: --seed is required', file=sys.stderr)
        return 2
    if (a.seed is not None and a.seed < 0) or not 1 <= a.batch_size <= TRAIN_SAMPLES or a.max_epochs < 1 or (a.lr is not None and a.lr <= 0) \
            or (a.warmup_epochs is not None and a.warmup_epochs < 0):
        print('train.py: --seed >= 0, --batch-size 1..%d, --max-epochs >= 1, --lr > 0, --warmup-epochs >= 0'
              % TRAIN_SAMPLES, file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        print('train.py: cannot import torch (%s); install Debian\'s python3-torch: scripts/setup.sh --with-torch '
              '(or: sudo apt-get install python3-torch)' % e, file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    if a.bayes:
        centres, _, _, xev, yev = make_data(torch)
        print('Bayes accuracy on the evaluation set: %.4f' % bayes_accuracy(torch, centres, xev, yev))
        return 0
    try:
        mllog = import_mllog()
    except ImportError as e:
        print('train.py: %s' % e, file=sys.stderr)
        return 2
    c = mllog.constants

    stop = {'signal': 0}

    def on_signal(signum, _frame):
        stop['signal'] = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    if a.log:
        if os.path.exists(a.log):
            os.remove(a.log)
        mllog.config(filename=a.log)
    mllog.config(root_dir=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    log = mllog.get_mllogger()

    lr = a.lr if a.lr is not None else default_lr(a.batch_size)
    warmup = a.warmup_epochs if a.warmup_epochs is not None else default_warmup(a.batch_size)
    steps_per_epoch = math.ceil(TRAIN_SAMPLES / a.batch_size)

    log.event(key=c.CACHE_CLEAR, value=True)
    log.event(key=c.SUBMISSION_BENCHMARK, value=BENCHMARK)
    log.event(key=c.SUBMISSION_ORG, value=a.org)
    log.event(key=c.SUBMISSION_DIVISION, value=a.division)
    log.event(key=c.SUBMISSION_STATUS, value=a.status)
    log.event(key=c.SUBMISSION_PLATFORM, value=a.platform)
    log.start(key=c.INIT_START)
    log.event(key=c.SEED, value=a.seed)
    log.event(key=c.GLOBAL_BATCH_SIZE, value=a.batch_size)
    log.event(key=c.GRADIENT_ACCUMULATION_STEPS, value=1)
    log.event(key=c.OPT_NAME, value='sgd')
    log.event(key=c.OPT_BASE_LR, value=lr)
    log.event(key=c.OPT_LR_WARMUP_EPOCHS, value=warmup)
    log.event(key='opt_momentum', value=0.9)
    log.event(key=c.OPT_WEIGHT_DECAY, value=0.0)

    torch.manual_seed(a.seed)
    model = torch.nn.Sequential(torch.nn.Linear(DIM, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    order = torch.Generator().manual_seed(a.seed)
    _, xtr, ytr, xev, yev = make_data(torch)
    log.end(key=c.INIT_STOP)

    log.start(key=c.RUN_START)
    log.event(key=c.TRAIN_SAMPLES, value=TRAIN_SAMPLES)
    log.event(key=c.EVAL_SAMPLES, value=EVAL_SAMPLES)
    status, epoch, acc, step = c.ABORTED, 0, 0.0, 0
    for epoch in range(1, a.max_epochs + 1):
        log.start(key=c.EPOCH_START, metadata={'epoch_num': epoch})
        model.train()
        perm = torch.randperm(TRAIN_SAMPLES, generator=order)
        for i in range(steps_per_epoch):
            if stop['signal']:
                break
            # Linear warmup over `warmup` epochs, then constant.
            scale = min(1.0, (step + 1) / (warmup * steps_per_epoch)) if warmup else 1.0
            for group in opt.param_groups:
                group['lr'] = lr * scale
            idx = perm[i * a.batch_size:(i + 1) * a.batch_size]
            opt.zero_grad()
            loss_fn(model(xtr[idx]), ytr[idx]).backward()
            opt.step()
            step += 1
        if stop['signal']:
            break
        log.end(key=c.EPOCH_STOP, metadata={'epoch_num': epoch})
        log.start(key=c.EVAL_START, metadata={'epoch_num': epoch})
        model.eval()
        with torch.no_grad():
            acc = (model(xev).argmax(1) == yev).float().mean().item()
        log.event(key=c.EVAL_ACCURACY, value=round(acc, 6), metadata={'epoch_num': epoch})
        log.end(key=c.EVAL_STOP, metadata={'epoch_num': epoch})
        if acc >= TARGET:
            status = c.SUCCESS
            break
    log.end(key=c.RUN_STOP, metadata={'status': status, 'epoch_num': epoch})
    print('torchclf seed %d batch %d: %s at epoch %d, accuracy %.4f, %d steps'
          % (a.seed, a.batch_size, status, epoch, acc, step), file=sys.stderr)
    if stop['signal']:
        return 128 + stop['signal']
    return 0 if status == c.SUCCESS else 1


if __name__ == '__main__':
    sys.exit(main())
