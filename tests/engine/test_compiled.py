"""The compiled modules are symgrad's own Python modules, compiled (symgrad.api.compiled).

There is no second source: ``setup.py`` compiles the ``.py`` files named in
``compiled.MODULES`` with Cython where a compiler exists.  These tests check that on a
machine that must build them (``SYMGRAD_REQUIRE_COMPILED=1``, as CI sets) they are built
and used; that a compiled module holds what its source defines; that random programs
give the same values, graphs and gradients compiled and with ``SYMGRAD_PURE_PYTHON=1``
(which loads the ``.py`` files); and that the core test modules pass in pure Python.
"""
from __future__ import annotations

import ast
import importlib
import json
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
from symgrad.api import compiled

ROOT = Path(__file__).resolve().parents[2]
needs_compiled = pytest.mark.skipif(not compiled.ENABLED, reason="compiled modules not built")


def test_built_when_required():
    # .ci/run sets SYMGRAD_REQUIRE_COMPILED=1: a machine with a C compiler must build them.
    if os.environ.get("SYMGRAD_REQUIRE_COMPILED") == "1":
        assert compiled.ENABLED, compiled.compiled_modules()


def test_the_compiled_modules_are_python_modules():
    for name in compiled.MODULES:
        assert (ROOT / (name.replace(".", "/") + ".py")).is_file(), name


@needs_compiled
@pytest.mark.parametrize("name", compiled.MODULES)
def test_a_compiled_module_holds_what_its_source_defines(name):
    module = importlib.import_module(name)
    assert module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    source = ast.parse((ROOT / (name.replace(".", "/") + ".py")).read_text())
    defined = {n.name for n in source.body
               if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert defined <= set(vars(module)), defined - set(vars(module))
    assert module.__doc__ == ast.get_docstring(source, clean=False)


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


def _run(steps, dtype, seed):
    """Run a program through ``apply``; return leaves, every value, and the output."""
    rng = np.random.default_rng(seed)
    leaves = [symgrad.tensor(float(rng.uniform(0.5, 1.5)), dtype=dtype, requires_grad=True)
              for _ in range(3)]
    consts = [symgrad.tensor(float(rng.uniform(0.5, 1.5)), dtype=dtype) for _ in range(2)]
    y = leaves[0]
    values = [y]
    for step in steps:
        if step[0] == "unary":
            y = symgrad.api.apply.apply(ops.OPS[step[1]], (y,))
        else:
            _, name, kind, swap = step
            other = {"value": values[int(rng.integers(len(values)))],
                     "leaf": leaves[int(rng.integers(3))], "const": consts[int(rng.integers(2))],
                     "number": float(rng.uniform(0.5, 2.0)), "int": int(rng.integers(1, 4))}[kind]
            args = (other, y) if swap and kind in ("value", "leaf", "const") else (y, other)
            y = symgrad.api.apply.apply(ops.OPS[name], args)
        values.append(y)
    return leaves, values, y


def _describe(t, index):
    """What apply decided for a tensor, with nodes and tensors named by position."""
    fn = t.grad_fn

    def name(x):
        if isinstance(x, symgrad.Tensor):
            return ["tensor", index.get(id(x), "?")]
        if isinstance(x, symgrad.ir.node.Node):
            v = getattr(x, "variable", None)
            return [type(x).__name__, index.get(id(v), "?") if v is not None else ""]
        return ["value", repr(x)]

    data = t._data
    node = None
    if fn is not None:
        node = [type(fn).__name__, [name(x) for x in fn.inputs], repr(fn.attrs),
                [name(s) for s in fn._saved], repr(fn._versions), repr(fn._meta), fn._plain,
                fn._seq]
    return [type(data).__name__, np.asarray(data).dtype.name, np.asarray(data).tobytes().hex(),
            repr(t.dtype), t.requires_grad, t.is_leaf, t._vc, node]


def snapshots(n_seeds: int) -> list:
    """Every program's values, graph and gradients (for the two retain modes)."""
    out = []
    for seed in range(n_seeds):
        steps = _program(random.Random(seed))
        for dtype in (symgrad.float32, symgrad.float64):
            for retain in (False, True):
                with np.errstate(all="ignore"):
                    leaves, values, y = _run(steps, dtype, seed)
                    index = {id(v): i for i, v in enumerate(values)}
                    base = y.grad_fn._seq
                    graph = [_describe(v, index) for v in values]
                    for g in graph:  # sequence numbers relative to the output's
                        if g[-1] is not None:
                            g[-1][-1] -= base
                    nodes = [v.grad_fn for v in values if v.grad_fn is not None]
                    y.backward(retain_graph=retain)
                out.append([graph, [None if l.grad is None else repr(l.grad) for l in leaves],
                            [n._released for n in nodes]])
    return out


@needs_compiled
def test_random_programs_agree_compiled_and_pure_python():
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); "
            "from test_compiled import snapshots; print(json.dumps(snapshots(12)))")
    env = dict(os.environ, SYMGRAD_PURE_PYTHON="1")
    r = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.splitlines()[-1]) == json.loads(json.dumps(snapshots(12)))


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


def test_in_place_change_is_caught():
    a = symgrad.tensor(2.0, requires_grad=True)
    b = a * 1.0
    c = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.backward()


# ------------------------------------------------------------------ the pure-Python path
CORE = ["tests/tensor/test_programs_and_graphs.py", "tests/autograd/test_tutorial_seeds.py",
        "tests/autograd/test_autograd_semantics.py", "tests/engine/test_engine_order.py",
        "tests/engine/test_engine_memory.py", "tests/ops/test_op_table.py"]


@needs_compiled
def test_core_suite_passes_in_pure_python():
    env = dict(os.environ, SYMGRAD_PURE_PYTHON="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        "-W", "ignore::pytest.PytestUnraisableExceptionWarning", *CORE],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    check = subprocess.run([sys.executable, "-c", "from symgrad.api import compiled; "
                            "print(compiled.ENABLED, compiled.compiled_modules())"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert check.stdout.split() == ["False", "[]"]
