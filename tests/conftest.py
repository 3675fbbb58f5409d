"""What the tests share: PyTorch 2.13 as the oracle, and how an outcome is compared with it.

The tests are grouped by subject, one folder each (``ops``, ``tensor``, ``autograd``,
``engine``, ``symbolic``, ``check``, ``drawing``, ``cli``, ``architecture``).  Most of them
run one snippet, written once against a library ``lib`` (``torch`` or ``symgrad``), in both
libraries and compare what a user would see.  The helpers for that live here, once:

* :func:`torch` (a fixture) and :func:`oracle` (for helpers): PyTorch, or the test is
  skipped.  Nothing here imports torch when this file is loaded, so the tests that need no
  torch (the golden DOT files, the parser, the architecture) run without it;
* :func:`outcome` / :func:`same_outcome`: the result (:func:`describe`), the error
  (:func:`error_kind` and message) and every warning of a snippet, in both libraries;
* :func:`plain` / :func:`check_same`: results as nested numpy values with dtype and
  ``requires_grad``, compared within a tolerance;
* :func:`to_numpy` (PyTorch's zero tensors included) and :func:`mask_addresses`;
* :func:`functions`: the custom ``autograd.Function`` classes several subjects use.

Test modules import them with ``from conftest import ...`` (pytest puts this folder on
``sys.path``), so this is the only ``conftest.py`` under ``tests/``: a second one would be
imported under the same name.
"""
from __future__ import annotations

import importlib
import re
import sys
import warnings

import numpy as np
import pytest

import symgrad

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

# The tutorial snippets are data for autograd/test_tutorial_seeds.py, not modules:
# --doctest-modules would otherwise import (and so run) every one of them.
collect_ignore_glob = ["autograd/seeds/[0-9]*.py"]


# --------------------------------------------------------------------------- the oracle
def oracle():
    """PyTorch, imported on first use; the calling test is skipped where it is missing."""
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def torch():
    """PyTorch, the oracle: the test is skipped where it is not installed."""
    return oracle()


def calls_made(fn, expected: tuple = ()) -> int:
    """How many Python and C functions ``fn()`` calls (an exception in ``expected`` is its
    outcome): a measure of work that does not depend on the machine's speed or load."""
    count = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1
    sys.setprofile(profile)
    try:
        fn()
    except expected:
        pass
    finally:
        sys.setprofile(None)
    return count[0]


def mask_addresses(text: str) -> str:
    """``text`` with memory addresses (``" at 0x7f..."``) made equal."""
    return ADDRESS.sub(" at 0x?", text)


def to_numpy(t) -> np.ndarray:
    """A tensor of either library as a numpy array (PyTorch's zero tensors included)."""
    if getattr(t, "_is_zerotensor", lambda: False)():
        # What torch's zeros_like formulas give; its numpy() refuses them.
        return np.zeros(tuple(t.shape), dtype=str(t.dtype).replace("torch.", ""))
    return np.asarray(t.detach().numpy())


# --------------------------------------------------------------------------- outcomes
def error_kind(e: BaseException) -> str:
    """An error by the name of its first built-in class (torch's own subclasses aside);
    ``GradcheckError`` by its name (both libraries have one)."""
    if type(e).__name__ == "GradcheckError":
        return "GradcheckError"
    for c in type(e).__mro__:
        if c.__module__ == "builtins":
            return c.__name__
    return type(e).__name__


def describe(x, lib):
    """A library-neutral, comparable picture of a result: a tensor by its ``repr`` (values,
    dtype, ``requires_grad``, ``grad_fn``), dtype, shape, flags and node name; containers
    element by element; nodes by name; anything else by its text (addresses masked)."""
    if isinstance(x, lib.Tensor):
        return ("Tensor", type(x).__name__, mask_addresses(repr(x)), str(x.dtype),
                tuple(x.shape), x.requires_grad, x.is_leaf,
                None if x.grad_fn is None else x.grad_fn.name())
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, tuple(describe(v, lib) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, describe(v, lib)) for k, v in x.items()))
    if isinstance(x, (bool, int, str, type(None))):
        return x
    if isinstance(x, float):
        return round(x, 6)
    if type(x).__name__ in ("torch.Size", "Size"):
        return ("Size", tuple(x))
    if hasattr(x, "next_functions") or type(x).__name__ == "AccumulateGrad":
        return ("Node", x.name())
    if isinstance(x, type):
        return ("type", x.__name__)
    return ("other", mask_addresses(str(x)))


def outcome(scenario, lib):
    """What running ``scenario(lib)`` does: ``("ok", described result)`` or ``("error",
    kind, message)``, and the warnings (category, text; DeprecationWarnings aside)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", describe(scenario(lib), lib))
        except Exception as e:  # noqa: BLE001 - the outcome is what we compare
            result = ("error", error_kind(e), mask_addresses(str(e)))
    warned = [(w.category.__name__, str(w.message)) for w in caught
              if not issubclass(w.category, DeprecationWarning)]
    return result, warned


def same_outcome(scenario, expect_error: bool = True) -> None:
    """Run ``scenario`` in torch and symgrad: same result, error and warnings; with
    ``expect_error`` torch must fail (so that the scenario tests what it means to)."""
    want = outcome(scenario, oracle())
    got = outcome(scenario, symgrad)
    if expect_error:
        assert want[0][0] == "error", "the scenario should fail in torch"
    assert got == want


# --------------------------------------------------------------------------- values
def plain(x):
    """Tensors as (values, requires_grad, dtype name); tuples, lists and dicts kept."""
    torch = sys.modules.get("torch")  # a torch tensor exists only if torch is imported
    if isinstance(x, symgrad.Tensor) or (torch is not None and isinstance(x, torch.Tensor)):
        return (np.asarray(x.detach().tolist(), dtype=float), x.requires_grad,
                str(x.dtype).replace("torch.", ""))
    if isinstance(x, (tuple, list)):
        return type(x)(plain(v) for v in x)
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def assert_same(want, got, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Two :func:`plain` pictures agree: structure exactly, values within tolerance."""
    if isinstance(want, tuple) and len(want) == 3 and isinstance(want[0], np.ndarray):
        assert isinstance(got, tuple) and len(got) == 3 and isinstance(got[0], np.ndarray), (
            want, got)
        assert got[0].shape == want[0].shape, (want, got)
        np.testing.assert_allclose(got[0], want[0], rtol=rtol, atol=atol)
        assert got[1:] == want[1:], (want, got)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (want, got)
        for w, g in zip(want, got):
            assert_same(w, g, rtol, atol)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (want, got)
        for k in want:
            assert_same(want[k], got[k], rtol, atol)
    else:
        assert got == want


def both(scenario):
    """``scenario(lib)`` in torch and in symgrad, as :func:`plain` pictures."""
    return plain(scenario(oracle())), plain(scenario(symgrad))


def check_same(scenario, **tol) -> None:
    """``scenario`` gives the same values (dtypes, ``requires_grad``) in both libraries."""
    want, got = both(scenario)
    assert_same(want, got, **tol)


# --------------------------------------------------------------------------- functions
def saving_function(lib, name: str, forward, backward) -> type:
    """The ``autograd.Function`` ``name`` of ``lib`` that saves its one input ``x`` and
    returns ``forward(x)``; its backward is ``backward(x, g)``."""
    def save_forward(ctx, x):
        ctx.save_for_backward(x)
        return forward(x)

    def saved_backward(ctx, g):
        (x,) = ctx.saved_tensors
        return backward(x, g)
    return type(name, (lib.autograd.Function,), {"forward": staticmethod(save_forward),
                                                  "backward": staticmethod(saved_backward)})


def functions(lib) -> dict:
    """Custom ``autograd.Function`` classes of ``lib``, by name: ``Cube`` (saves its input),
    ``ExpOut`` (saves its output), ``Sin`` and ``WrongSin`` (a backward 1.5 times too
    large), ``WrongDouble`` (squares: the right gradient values through a detached input,
    so a wrong second derivative) and ``OnceSquare`` (squares, its backward
    ``once_differentiable``)."""
    once = importlib.import_module(lib.__name__ + ".autograd.function").once_differentiable

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    class ExpOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    def saving(name: str, forward, backward) -> type:
        return saving_function(lib, name, forward, backward)

    found = {"Cube": Cube, "ExpOut": ExpOut,
             "Sin": saving("Sin", lambda x: x.sin(), lambda x, g: g * x.cos()),
             "WrongSin": saving("WrongSin", lambda x: x.sin(), lambda x, g: g * x.cos() * 1.5),
             "WrongDouble": saving("WrongDouble", lambda x: x ** 2,
                                   lambda x, g: g * 2 * x.detach() + 0 * x),
             "OnceSquare": saving("OnceSquare", lambda x: x ** 2, lambda x, g: 2 * x * g)}
    found["OnceSquare"].backward = staticmethod(once(found["OnceSquare"].backward))
    return found


def assert_kind_named(expr: str, var: str, right: str, wrong: str, shapes, words, never,
                      budget: float = 1.5, first: bool = False) -> None:
    """One row of a diagnosis table (``tests/check``): ``right`` is proved correct with no
    diagnosis, ``wrong`` is wrong and its diagnosis of ``var`` (the first line only when
    ``first``) holds every one of ``words`` and not ``never``."""
    def check(grad):
        return symgrad.check(expr, {var: grad}, shapes=shapes or {}, samples=3,
                             timeout=budget)

    good = check(right)
    assert good.verdict == "correct", good.text()
    assert not good.diagnosis
    bad = check(wrong)
    assert bad.verdict == "wrong", bad.text()
    mine = [d for d in bad.diagnosis if d.startswith(f"{var}: ")]
    text = (bad.diagnosis[0] if bad.diagnosis[0].startswith(f"{var}: ") else "") if first \
        else "\n".join(mine)
    for w in words:
        assert w in text, bad.diagnosis
    if never is not None:
        assert never not in (" | ".join(bad.diagnosis) if first else text), bad.diagnosis


def printed(code: str, lib) -> list:
    """What the snippet ``code`` prints with ``lib`` as ``torch``: its ``show(...)`` lines,
    ``catch(fn)`` showing ``fn()`` or the type and message it raises, an exception that
    ends the snippet the same way; addresses masked, warnings ignored."""
    out = []

    def show(*args):
        out.append(" ".join(str(a) for a in args))

    def catch(fn):
        try:
            show(fn())
        except Exception as e:  # the type and message are what is compared
            show("EXC", type(e).__name__, e)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, {"torch": lib, "show": show, "catch": catch, "__name__": "snippet"})
        except Exception as e:
            show("EXC", type(e).__name__, e)
    return [mask_addresses(line) for line in out]


def check_case(case: dict, budget: float = 1.5):
    """``symgrad.check`` of a corpus entry (``expr``, ``grad``, ``shapes``) of
    ``tests/check``'s JSON files, three random points."""
    shapes = {k: tuple(v) for k, v in case["shapes"].items()}
    return symgrad.check(case["expr"], case["grad"], shapes=shapes, samples=3, timeout=budget)


def case_id(case: dict) -> str:
    """A corpus entry's test id: its expression and claims, at most 70 characters."""
    text = f"{case['expr']} | " + ", ".join(f"{k}={v}" for k, v in case["grad"].items())
    return text if len(text) <= 70 else text[:67] + "..."
