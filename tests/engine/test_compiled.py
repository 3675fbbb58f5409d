"""The compiled loops (symgrad/_speedups.c) do exactly what the Python code does.

Differential tests: the same programs through ``tensor._apply_python`` and the compiled
``apply``, and backward through ``engine._run_ordered`` and the compiled loop, compared
field by field; each compiled method against the Python method it replaces; and the core
test modules run again with ``SYMGRAD_PURE_PYTHON=1``, so the Python path stays correct.
"""
from __future__ import annotations

import importlib
import os
import random
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import symgrad
from symgrad import ops
from symgrad.api import compiled as _compiled
from symgrad.engine import reverse as engine

T = importlib.import_module("symgrad.api.tensor")  # (symgrad.tensor is also the function)

speedups = pytest.importorskip("symgrad._speedups") if _compiled.ENABLED else None
needs_compiled = pytest.mark.skipif(not _compiled.ENABLED, reason="compiled loops not built")


def test_built_when_required():
    # .ci/run sets SYMGRAD_REQUIRE_COMPILED=1: the extension must build on a fresh machine.
    if os.environ.get("SYMGRAD_REQUIRE_COMPILED") == "1":
        assert _compiled.ENABLED


# ------------------------------------------------------------------- random programs
UNARY = ["neg", "abs", "exp", "tanh", "sigmoid", "relu", "sin", "cos"]
BINARY = ["add", "sub", "mul", "div"]


def _program(rng: random.Random, n_ops: int = 40):
    """A random straight-line program over 0-d values, as a list of steps."""
    steps = []
    for _ in range(n_ops):
        if rng.random() < 0.35:
            steps.append(("unary", rng.choice(UNARY)))
        else:
            other = rng.choice(["value", "leaf", "const", "number", "int"])
            steps.append(("binary", rng.choice(BINARY), other, rng.random() < 0.5))
    return steps


def _run(steps, apply, dtype, seed):
    """Run a program with ``apply``; return leaves, every value, and the output."""
    rng = np.random.default_rng(seed)
    leaves = [symgrad.tensor(float(rng.uniform(0.5, 1.5)), dtype=dtype, requires_grad=True)
              for _ in range(3)]
    consts = [symgrad.tensor(float(rng.uniform(0.5, 1.5)), dtype=dtype) for _ in range(2)]
    y = leaves[0]
    values = [y]
    for step in steps:
        if step[0] == "unary":
            y = apply(ops.OPS[step[1]], (y,))
        else:
            _, name, kind, swap = step
            other = {"value": values[int(rng.integers(len(values)))],
                     "leaf": leaves[int(rng.integers(3))], "const": consts[int(rng.integers(2))],
                     "number": float(rng.uniform(0.5, 2.0)), "int": int(rng.integers(1, 4))}[kind]
            args = (other, y) if swap and kind in ("value", "leaf", "const") else (y, other)
            y = apply(ops.OPS[name], args)
        values.append(y)
    return leaves, values, y


def _describe(t, index):
    """Everything apply decides for a tensor, with nodes and tensors named by position."""
    fn = t.grad_fn

    def name(x):
        if isinstance(x, symgrad.Tensor):
            return ("tensor", index.get(id(x), "?"))
        if isinstance(x, symgrad.ir.node.Node):
            v = getattr(x, "variable", None)
            return (type(x).__name__, index.get(id(v), "?") if v is not None else "")
        return ("value", x)

    data = t._data
    node = None
    if fn is not None:
        node = (type(fn).__name__, tuple(name(x) for x in fn.inputs), fn.attrs,
                tuple(name(s) for s in fn._saved), fn._versions, fn._meta, fn._plain)
    return (type(data).__name__, np.asarray(data).dtype.name, np.asarray(data).tobytes(),
            t.dtype, t.requires_grad, t.is_leaf, t._vc, node)


def _snapshot(leaves, values):
    index = {id(v): i for i, v in enumerate(values)}
    return [_describe(v, index) for v in values]


@needs_compiled
@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_apply_builds_what_python_builds(seed, dtype):
    dt = getattr(symgrad, dtype)
    steps = _program(random.Random(seed))
    with np.errstate(all="ignore"):
        py = _run(steps, T._apply_python, dt, seed)
        c = _run(steps, T.apply, dt, seed)
    assert _snapshot(*py[:2]) == _snapshot(*c[:2])
    # and the sequence numbers run in the same order (the engine's order depends on it)
    assert [v.grad_fn._seq - py[2].grad_fn._seq for v in py[1] if v.grad_fn] == \
        [v.grad_fn._seq - c[2].grad_fn._seq for v in c[1] if v.grad_fn]


@needs_compiled
@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("retain", [False, True])
def test_backward_matches_python_loop(seed, retain):
    steps = _program(random.Random(1000 + seed), n_ops=60)
    grads = []
    for loop in (engine._run_ordered, speedups.run_ordered):
        with np.errstate(all="ignore"):
            leaves, values, y = _run(steps, T.apply, symgrad.float64, seed)
        nodes = [v.grad_fn for v in values if v.grad_fn is not None]
        buffers = {y.grad_fn: np.float64(1.0)}
        with np.errstate(all="ignore"):
            loop([y.grad_fn], buffers, retain)
        grads.append(([None if l.grad is None else repr(l.grad) for l in leaves],
                      [(n._released, n._saved if not retain else len(n._saved))
                       for n in nodes], buffers))
    assert grads[0][0] == grads[1][0]
    # same release state: freed markers where Python frees, numbers kept
    assert [r for r, _ in grads[0][1]] == [r for r, _ in grads[1][1]]
    assert [s for _, s in grads[0][1] if not isinstance(s, tuple) or
            all(not isinstance(v, symgrad.Tensor) for v in s)] == \
        [s for _, s in grads[1][1] if not isinstance(s, tuple) or
         all(not isinstance(v, symgrad.Tensor) for v in s)]
    assert grads[0][2] == grads[1][2] == {}


@needs_compiled
def test_backward_through_hooks_views_and_vectors():
    # nodes off the fast path (hooks, retain_grad, views, broadcasting) inside a compiled run
    def program():
        x = symgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = symgrad.tensor(0.5, requires_grad=True)
        seen = []
        a = x * s
        a.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
        b = a[1:].exp().sum() * s
        b.retain_grad()
        c = (b * b + s).tanh()
        return x, s, b, c, seen

    results = []
    for compiled in (False, True):
        x, s, b, c, seen = program()
        old = engine._run_ordered_compiled
        engine._run_ordered_compiled = speedups.run_ordered if compiled else None
        try:
            c.backward()
        finally:
            engine._run_ordered_compiled = old
        results.append((x.grad.tolist(), s.grad.item(), b.grad.item(), seen))
    assert results[0] == results[1]


@needs_compiled
def test_saved_tensors_are_released():
    x = symgrad.tensor(2.0, requires_grad=True)
    y = x * 3.0
    ref = weakref.ref(y)
    z = (y * y).exp()
    del y
    assert ref() is not None  # saved by MulBackward0
    z.backward()
    assert ref() is None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


@needs_compiled
def test_in_place_change_is_caught():
    a = symgrad.tensor(2.0, requires_grad=True)
    b = a * 1.0
    c = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.backward()


# -------------------------------------------------------------------- compiled methods
def _operands(dtype):
    leaf = symgrad.tensor(0.75, dtype=dtype, requires_grad=True)
    return [leaf, leaf * 1.5, symgrad.tensor(1.25, dtype=dtype), 2.0, 3, True,
            symgrad.tensor([0.5, 1.5], dtype=dtype), symgrad.tensor(2, dtype=symgrad.int64)]


@needs_compiled
@pytest.mark.parametrize("name", sorted(T._DIRECT_METHODS))
def test_compiled_method_is_the_python_method(name):
    compiled = vars(symgrad.Tensor)[name]
    python = compiled.__wrapped__
    op, arity = T._DIRECT_METHODS[name]
    assert compiled.op is op
    for dtype in (symgrad.float32, symgrad.float64):
        operands = _operands(dtype)
        for a in operands[:3] + operands[-2:]:
            for b in (operands if arity == 2 else [None]):
                args = (a,) if b is None else (a, b)
                outs = []
                for f in (python, compiled):
                    try:
                        with np.errstate(all="ignore"):
                            r = f(*args)
                        outs.append(("ok", repr(r), type(r.grad_fn).__name__,
                                     r.grad_fn._saved if r.grad_fn is not None else None))
                    except Exception as e:  # noqa: BLE001 - the errors must agree too
                        outs.append((type(e).__name__, str(e)))
                assert outs[0][:3] == outs[1][:3], (name, args)


@needs_compiled
def test_compiled_methods_bind_like_methods():
    x = symgrad.tensor(2.0, requires_grad=True)
    assert x.__mul__(3.0).item() == 6.0
    assert symgrad.Tensor.__mul__(x, x).item() == 4.0
    assert x.relu.__name__ == "relu"
    assert (3 * x).grad_fn.name() == "MulBackward0"


# ------------------------------------------------------------------ the pure-Python path
CORE = ["tests/tensor/test_programs_and_graphs.py", "tests/autograd/test_tutorial_seeds.py",
        "tests/autograd/test_autograd_semantics.py", "tests/engine/test_engine_order.py",
        "tests/engine/test_engine_memory.py", "tests/ops/test_op_table.py"]


@needs_compiled
def test_core_suite_passes_in_pure_python():
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, SYMGRAD_PURE_PYTHON="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        "-W", "ignore::pytest.PytestUnraisableExceptionWarning", *CORE],
                       cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    check = subprocess.run([sys.executable, "-c", "from symgrad.api import compiled as _compiled; "
                            "print(_compiled.ENABLED)"], env=env, capture_output=True,
                           text=True, timeout=120)
    assert check.stdout.strip() == "False"
