"""``optim`` against PyTorch 2.13: from the same weights, on the same loss, every optimizer
configuration takes the same steps (to float rounding), keeps the same state, prints the
same, and rejects the same options with the same messages; schedules give the same rates."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import symgrad
from conftest import check_same, same_outcome

torch = pytest.importorskip("torch")

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True)),
    ("SGD", dict(lr=0.05, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, maximize=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.5, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
]


def train(lib, name, options, dtype, steps=6):
    """A small regression trained for ``steps`` steps: weights after each step and the
    optimizer's state at the end."""
    rng = np.random.default_rng(3)
    dt = getattr(lib, dtype)
    w = lib.nn.Parameter(lib.tensor(rng.normal(size=(3, 2)), dtype=dt))
    b = lib.nn.Parameter(lib.tensor(rng.normal(size=2), dtype=dt))
    x = lib.tensor(rng.normal(size=(5, 3)), dtype=dt)
    y = lib.tensor(rng.normal(size=(5, 2)), dtype=dt)
    opt = getattr(lib.optim, name)([w, b], **options)
    path = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w + b).tanh() - y).pow(2).mean()
        loss.backward()
        opt.step()
        path.append(w.detach().clone())
        path.append(b.detach().clone())
    sd = opt.state_dict()
    return path + [sd["state"], sd["param_groups"], repr(opt)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, options", CONFIGS,
                         ids=[f"{n}-{'-'.join(o) or 'defaults'}" for n, o in CONFIGS])
def test_steps_agree(name, options, dtype):
    # (float32: rounding, amplified where RMSprop's centered variance cancels)
    tol = dict(rtol=1e-5, atol=1e-7) if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)
    check_same(lambda lib: train(lib, name, options, dtype), **tol)


def test_closure_and_param_groups():
    def run(lib):
        w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        v = lib.nn.Parameter(lib.tensor([0.5]))
        opt = lib.optim.SGD([{"params": [w]}, {"params": [v], "lr": 0.5}], lr=0.1,
                            momentum=0.5)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum() + (v ** 3).sum()
            loss.backward()
            return loss
        losses = [opt.step(closure) for _ in range(3)]
        return losses + [w.detach(), v.detach(), opt.state_dict()["param_groups"], repr(opt)]
    check_same(run)


def test_state_dict_round_trip():
    def run(lib):
        w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        opt = lib.optim.Adam([w], lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            (w ** 2).sum().backward()
            opt.step()
        w2 = lib.nn.Parameter(w.detach().clone())
        opt2 = lib.optim.Adam([w2], lr=0.5)
        opt2.load_state_dict(opt.state_dict())
        for o, p in ((opt, w), (opt2, w2)):
            o.zero_grad()
            (p ** 2).sum().backward()
            o.step()
        return [w.detach(), w2.detach(), opt2.param_groups[0]["lr"]]
    check_same(run)


def test_zero_grad_set_to_none_false():
    def run(lib):
        w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        opt = lib.optim.SGD([w], lr=0.1)
        (w * 3).sum().backward()
        opt.zero_grad(set_to_none=False)
        g = w.grad
        opt.zero_grad()
        return [g, w.grad is None]
    check_same(run)


@pytest.mark.parametrize("make", [
    lambda L, p: L.optim.SGD(p, lr=-1), lambda L, p: L.optim.SGD(p, momentum=-1),
    lambda L, p: L.optim.SGD(p, nesterov=True), lambda L, p: L.optim.SGD(p, weight_decay=-1),
    lambda L, p: L.optim.Adam(p, betas=(1.0, 0.9)), lambda L, p: L.optim.Adam(p, eps=-1),
    lambda L, p: L.optim.AdamW(p, lr=-0.1), lambda L, p: L.optim.RMSprop(p, alpha=-1),
    lambda L, p: L.optim.RMSprop(p, momentum=-1), lambda L, p: L.optim.Adagrad(p, lr_decay=-1),
    lambda L, p: L.optim.Adagrad(p, initial_accumulator_value=-1),
    lambda L, p: L.optim.SGD(p[0]), lambda L, p: L.optim.SGD([]),
    lambda L, p: L.optim.SGD([p[0], p[0] * 2]),
])
def test_option_errors(make):
    same_outcome(lambda L: make(L, [L.nn.Parameter(L.ones(2))]))


# --------------------------------------------------------------------------- schedules
SCHEDULES = [
    ("StepLR", dict(step_size=2, gamma=0.5)),
    ("StepLR", dict(step_size=3)),
    ("MultiStepLR", dict(milestones=[2, 5, 5], gamma=0.1)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (e + 1))),
]


@pytest.mark.parametrize("name, options", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedules(name, options):
    def run(lib):
        w = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([w], lr=0.8)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **options)
        rates = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            rates.append(sched.get_last_lr())
        return rates + [opt.param_groups[0]["initial_lr"], sched.last_epoch]
    check_same(run, rtol=1e-12)


def test_scheduler_before_optimizer_warns():
    def run(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step()
        return [str(w.message) for w in caught]
    assert run(symgrad) == run(torch) != []
