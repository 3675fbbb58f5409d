"""Issue 21 item 4, the kinds of mistake held-out set 4 (``corpus_heldout_m4.json``) found
unnamed or misnamed, each as a GENERAL kind: varied examples beyond the m4 item, each
with a right answer (proved correct, no diagnosis) and a wrong one whose diagnosis names
the mistake in a teacher's words (and never in the words it had before).

Kinds: the chain rule's inner derivative put inside the outer function's argument; the
outer derivative taken at the variable instead of the inner expression; a division by
the inner derivative where the chain rule multiplies; a constant factor named missing or
extra by the side that holds it (``1/log(10)`` the claim lacks); a variable of the claim
where an expression of it belongs (``sum(z)`` for ``sum(exp(z))``); abs's derivative
taken as the identity; a size ``1/numel(y)`` applied to a term it does not belong to;
every occurrence of a matrix expression needing a transpose; the product rule's second
term of a vector left out (with a counterexample at a size that shows it, not 1); one
term of the claim the derivative by another variable; shape lines without sizes the
counterexample shown may not have.
"""
from __future__ import annotations

import re

import pytest

import symgrad
from conftest import assert_kind_named
from symgrad.checking.diagnosis import shape_mismatches

BUDGET = 1.5  # (the CLI's default)
XW = {"X": ("m", "n"), "w": ("n",), "y": ("m",)}
V = {"x": ("n",), "a": ("n",), "b": ("n",)}
M = {"A": ("n", "n"), "B": ("n", "n"), "u": ("n",), "v": ("n",), "x": ("n",)}

TABLE = [  # (kind, expression, variable, right, wrong, shapes, key words, never)
    # -- the inner derivative put inside the outer function's argument
    ("inner derivative as the argument: cos(x**3)", "cos(x**3)", "x",
     "-3*x**2*sin(x**3)", "-sin(3*x**2)", None,
     ["the inner derivative 3*x**2 is put inside sin(3*x**2)", "at the inner x**3"],
     "claimed - true"),
    ("inner derivative as the argument: sin(x**2)", "sin(x**2)", "x", "2*x*cos(x**2)",
     "cos(2*x)", None, ["the inner derivative 2*x is put inside cos(2*x)"],
     "claimed - true"),
    ("inner derivative as the argument: exp(x**3)", "exp(x**3)", "x",
     "3*x**2*exp(x**3)", "exp(3*x**2)", None,
     ["the inner derivative 3*x**2 is put inside exp(3*x**2)"], "claimed - true"),
    ("inner derivative as the argument: cos(sqrt(x))", "cos(sqrt(x))", "x",
     "-sin(sqrt(x))/(2*sqrt(x))", "-sin(1/(2*sqrt(x)))", None,
     ["is put inside sin(1/(2*sqrt(x)))", "at the inner sqrt(x)"], "claimed - true"),
    # -- the outer derivative taken at x instead of the inner expression
    ("outer derivative at x: atan(x**2)", "atan(x**2)", "x", "2*x/(1 + x**4)",
     "2*x/(1 + x**2)", None,
     ["the outer derivative is taken at x, not at the inner x**2"], "power rule"),
    ("outer derivative at x: atan(x**3)", "atan(x**3)", "x", "3*x**2/(1 + x**6)",
     "3*x**2/(1 + x**2)", None,
     ["the outer derivative is taken at x, not at the inner x**3"], "power rule"),
    ("outer derivative at x: asin(2*x)", "asin(2*x)", "x", "2/sqrt(1 - 4*x**2)",
     "2/sqrt(1 - x**2)", None,
     ["the outer derivative is taken at x, not at the inner 2*x"], "claimed - true"),
    # -- divided by the inner derivative where the chain rule multiplies
    ("divided by the inner derivative: exp(3*x)", "exp(3*x)", "x", "3*exp(3*x)",
     "exp(3*x)/3", None, ["divided by 3 where the chain rule multiplies by it"],
     "missing factor 9"),
    ("divided by the inner derivative: sin(4*x)", "sin(4*x)", "x", "4*cos(4*x)",
     "cos(4*x)/4", None, ["divided by 4 where the chain rule multiplies by it"],
     "missing factor 16"),
    ("divided by the inner derivative: (2*x + 1)**5", "(2*x + 1)**5", "x",
     "10*(2*x + 1)**4", "5*(2*x + 1)**4/2", None,
     ["divided by 2 where the chain rule multiplies by it"], "missing factor 4"),
    # -- a constant named missing or extra by the side that holds it
    ("a constant the claim lacks: log10", "log10(x)", "x", "1/(x*log(10))", "1/x", None,
     ["missing factor 1/log(10)"], "extra factor"),
    ("a constant the claim lacks: log2 of a square", "log2(x**2)", "x",
     "2/(x*log(2))", "2/x", None, ["missing factor 1/log(2)"], "extra factor"),
    ("a constant the claim has too many", "log(x)", "x", "1/x", "1/(x*log(10))", None,
     ["extra factor 1/log(10)"], "missing factor"),
    ("a constant the claim lacks: 10**x", "10**x", "x", "10**x*log(10)", "10**x", None,
     ["missing factor log(10)"], "extra factor"),
    # -- a variable where an expression of it belongs
    ("a sub-expression replaced: logsumexp's normaliser", "logsumexp(z)", "z",
     "exp(z)/sum(exp(z))", "exp(z)/sum(z)", {"z": ("n",)},
     ["sum(z) where the true gradient has sum(exp(z))"], "claimed - true"),
    ("a sub-expression replaced: log of a sum of squares", "log(sum(x**2))", "x",
     "2*x/sum(x**2)", "2*x/sum(x)", {"x": ("n",)},
     ["sum(x) where the true gradient has sum(x**2)"], "claimed - true"),
    ("a sub-expression replaced: a weighted log-sum", "log(dot(a, exp(x)))", "x",
     "a*exp(x)/dot(a, exp(x))", "a*exp(x)/dot(a, x)", V,
     ["dot(a, x) where the true gradient has dot(a, exp(x))"], "claimed - true"),
    # -- abs's derivative taken as the identity
    ("abs as the identity: L1 regularisation", "sum((X @ w - y)**2) + lam*sum(abs(w))",
     "w", "2*X.T @ (X @ w - y) + lam*sign(w)", "2*X.T @ (X @ w - y) + lam*w",
     {**XW, "lam": ()},
     ["the gradient of abs(w) is sign(w), not w", "lam*w where the true gradient has "
      "lam*sign(w)"], "claimed - true"),
    ("abs as the identity: L1 distance", "sum(abs(x - a))", "x", "sign(x - a)", "x - a",
     V, ["the gradient of abs(x - a) is sign(x - a), not x - a"], "claimed - true"),
    ("abs as the identity: a scalar inside", "abs(sin(x))", "x", "sign(sin(x))*cos(x)",
     "sin(x)*cos(x)", None, ["the gradient of abs(sin(x)) is sign(sin(x)), not sin(x)"],
     "claimed - true"),
    # -- a size applied to a term it does not belong to
    ("a size on the wrong term: mean + ridge", "mean((X @ w - y)**2) + lam*dot(w, w)", "w",
     "2*X.T @ (X @ w - y)/numel(y) + 2*lam*w", "2*(X.T @ (X @ w - y) + lam*w)/numel(y)",
     {**XW, "lam": ()}, ["the division by numel(y) was applied to the term lam*w too"],
     "extra term"),
    ("a size on the wrong term: sum/N + squares", "sum((X @ w - y)**2)/numel(y) + "
     "lam*sum(w**2)", "w", "2*X.T @ (X @ w - y)/numel(y) + 2*lam*w",
     "(2*X.T @ (X @ w - y) + 2*lam*w)/numel(y)", {**XW, "lam": ()},
     ["the division by numel(y) was applied to the term 2*lam*w too"], "extra term"),
    ("a size on the wrong term: elementwise", "mean((w*x - y)**2) + 0.5*lam*dot(w, w)",
     "w", "2*x*(w*x - y)/numel(y) + lam*w", "(2*x*(w*x - y) + lam*w)/numel(y)",
     {"w": ("n",), "x": ("n",), "y": ("n",), "lam": ()},
     ["the division by numel(y) was applied to the term lam*w too"], "extra term"),
    # -- every occurrence of a matrix expression needs a transpose
    ("transposes: both inverses of a bilinear form", "dot(u, inverse(A) @ v)", "A",
     "-inverse(A).T @ outer(u, v) @ inverse(A).T",
     "-inverse(A) @ outer(u, v) @ inverse(A)", M,
     ["both occurrences of inverse(A) need transposing"], "right only when"),
    ("transposes: trace of inverse(A) @ B", "trace(inverse(A) @ B)", "A",
     "-inverse(A).T @ B.T @ inverse(A).T", "-inverse(A) @ B.T @ inverse(A)", M,
     ["both occurrences of inverse(A) need transposing"], "right only when"),
    ("transposes: a bilinear form through B", "dot(u, inverse(A) @ B @ v)", "A",
     "-inverse(A).T @ outer(u, B @ v) @ inverse(A).T",
     "-inverse(A) @ outer(u, B @ v) @ inverse(A)", M,
     ["both occurrences of inverse(A) need transposing"], None),
    ("transposed whole: a symmetric middle", "dot(x, inverse(A) @ x)", "A",
     "-inverse(A).T @ outer(x, x) @ inverse(A).T",
     "-inverse(A) @ outer(x, x) @ inverse(A)", M,
     ["transposed: the claimed gradient is the transpose of the true one"], None),
    # -- the product rule's second term of a vector left out
    ("product rule, vector: outer(x, x)", "dot(a, outer(x, x) @ b)", "x",
     "outer(a, b) @ x + outer(b, a) @ x", "outer(a, b) @ x", V,
     ["missing term", "dot(a, x) * b"], "claimed - true"),
    ("product rule, vector: two dots", "dot(x, a)*dot(x, b)", "x",
     "a*dot(x, b) + b*dot(x, a)", "a*dot(x, b)", V, ["missing term", "dot(x, a) * b"],
     "claimed - true"),
    ("product rule, vector: a norm times a dot", "dot(x, x)*dot(a, x)", "x",
     "2*x*dot(a, x) + a*dot(x, x)", "2*x*dot(a, x)", V,
     ["missing term", "dot(x, x) * a"], "claimed - true"),
    # -- one term of the claim the derivative by another variable
    ("wrong variable in one term: x**2*y", "x**2*y + y**3", "y", "x**2 + 3*y**2",
     "2*x + 3*y**2", None,
     ["wrong variable in one term: 2*x is the derivative of x**2 with respect to x",
      "with respect to y that term is x**2"], "claimed - true"),
    ("wrong variable in one term: sin(x)*y", "sin(x)*y + y**2", "y", "sin(x) + 2*y",
     "cos(x) + 2*y", None,
     ["wrong variable in one term: cos(x) is the derivative of sin(x) with respect to x",
      "that term is sin(x)"], "claimed - true"),
    ("wrong variable in one term: exp(x*y)", "exp(x*y) + x", "x", "y*exp(x*y) + 1",
     "x*exp(x*y) + 1", {"y": ()},
     ["wrong variable in one term: x*exp(x*y) is the derivative of exp(x*y) with "
      "respect to y"], "claimed - true"),
]


def check(expr, grads, shapes=None):
    return symgrad.check(expr, grads, shapes=shapes or {}, samples=3, timeout=BUDGET)


@pytest.mark.parametrize("kind, expr, var, right, wrong, shapes, words, never", TABLE,
                         ids=[t[0] for t in TABLE])
def test_each_kind_is_named(kind, expr, var, right, wrong, shapes, words, never):
    assert_kind_named(expr, var, right, wrong, shapes, words, never, budget=BUDGET)


@pytest.mark.parametrize("expr, wrong", [("dot(a, outer(x, x) @ b)", "outer(a, b) @ x"),
                                         ("dot(x, a)*dot(x, b)", "a*dot(x, b)")])
def test_a_smaller_counterexample_keeps_the_missing_term_visible(expr, wrong):
    """At size 1 a missing product-rule term is a plain factor 2: the counterexample
    shown is at a size where the claim is no constant multiple of the truth."""
    bad = check(expr, {"x": wrong}, V)
    point = bad.counterexample["point"]
    assert all(len(v) >= 2 for v in point.values()), point
    claimed, true = bad.counterexample["claimed"], bad.counterexample["true"]
    ratios = {round(c / t, 9) for c, t in zip(claimed, true)}
    assert len(ratios) > 1, (claimed, true)


def test_shape_lines_name_no_size():
    """Shape lines hold at every size: no size that the counterexample may not have."""
    lines = shape_mismatches({"W": ((3, 2), (2, 3)), "x": ((2,), (3,)), "b": ((2,), ())})
    assert lines == [
        "W: wrong shape: the claimed gradient has the shape of W.T, not that of W",
        "x: wrong shape: the claimed gradient does not have the shape of x (its sizes are "
        "those of other dimensions)",
        "b: wrong shape: the claimed gradient is a vector, but b is a scalar"]
    bad = check("-y*log(sigmoid(dot(w, x))) - (1 - y)*log(1 - sigmoid(dot(w, x)))",
                {"w": "sigmoid(dot(w, x)) - y"}, {"w": ("n",), "x": ("n",), "y": ()})
    assert bad.verdict == "wrong"
    text = "\n".join(bad.diagnosis)
    assert "the claimed gradient is a scalar, but w is a vector" in text
    assert not re.search(r"shape \(", text), text
    bad = check("sum((A @ x - b)**2)", {"x": "2*(A @ x - b)"},
                {"A": ("m", "n"), "x": ("n",), "b": ("m",)})
    assert bad.verdict == "wrong"
    assert not re.search(r"shape \(", "\n".join(bad.diagnosis)), bad.diagnosis
