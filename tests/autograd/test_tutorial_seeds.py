"""Every code example of the teaching tutorials prints the same text under symgrad as under torch.

``tests/autograd/seeds/`` holds one file per code example of the five tutorials in
``/work/shared/seeds`` (named ``<tutorial>_<nn>_<what>.py``).  The snippets of one tutorial
run in order in one namespace, as the cells of a notebook do, with ``torch`` bound either to
PyTorch 2.13 or to symgrad (``import torch`` and ``from torch import ...`` inside a snippet
are redirected too), ``autograd`` bound to its ``autograd`` and ``display = print``.

For each snippet the test compares what was printed, the warnings (category and text) and
the exception raised (type and message).  Only memory addresses are masked, and only so far
that the identities they show still count (see :func:`_mask_addresses`).  Random draws
(``randn``, ``rand``, ``randint``) are replaced, for both libraries, by the same numpy draws
fed through ``tensor()``, so even the random snippets are compared digit for digit.

The torch side runs in a fresh interpreter: PyTorch issues some warnings only once per
process (``TORCH_WARN_ONCE``, e.g. ``x.T`` on a 1-D tensor), so running it after other tests
in this session would hide them.  symgrad runs in this process.
"""
from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

SEEDS = Path(__file__).resolve().with_name("seeds")
SNIPPETS = sorted(p.stem for p in SEEDS.glob("[0-9]*.py"))
TUTORIALS = sorted({s[:3] for s in SNIPPETS})

# Snippets that raise under PyTorch too: the tutorials call them errors.
RAISING = {
    "000_08_second_derivative_error": "AttributeError",
    "000_18_detach_backward_error": "RuntimeError",
    "002_09_nonscalar_error": "RuntimeError",
    "004_02_tensor_backward_error": "RuntimeError",
}
RANDOM = re.compile(r"\btorch\.(randn|rand|randint)\(")

# Differences that are intended, with the reason.
EXPECTED_DIFFERENCES = {
    "000_01_version": "torch.__version__ is symgrad's own version number, not PyTorch's",
}

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


# --------------------------------------------------------------------------- running
class _SameDraws:
    """Random draws from one numpy generator, identical whichever library is bound."""

    def __init__(self, lib: types.ModuleType) -> None:
        self.lib = lib
        self.gen = np.random.default_rng(0)

    def _tensor(self, values: np.ndarray, dtype, requires_grad: bool):
        t = self.lib.tensor(values.tolist(), dtype=dtype)
        return t.requires_grad_(True) if requires_grad else t

    @staticmethod
    def _size(size: tuple) -> tuple:
        if len(size) == 1 and not isinstance(size[0], int):
            size = tuple(size[0])
        return tuple(size)

    def manual_seed(self, seed: int):
        self.gen = np.random.default_rng(seed)
        return self.lib.manual_seed(seed)

    def randn(self, *size, dtype=None, requires_grad=False, **kwargs):
        dtype = dtype or self.lib.get_default_dtype()
        return self._tensor(self.gen.standard_normal(self._size(size)), dtype, requires_grad)

    def rand(self, *size, dtype=None, requires_grad=False, **kwargs):
        dtype = dtype or self.lib.get_default_dtype()
        return self._tensor(self.gen.random(self._size(size)), dtype, requires_grad)

    def randint(self, low, high=None, size=None, dtype=None, requires_grad=False, **kwargs):
        if size is None:
            low, high, size = 0, low, high
        dtype = dtype or self.lib.int64
        return self._tensor(self.gen.integers(low, high, tuple(size)), dtype, requires_grad)


class _Bound(types.ModuleType):
    """``torch`` as the snippets see it: the library, with the random draws replaced."""

    def __init__(self, lib: types.ModuleType) -> None:
        super().__init__(lib.__name__)
        draws = _SameDraws(lib)
        self._lib = lib
        for name in ("manual_seed", "randn", "rand", "randint"):
            setattr(self, name, getattr(draws, name))

    def __getattr__(self, name: str):
        return getattr(self._lib, name)


def _builtins_for(bound: _Bound) -> dict:
    """Builtins whose ``__import__`` maps ``torch`` and ``torch.x`` to the bound library."""
    real_import = builtins.__import__
    lib_name = bound._lib.__name__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            target = lib_name + name[len("torch"):]
            real_import(target, globals, locals, fromlist, level)
            return sys.modules[target] if fromlist and target != lib_name else bound
        return real_import(name, globals, locals, fromlist, level)

    namespace = dict(vars(builtins))
    namespace["__import__"] = _import
    return namespace


def _run_snippet(name: str, code: str, namespace: dict) -> dict:
    out = io.StringIO()
    error = None
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            exec(compile(code, f"{name}.py", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - the exception is what we compare
            error = [type(e).__qualname__, str(e)]
    return {"stdout": out.getvalue(), "error": error,
            "warnings": [[w.category.__name__, str(w.message)] for w in caught]}


def run_all(lib_name: str) -> dict:
    """Run every tutorial's snippets in order, one namespace per tutorial."""
    lib = __import__(lib_name)
    __import__(lib_name + ".autograd")
    outcomes = {}
    for tutorial in TUTORIALS:
        bound = _Bound(lib)
        namespace = {"__name__": "__main__", "__builtins__": _builtins_for(bound),
                     "torch": bound, "autograd": lib.autograd, "display": print}
        for name in SNIPPETS:
            if name.startswith(tutorial):
                code = (SEEDS / f"{name}.py").read_text(encoding="utf-8")
                outcomes[name] = _run_snippet(name, code, namespace)
    return outcomes


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def torch_outcomes() -> dict:
    pytest.importorskip("torch")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, __file__, "torch"], capture_output=True,
                          text=True, encoding="utf-8", env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def symgrad_outcomes() -> dict:
    import importlib
    # A fresh interpreter has warned nothing yet; the torch side runs in one.
    # (``symgrad.tensor`` the attribute is the function; the module is in sys.modules.)
    importlib.import_module("symgrad.api.tensor")._WARNED_ONCE.clear()
    return run_all("symgrad")


def _mask_addresses(text: str) -> str:
    """Number the addresses of each line in order of appearance (``0x1``, ``0x2``, ...).

    Objects printed on one line are alive together, so equal addresses there mean the
    same object: ``x + x`` has two edges to one ``AccumulateGrad``, and that must show.
    """
    lines = []
    for line in text.split("\n"):
        seen: dict = {}
        lines.append(_ADDRESS.sub(
            lambda m: f"0x{seen.setdefault(m.group(), len(seen) + 1)}", line))
    return "\n".join(lines)


def _normalise(outcome: dict) -> dict:
    def mask(text):
        return None if text is None else _mask_addresses(text)
    return {"stdout": mask(outcome["stdout"]),
            "error": None if outcome["error"] is None else [outcome["error"][0],
                                                            mask(outcome["error"][1])],
            "warnings": [[c, mask(m)] for c, m in outcome["warnings"]]}


# --------------------------------------------------------------------------- tests
def test_addresses_are_masked_but_identity_is_kept() -> None:
    line = "((<A object at 0x7f01>, 0), (<A object at 0x7f01>, 0), (<B object at 0xAB>, 0))"
    assert _mask_addresses(line + "\n<C object at 0x7f01>") == (
        "((<A object at 0x1>, 0), (<A object at 0x1>, 0), (<B object at 0x2>, 0))\n"
        "<C object at 0x1>")


def test_snippets_found() -> None:
    assert len(SNIPPETS) >= 70
    assert TUTORIALS == ["000", "001", "002", "003", "004"]


def test_only_the_error_examples_raise_under_torch(torch_outcomes) -> None:
    raised = {name: o["error"][0] for name, o in torch_outcomes.items() if o["error"]}
    assert raised == RAISING


def test_random_draws_are_the_same_in_both_libraries() -> None:
    torch = pytest.importorskip("torch")
    import symgrad
    for lib in (torch, symgrad):
        bound = _Bound(lib)
        bound.manual_seed(6)
        a = bound.randn(4, 4, requires_grad=True)
        b = bound.randint(10, (1, 2), dtype=lib.float)
        assert a.requires_grad and a.dtype == lib.float32 and b.dtype == lib.float32
        draws = (a.tolist(), b.tolist(), bound.rand(3).tolist())
        if lib is torch:
            expected = draws
    assert draws == expected
    random = [s for s in SNIPPETS if RANDOM.search((SEEDS / f"{s}.py").read_text("utf-8"))]
    assert len(random) == 8


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_snippet_matches_torch(snippet: str, torch_outcomes, symgrad_outcomes) -> None:
    expected = _normalise(torch_outcomes[snippet])
    got = _normalise(symgrad_outcomes[snippet])
    if snippet in EXPECTED_DIFFERENCES:
        assert got != expected, f"{snippet} now matches: drop it from EXPECTED_DIFFERENCES"
        pytest.xfail(EXPECTED_DIFFERENCES[snippet])
    assert got["error"] == expected["error"]
    assert got["stdout"] == expected["stdout"]
    assert got["warnings"] == expected["warnings"]


if __name__ == "__main__":
    # The torch oracle in a fresh interpreter: python tests/autograd/test_tutorial_seeds.py torch
    print(json.dumps(run_all(sys.argv[1]), ensure_ascii=False))
