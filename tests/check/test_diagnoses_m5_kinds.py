"""Issue 21, the kinds of mistake held-out set 5 (``corpus_heldout_m5.md``) left with no
diagnosis, each as a GENERAL kind: varied examples beyond the m5 item, each with a right
answer (proved correct, no diagnosis) and a wrong one whose diagnosis names the mistake in
a teacher's words (and never the bare difference ``claimed - true``).

Kinds: a function's derivative replaced by the function itself or by its co-function with
the wrong sign (``sinh(u)`` where ``cosh(u)`` belongs); one of a quadratic form's two
terms left out (``A.T @ x`` for ``(A + A.T) @ x``), named as a vector term; abs's
``sign(u)`` without the inner derivative ``u'``; a mixed partial ``d2f/dxdy`` given for
``df/dy``.
"""
from __future__ import annotations

import pytest

from conftest import assert_kind_named

BUDGET = 1.5  # (the CLI's default)
M = {"A": ("n", "n"), "B": ("n", "n"), "x": ("n",), "b": ("n",)}

TABLE = [  # (kind, expression, variable, right, wrong, shapes, key words, never)
    # -- the function itself (or its co-function, sign wrong) for its derivative
    ("derivative as the function: sinh(x**2)", "sinh(x**2)", "x", "2*x*cosh(x**2)",
     "2*x*sinh(x**2)", None,
     ["sinh's derivative is cosh, not sinh: the claim has sinh(x**2) where cosh(x**2) "
      "belongs"], "claimed - true"),
    ("derivative as the function: cosh(3*x)", "cosh(3*x)", "x", "3*sinh(3*x)",
     "3*cosh(3*x)", None, ["cosh's derivative is sinh, not cosh"], "claimed - true"),
    ("derivative as the function: x*sinh(3*x)", "x*sinh(3*x)", "x",
     "sinh(3*x) + 3*x*cosh(3*x)", "sinh(3*x) + 3*x*sinh(3*x)", None,
     ["the claim has sinh(3*x) where cosh(3*x) belongs"], "claimed - true"),
    ("derivative as the function: sin(x*y)", "sin(x*y)", "y", "x*cos(x*y)",
     "x*sin(x*y)", None, ["sin's derivative is cos, not sin"], "claimed - true"),
    ("derivative as the function: cos(x**2)", "cos(x**2)", "x", "-2*x*sin(x**2)",
     "2*x*cos(x**2)", None,
     ["cos's derivative is -sin, not cos: the claim has cos(x**2) where -sin(x**2)"],
     "claimed - true"),
    # -- a quadratic form's gradient with one of its two terms (the vector form, not
    #    elements such as A_0_0*x_0)
    ("quadratic form, one term: x.T @ A @ x", "x.T @ A @ x", "x", "(A + A.T) @ x",
     "A.T @ x", M, ["missing term A @ x: the true gradient is (A + A.T) @ x"], "A_0_0"),
    ("quadratic form, one term: dot(x, B @ x) + dot(b, x)", "dot(x, B @ x) + dot(b, x)",
     "x", "B @ x + B.T @ x + b", "B @ x + b", M, ["missing term B.T @ x"], "A_0_0"),
    ("quadratic form, one term: x @ B @ x/2", "x @ B @ x/2", "x", "(B + B.T) @ x/2",
     "B @ x/2", M, ["missing term"], "B_0_0"),
    # -- abs's sign(u) without the chain rule's u'
    ("abs without u': abs(x**3 - x)", "abs(x**3 - x)", "x", "(3*x**2 - 1)*sign(x**3 - x)",
     "sign(x**3 - x)", None,
     ["missing chain-rule factor 3*x**2 - 1 (the inner derivative of x**3 - x)"],
     "claimed - true"),
    ("abs without u': abs(sin(x))", "abs(sin(x))", "x", "cos(x)*sign(sin(x))",
     "sign(sin(x))", None, ["missing chain-rule factor cos(x)"], "claimed - true"),
    ("abs without u': abs(x*y + y**3) by y", "abs(x*y + y**3)", "y",
     "(x + 3*y**2)*sign(x*y + y**3)", "sign(x*y + y**3)", None,
     ["missing chain-rule factor x + 3*y**2"], "claimed - true"),
    # -- a mixed partial given for a first partial
    ("mixed partial: x**2*y**3 by y", "x**2*y**3", "y", "3*x**2*y**2", "6*x*y**2", None,
     ["6*x*y**2 is the mixed partial d2f/dxdy; df/dy is 3*x**2*y**2"], "missing factor"),
    ("mixed partial: exp(x*y) by x", "exp(x*y)", "x", "y*exp(x*y)",
     "exp(x*y) + x*y*exp(x*y)", None, ["is the mixed partial d2f/dydx; df/dx is"],
     "claimed - true"),
    ("mixed partial: x**2*y**3 by x", "x**2*y**3", "x", "2*x*y**3", "6*x*y**2", None,
     ["6*x*y**2 is the mixed partial d2f/dydx"], "missing factor"),
]


@pytest.mark.parametrize("kind, expr, var, right, wrong, shapes, words, never", TABLE,
                         ids=[t[0] for t in TABLE])
def test_each_kind_is_named(kind, expr, var, right, wrong, shapes, words, never):
    assert_kind_named(expr, var, right, wrong, shapes, words, never, budget=BUDGET)
