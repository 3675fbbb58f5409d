"""Issue 21 item 4, the kinds held-out set 3 (``corpus_heldout_d3.json``) found unnamed:
each with a right answer (proved correct, no diagnosis) and a wrong one written as a
student would, whose diagnosis names the mistake in a teacher's words (and never in the
words it had before: a ratio as a factor, a size as a number, only "wrong shape", a
difference ``claimed - true``).

Kinds: the power rule's exponent for a fractional or negative power; the chain rule at
the wrong argument, or with the inner derivative inside the outer function; the
derivative of a part of f with respect to another variable; a constant missing factor
written as such (``log(2)``, not ``extra factor 1/log(2)``); the size of the wrong
tensor in a mean; a missing or extra term of the claim's own sum; a wrong variable in one
place; a scalar claim for a vector (the chain rule's vector factor, a sum that should
not be) and a vector claim for a broadcast scalar; a division that should not be;
``det(A)`` left out; relu's step mistaken (``relu(u)`` or ``sign(u)`` for the step,
relu's or leaky ReLU's mask left out) and abs's ``sign(u)`` left out; a product-rule term
present but with a slip of its own.  From a fresh set 4 (written after set 3's changes,
recorded in the corpus file as ``fresh_wrong``): an extra factor in a denominator (``1/y``,
not ``y``), the inner expression where its derivative belongs, a factor left out inside a
mean, 1 where a variable belongs, and a simple missing factor before a rewrite of the
chain rule's argument."""
from __future__ import annotations

import pytest

import symgrad
from conftest import assert_kind_named
from symgrad.checking import slips
from symgrad.checking.sampling import Claim
from symgrad.checking.slips import MAX_REWRITES, named_slip

BUDGET = 1.5  # (the CLI's default: a wrong answer needs only the cheap proofs)
XW = {"X": ("m", "n"), "w": ("n",), "y": ("m",)}
V = {"x": ("n",), "a": ("n",)}

TABLE = [  # (kind, expression, variable, right, wrong, shapes, key words, never)
    ("power rule, fractional exponent", "x**2.5", "x", "2.5*x**1.5", "2.5*x**2.5", None,
     ["power rule: the claim has x**2.5 where the true gradient has x**1.5"],
     "extra factor"),
    ("power rule, a third", "x**(2/3)", "x", "2/3*x**(-1/3)", "2/3*x**(-2/3)", None,
     ["power rule: the claim has x**(-2/3) where the true gradient has x**(-1/3)"],
     "missing factor"),
    ("power rule, in a denominator", "1/x**4", "x", "-4/x**5", "-4/x**3", None,
     ["power rule: the claim has 1/x**3 = x**(-3) where the true gradient has "
      "1/x**5 = x**(-5)"], None),
    ("power rule through a square root", "2/sqrt(x)", "x", "-x**(-1.5)", "-1/sqrt(x)",
     None, ["power rule: the claim has 1/sqrt(x) = x**(-0.5) where the true gradient has "
            "1/x**1.5 = x**(-1.5)"], "missing factor"),
    ("outer derivative at the wrong argument", "atan(3*x)", "x", "3/(1 + 9*x**2)",
     "3/(1 + x**2)", None,
     ["the outer derivative is taken at x, not at the inner 3*x", "1 + (3*x)**2"],
     "claimed - true"),
    ("outer derivative at the wrong argument, in a call", "sin(x**3)", "x",
     "3*x**2*cos(x**3)", "3*x**2*cos(x)", None,
     ["not at the inner x**3", "has cos(x) where the true gradient has cos(x**3)"],
     "claimed - true"),
    ("inner derivative inside the outer function", "exp(cos(x))", "x",
     "-sin(x)*exp(cos(x))", "exp(-sin(x))", None,
     ["the chain rule: the claim has the inner derivative", "where the inner cos(x) "
      "belongs"], "claimed - true"),
    ("derivative of a part with respect to another variable", "x**3*y", "y", "x**3",
     "3*x**2", None,
     ["wrong variable: the claim 3*x**2 is the derivative of x**3 with respect to x"],
     "missing factor"),
    ("a constant factor missing: log(3)", "3**x", "x", "3**x*log(3)", "3**x", None,
     ["missing factor log(3)"], "extra factor"),
    ("the size of the wrong tensor in a mean", "mean((X @ w - y)**2)", "w",
     "2*X.T @ (X @ w - y)/numel(y)", "2*X.T @ (X @ w - y)/numel(X)", XW,
     ["1/numel(X) where the true gradient has 1/numel(y)"], "extra factor 1/numel(w)"),
    ("the size of the wrong tensor, not a number", "mean((X @ w - y)**2)", "w",
     "2*X.T @ (X @ w - y)/numel(y)", "2*X.T @ (X @ w - y)/numel(w)", XW,
     ["1/numel(w) where the true gradient has 1/numel(y)"], "missing factor 3/2"),
    ("a vector term left out", "0.5*dot(x, x) - dot(a, x)", "x", "x - a", "x", V,
     ["missing term -a: the true gradient is x - a"], "a_0"),
    ("a term too many", "dot(x, x)*dot(a, a)", "x", "2*x*dot(a, a)",
     "2*x*dot(a, a) + 2*a*dot(x, x)", V,
     ["extra term 2*a*dot(x, x): the true gradient is 2*x*dot(a, a)"], "claimed - true"),
    ("a wrong variable in one place", "sum((w*x - y)**2)", "w", "2*sum((w*x - y)*x)",
     "2*sum((w*x - y)*w)", {"x": ("n",), "y": ("n",)},
     ["wrong variable: the claim has (w*x - y)*w where the true gradient has "
      "(w*x - y)*x"], "claimed - true"),
    ("a scalar claim: the chain rule's vector factor", "sin(dot(a, x))", "x",
     "cos(dot(a, x))*a", "cos(dot(a, x))", V,
     ["wrong shape: the claimed gradient is a scalar", "missing factor a: the gradient of "
      "dot(a, x) with respect to x"], None),
    ("a scalar claim: norm's gradient left out", "norm(x)**3", "x", "3*norm(x)*x",
     "3*norm(x)**2", V, ["missing factor x/norm(x): the gradient of norm(x)"], None),
    ("a scalar claim: a sum that should not be", "sum(exp(x))", "x", "exp(x)",
     "sum(exp(x))", V,
     ["sum(exp(x)) where the true gradient has exp(x): each element has its own "
      "derivative"], None),
    ("a broadcast scalar: its gradient sums", "sum(tanh(x + b))", "b",
     "sum(1 - tanh(x + b)**2)", "1 - tanh(x + b)**2", V,
     ["missing sum over the elements", "broadcast"], None),
    ("a division that should not be", "0.5*norm(x - a)**2", "x", "x - a",
     "(x - a)/norm(x - a)", V,
     ["extra factor 1/norm(x - a): the claim is right without it"], "missing factor"),
    ("det(A) left out", "det(A)", "A", "det(A)*inverse(A).T", "inverse(A.T)",
     {"A": ("n", "n")}, ["missing factor det(A)"], "A_0_0"),
    ("relu(u) for relu's step", "sum(relu(W @ x))", "x",
     "W.T @ ((1 + sign(W @ x))/2)", "W.T @ relu(W @ x)", {"W": ("m", "n"), "x": ("n",)},
     ["relu(W @ x) where relu's derivative belongs: the step"], None),
    ("sign(u) for relu's step", "dot(a, relu(x))", "x", "a*(1 + sign(x))/2",
     "a*sign(x)", V,
     ["sign(x) where relu's derivative belongs: sign is -1 where x < 0"], None),
    ("relu's mask left out", "sum(relu(1 - y*(X @ w)))", "w",
     "-X.T @ (y*(1 + sign(1 - y*(X @ w)))/2)", "-X.T @ y", XW,
     ["missing relu's mask", "the true gradient has y*((1 + sign(1 - y*(X @ w)))/2)"],
     None),
    ("leaky ReLU's mask left out", "dot(a, leaky_relu(x))", "x",
     "a*(0.505 + 0.495*sign(x))", "a", V,
     ["missing leaky ReLU's mask", "0.01 where x < 0"], None),
    ("abs's sign left out", "abs(x)**5", "x", "5*x**4*sign(x)", "5*abs(x)**4", None,
     ["missing factor sign(x): the derivative of abs(x) is sign(x)"], None),
    ("an extra factor in a denominator", "log(3*x*y)", "x", "1/x", "1/(x*y)", None,
     ["extra factor 1/y: the claim is right without it"], "extra factor y"),
    ("the inner for its derivative", "sin(x**4)", "x", "4*x**3*cos(x**4)",
     "x**4*cos(x**4)", None,
     ["the claim has the inner x**4 where its derivative 4*x**3 belongs"], "extra factor"),
    ("a factor inside a mean", "mean(sin(w*x))", "w", "mean(cos(w*x)*x)",
     "mean(cos(w*x))", {"x": ("n",)},
     ["missing factor x inside mean(cos(w*x))"], "claimed - true"),
    ("1 where a variable belongs", "logsumexp(z) - dot(y, z)", "z", "softmax(z) - y",
     "softmax(z) - 1", {"z": ("n",), "y": ("n",)},
     ["1 where the true gradient has y", "the same only where y is 1"], "claimed - true"),
    ("a simple factor, not the chain rule's argument", "sin(x)**2", "x",
     "2*sin(x)*cos(x)", "2*cos(x)", None, ["missing factor sin(x)"], "the chain rule"),
    ("a product-rule term with a slip of its own", "x*sin(x**2)", "x",
     "sin(x**2) + 2*x**2*cos(x**2)", "sin(x**2) + 2*x*cos(x**2)", None,
     ["missing factor x in the term 2*x*cos(x**2)"], "lacks"),
]


def check(expr, grads, shapes=None):
    return symgrad.check(expr, grads, shapes=shapes or {}, samples=3, timeout=BUDGET)


@pytest.mark.parametrize("kind, expr, var, right, wrong, shapes, words, never", TABLE,
                         ids=[t[0] for t in TABLE])
def test_each_kind_is_named(kind, expr, var, right, wrong, shapes, words, never):
    assert_kind_named(expr, var, right, wrong, shapes, words, never, budget=BUDGET)


def test_the_rewrites_are_counted_not_timed(monkeypatch):
    """A claim no rewrite mends: the search stops after MAX_REWRITES rewrites, whatever
    their kinds (each evaluated at most once, at the first point that fails)."""
    tried = []
    real = slips._gives
    monkeypatch.setattr(slips, "_gives", lambda tree, *a: tried.append(tree) or real(tree, *a))
    f = symgrad.parse("dot(a, relu(W @ x)) + mean((W @ x - b)**2) + det(W)")
    shapes = {"a": (3,), "W": (3, 3), "x": (3,), "b": (3,)}
    claim = Claim(" + ".join(["sin(W @ x)*a*sign(x)*numel(b)/norm(x)*abs(b)"] * 6),
                  ["a", "W", "x", "b"])
    assert named_slip(f, claim, "x", [], shapes, 1e-6, 1e-9, base=None) is None
    assert 100 < len(tried) <= MAX_REWRITES


def test_region_kinds_do_not_replace_the_region():
    """Where a claim is right on part of the domain, the slip is said after the region,
    never instead of it."""
    bad = check("abs(x)**3", {"x": "3*x**2"})
    assert bad.verdict == "wrong"
    assert bad.diagnosis[0].startswith("x: right for x > 0, wrong for x < 0")
    assert "x: missing factor sign(x): the derivative of abs(x) is sign(x)" in bad.diagnosis
