"""Issue 21 item 4: slips of neural-network gradients named as a teacher would (see
:mod:`symgrad.checking.slips`), each kind with a right answer (proved correct) and a
wrong one written as a student would, whose diagnosis names the mistake: the sign inside
a sigmoid, a missing factor of sigmoid's derivative (or one too many), sigmoid's
derivative on the wrong side of a matrix product, cross-entropy's gradient as if
sum(y) = 1, a missing A.T, a missing pair of parentheses.
Before these were named the checker printed ``claimed - true = ...`` in exponentials,
``extra factor exp(x)``, ``right only when A is symmetric``, or only a wrong shape."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import symgrad
from conftest import assert_kind_named
from symgrad.checking.sampling import Claim
from symgrad.checking.slips import named_slip
from symgrad_cli.main import cli

BUDGET = 5.0
SQ = {"W": ("n", "n"), "x": ("n",), "y": ("n",)}
RECT = {"W": ("m", "n"), "x": ("n",), "y": ("m",)}
AX = {"A": ("m", "n"), "x": ("n",), "y": ("m",)}
AB = {"A": ("n", "n"), "x": ("n",), "b": ("n",)}
ZY = {"z": ("n",), "y": ("n",)}
BCE = "-y*log(sigmoid(z)) - (1 - y)*log(1 - sigmoid(z))"
SIG = "sigmoid(W @ x)*(1 - sigmoid(W @ x))"

TABLE = [  # (kind, expression, variable, right, wrong, shapes, key words, never)
    ("sign inside sigmoid", "log(sigmoid(x))", "x", "1 - sigmoid(x)", "1 - sigmoid(-x)",
     None, ["sign inside sigmoid", "has sigmoid(-x)", "true gradient has sigmoid(x)"],
     "extra factor"),
    ("sign inside sigmoid, logistic loss", BCE, "z", "sigmoid(z) - y", "sigmoid(-z) - y",
     None, ["sign inside sigmoid", "sigmoid(-z)"], "claimed - true"),
    ("missing 1 - sigmoid", "sigmoid(w*x)", "w", "x*sigmoid(w*x)*(1 - sigmoid(w*x))",
     "x*sigmoid(w*x)", None,
     ["missing factor 1 - sigmoid(w*x)", "sigmoid's derivative"], "claimed - true"),
    ("missing sigmoid of sigmoid'", "tanh(x) + sigmoid(2*x)", "x",
     "1 - tanh(x)**2 + 2*sigmoid(2*x)*(1 - sigmoid(2*x))",
     "1 - tanh(x)**2 + 2*(1 - sigmoid(2*x))", None,
     ["missing factor sigmoid(2*x)", "sigmoid's derivative"], None),
    ("sigmoid' once too often", BCE, "z", "sigmoid(z) - y",
     "sigmoid(z)*(1 - sigmoid(z))*(sigmoid(z) - y)", None,
     ["extra factor sigmoid(z)*(1 - sigmoid(z)) (sigmoid's derivative)"], "exp("),
    ("missing 1 - sigmoid in one term of two", "x*sigmoid(x)", "x",
     "sigmoid(x) + x*sigmoid(x)*(1 - sigmoid(x))", "sigmoid(x) + x*sigmoid(x)", None,
     ["missing factor 1 - sigmoid(x) of sigmoid's derivative", "alone in x*sigmoid(x)"],
     None),
    ("sigmoid' after the matmul", "dot(y, sigmoid(W @ x))", "x", f"W.T @ (y * {SIG})",
     f"W.T @ y * {SIG}", SQ,
     ["sigmoid's derivative belongs inside the matrix product", "W.T @ (y * ",
      "the parentheses are needed"], "symmetric"),
    ("sigmoid' after the matmul, rectangular W", "dot(y, sigmoid(W @ x))", "x",
     f"W.T @ (y * {SIG})", f"(W.T @ y) * {SIG}", RECT,
     ["sigmoid's derivative belongs inside the matrix product"], "parentheses"),
    ("cross-entropy as if sum(y) = 1", "-sum(y*log_softmax(z))", "z",
     "softmax(z)*sum(y) - y", "softmax(z) - y", ZY,
     ["assumes sum(y) = 1", "softmax(z)*sum(y)", "one-hot"], "claimed - true"),
    ("cross-entropy as if sum(y) = 1, a layer", "-sum(y*log_softmax(W @ x))", "W",
     "outer(softmax(W @ x)*sum(y) - y, x)", "outer(softmax(W @ x) - y, x)", RECT,
     ["assumes sum(y) = 1", "softmax(W @ x)*sum(y)"], None),
    ("missing A.T, rectangular", "dot(y, A @ x)", "x", "A.T @ y", "A @ y", AX,
     ["missing transpose", "has A @ y where the true gradient has A.T @ y"], None),
    ("missing A.T of one A", "sum((A @ x - b)**2)", "x", "2*A.T @ (A @ x - b)",
     "2*A @ (A @ x - b)", AB,
     ["missing transpose", "2*A.T @ (A @ x - b)"], "symmetric"),
    ("a difference that belongs inside the product", "0.5*sum((A @ x - y)**2)", "x",
     "A.T @ (A @ x - y)", "A.T @ A @ x - y", AX,
     ["missing parentheses", "(A.T @ A @ x) - y", "A.T @ (A @ x - y)"], None),
    ("the whole gradient transposed, rectangular", "sum(tanh(A @ x))", "A",
     "outer(1 - tanh(A @ x)**2, x)", "outer(x, 1 - tanh(A @ x)**2)", AX,
     ["transposed: the claimed gradient is the transpose of the true one"], None),
    ("missing A.T @ of the chain rule", "logsumexp(A @ x)", "x", "A.T @ softmax(A @ x)",
     "softmax(A @ x)", AX, ["missing A.T @", "A.T @ softmax(A @ x)"], None),
    ("a logit's gradient for the probability", "-(y*log(p) + (1 - y)*log(1 - p))", "p",
     "(p - y)/(p*(1 - p))", "p - y", None,
     ["gradient with respect to the logit", "divided by p*(1 - p)"], "claimed - true"),
]


@pytest.mark.parametrize("kind, expr, var, right, wrong, shapes, words, never", TABLE,
                         ids=[t[0] for t in TABLE])
def test_each_slip_is_named(kind, expr, var, right, wrong, shapes, words, never):
    assert_kind_named(expr, var, right, wrong, shapes, words, never, budget=BUDGET, first=True)


def test_a_mistake_no_rewrite_fixes_is_not_named_a_slip():
    f = symgrad.parse("sigmoid(w*x)")
    point = {"w": 0.7, "x": -1.3}
    evidence = [(None, f.gradient(**point)["w"], None, point)]
    unrelated = Claim("x*cos(w*x)", ["w", "x"])
    assert named_slip(f, unrelated, "w", evidence, {}, 1e-6, 1e-9) is None
    fixable = Claim("x*sigmoid(w*x)", ["w", "x"])
    assert named_slip(f, fixable, "w", evidence, {}, 1e-6, 1e-9).startswith(
        "missing factor 1 - sigmoid(w*x)")


def test_the_cli_names_the_slip_in_one_line():
    out = CliRunner().invoke(cli, ["check", "log(sigmoid(x))", "--grad",
                                   "x=1 - sigmoid(-x)"])
    assert out.exit_code == 1, out.output
    lines = [ln for ln in out.output.splitlines() if ln.strip().startswith("diagnosis:")]
    assert lines == ["  diagnosis: x: sign inside sigmoid: the claim has sigmoid(-x) where "
                     "the true gradient has sigmoid(x) (sigmoid(-u) = 1 - sigmoid(u), not "
                     "sigmoid(u))"], out.output
