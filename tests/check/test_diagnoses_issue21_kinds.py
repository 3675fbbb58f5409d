"""Issue 21 item 4: a table of the diagnoses, kind by kind, each wrong answer beside a
right one for the same function (the right one proved, the wrong one named as a teacher
would): the product rule inside a chain, a constant of the chain rule, symbolic
constants, extra factors, a transposed matrix in the claim, a missing term before
"wrong variable", kinks in several variables split by the signs of their arguments (and
no "swapped" read across a kink), numbers from a wrong region said to be from there."""
from __future__ import annotations

import pytest
import sympy as sp

import symgrad
from symgrad.checking.regions import inequality_text, sign_regions

BUDGET = 5.0


def check(expr, grads, shapes=None):
    return symgrad.check(expr, grads, shapes=shapes or {}, samples=3, timeout=BUDGET)


V2 = {"x": ("n",), "b": ("n",)}
AX = {"A": ("n", "n"), "x": ("n",), "y": ("n",)}

TABLE = [  # (kind, expression, right claim, wrong claim, shapes, words, never)
    ("product rule inside a chain", "sin(x*exp(x))", "cos(x*exp(x))*exp(x)*(1 + x)",
     "cos(x*exp(x))*exp(x)", None,
     ["x: missing term x*exp(x)*cos(x*exp(x))",
      "x: the product rule: the claim has exp(x)*cos(x*exp(x)) (u\u2032v) but lacks "
      "x*exp(x)*cos(x*exp(x)) (uv\u2032); (u*v)\u2032 = u\u2032v + uv\u2032 for the inner "
      "x*exp(x) (u = x, v = exp(x)), times cos(x*exp(x)), the outer derivative"], None),
    ("product rule inside a log", "log(x**2*cos(x))", "2/x - tan(x)", "2/x", None,
     ["the claim has 2/x (u\u2032v) but lacks -sin(x)/cos(x) (uv\u2032)"], None),
    ("chain rule's constant", "asin(x/2)", "1/sqrt(4 - x**2)", "1/sqrt(1 - x**2/4)", None,
     ["x: missing factor 1/2", "x: the chain rule: 1/2 is the derivative of the inner x/2"],
     "extra factor 2"),
    ("chain rule before an expanded term", "log(x**3 + x)", "(3*x**2 + 1)/(x**3 + x)",
     "1/(x**3 + x)", None,
     ["x: missing factor 3*x**2 + 1",
      "x: the chain rule: 3*x**2 + 1 is the derivative of the inner x**3 + x"], "term"),
    ("chain rule before wrong variable", "tanh(w*x + b)", "x*(1 - tanh(w*x + b)**2)",
     "1 - tanh(w*x + b)**2", None,
     ["w: missing factor x", "w: the chain rule: x is the derivative of the inner b + w*x "
      "with respect to w"], "wrong variable"),
    ("symbolic constant", "log10(x)", "1/(x*log(10))", "1/x", None,
     ["x: missing factor 1/log(10)"], "2.30"),
    ("extra factor", "exp(2*x)", "2*exp(2*x)", "2*x*exp(2*x)", None,
     ["x: extra factor x: the claim is right without it"], "1/x"),
    ("power rule, not an extra factor", "x**4", "4*x**3", "4*x**4", None,
     ["x: power rule: the claim has x**4 where the true gradient has x**3"], "extra factor"),
    ("extra chain factor", "-(y*log(sigmoid(z)) + (1 - y)*log(1 - sigmoid(z)))",
     "sigmoid(z) - y", "sigmoid(z)*(1 - sigmoid(z))*(sigmoid(z) - y)", None,
     ["z: extra factor sigmoid(z)*(1 - sigmoid(z)) (sigmoid's derivative): the claim is "
      "right without it"], "exp("),
    ("wrong sign, not a factor -1", "(w*x + b - y)**2", "2*(w*x + b - y)",
     "2*(y - w*x - b)", None,
     ["b: wrong sign: the claimed gradient is the negative of the true one"], "factor -1"),
    ("transposed matrix in the claim", "dot(y, A @ x)", "A.T @ y", "A @ y", AX,
     ["x: transposed A: the claim has A where the true gradient has A.T"], "symmetric"),
    ("missing term before wrong variable", "dot(x, x)/2 + dot(b, x)", "x + b", "x", V2,
     ["x: missing term b: the true gradient is x + b"], "wrong variable"),
    ("the difference, not an extra term", "sinh(x)", "cosh(x)", "cos(x)", None,
     ["x: claimed - true = cos(x) - cosh(x)"], "extra term"),
    ("wrong sign inside a root", "acosh(x)", "1/sqrt(x**2 - 1)", "1/sqrt(x**2 + 1)", None,
     ["x: wrong sign: the claim has x**2 + 1 where the true gradient has x**2 - 1"],
     "claimed - true"),
    ("dropped branch in two variables", "relu(1 - x*y)", "-y*(1 + sign(1 - x*y))/2", "-y",
     None, ["x: right where x*y < 1, wrong where x*y > 1 (for x*y > 1 the true gradient is "
            "0, the claim -y): the claim drops a branch of the piecewise gradient"], None),
    ("region of two kinks", "relu(x)*relu(y)", "relu(y)*(1 + sign(x))/2", "relu(y)", None,
     ["x: right where x > 0 or y < 0, wrong where x < 0 and y > 0 (for x < 0 and y > 0 "
      "the true gradient is 0, the claim y)"], "swapped"),
    ("max of two variables", "maximum(x, y)", "(1 + sign(x - y))/2", "1", None,
     ["x: right where x > y, wrong where x < y"], "swapped"),
    ("endless pieces", "abs(sin(x))", "sign(sin(x))*cos(x)", "cos(x)", None,
     ["x: right where sin(x) > 0, wrong where sin(x) < 0"], None),
    ("numbers from the wrong region", "abs(x - 3)", "sign(x - 3)", "1", None,
     ["x: right for x > 3, wrong for x < 3",
      "x: for x < 3: wrong sign: the claimed gradient is the negative of the true one"],
     None),
]


@pytest.mark.parametrize("kind, expr, right, wrong, shapes, words, never", TABLE,
                         ids=[t[0] for t in TABLE])
def test_each_kind_of_mistake(kind, expr, right, wrong, shapes, words, never):
    var = {"tanh(w*x + b)": "w", "(w*x + b - y)**2": "b"}.get(expr)
    f = symgrad.parse(expr)
    var = var or ("z" if "z" in f.variables else "x")
    good = check(expr, {var: right}, shapes)
    assert good.verdict == "correct", good.text()
    bad = check(expr, {var: wrong}, shapes)
    assert bad.verdict == "wrong", bad.text()
    text = " | ".join(bad.diagnosis)
    for w in words:
        assert w in text, bad.diagnosis
    if never is not None:
        assert never not in text, bad.diagnosis


@pytest.mark.parametrize("u, positive, text", [
    ("x - y", True, "x > y"), ("x - y", False, "x < y"), ("x*y - 1", True, "x*y > 1"),
    ("1 - x*y", True, "x*y < 1"), ("-x", True, "x < 0"), ("2*x + 1", False, "2*x < -1"),
    ("x - 1/2", True, "x > 0.5"),
])
def test_inequalities_read_as_a_reader_writes_them(u, positive, text):
    assert inequality_text(sp.sympify(u), positive) == text


def test_sign_patterns_prove_a_right_claim_and_place_a_wrong_one():
    x, y = sp.symbols("x y", real=True)
    f = sp.Max(0, x) * sp.Max(0, y)
    true = sp.Heaviside(x) * sp.Max(0, y)
    assert sign_regions(f, sp.Max(0, y) * (1 + sp.sign(x)) / 2, true) == "equal"
    where, rows = sign_regions(f, sp.Max(0, y), true)
    assert where == "right where x > 0 or y < 0, wrong where x < 0 and y > 0"
    (point,) = [p for _, st, p, *_ in rows if st == "different"]
    assert point["x"] < 0 < point["y"]
    # a split that is wrong on every piece says nothing (None), never "wrong everywhere"
    assert sign_regions(f, x + y, true) is None
