"""Issue 21 item 4: diagnoses for a product rule half-applied and for swapped variables,
where the checker printed only ``claimed - true = ...``."""
from __future__ import annotations

import pytest
import sympy as sp
from click.testing import CliRunner

import symgrad
from symgrad.checking.diagnosis import explain
from symgrad_cli.main import cli

BUDGET = 5.0


def check(expr, grads):
    return symgrad.check(expr, grads, timeout=BUDGET, samples=4)


@pytest.mark.parametrize("expr, grads, words", [
    # the product rule
    ("x**2*sin(x)", {"x": "2*x*cos(x)"},
     ["the product rule: the claim has neither 2*x*sin(x) (u\u2032v) nor x**2*cos(x) "
      "(uv\u2032)", "u\u2032v\u2032 = 2*x*cos(x), the product of the derivatives",
      "u = x**2, v = sin(x)"]),
    ("x**2*sin(x)", {"x": "cos(x)"},
     ["the claim has neither 2*x*sin(x) (u\u2032v) nor x**2*cos(x) (uv\u2032)"]),
    ("x**2*sin(x)", {"x": "x**2*cos(x) + x*sin(x)"},  # (u'v there with a slip of its own)
     ["missing factor 2 in the term x*sin(x): the true gradient has 2*x*sin(x) there"]),
    ("x*exp(x)*sin(x)", {"x": "exp(x)*sin(x)"},
     ["the claim has exp(x)*sin(x) (u\u2032vw) but lacks x*exp(x)*sin(x) (uv\u2032w) and "
      "x*exp(x)*cos(x) (uvw\u2032)", "f\u2032 = u\u2032vw + uv\u2032w + uvw\u2032"]),
    # swapped variables
    ("sin(x)*y", {"x": "cos(y)*x"},
     ["x and y are swapped: the claim x*cos(y) is the true derivative y*cos(x)"]),
    ("sin(x)*y", {"x": "sin(y)"},
     ["x and y are swapped: this is the derivative with respect to y, sin(x)"]),
    ("exp(x)*y**2", {"y": "2*x*exp(y)"},
     ["x and y are swapped: the claim 2*x*exp(y) is the true derivative 2*y*exp(x)"]),
])
def test_named_mistakes(expr, grads, words):
    r = check(expr, grads)
    assert r.verdict == "wrong", r.text()
    text = " | ".join(r.diagnosis)
    for w in words:
        assert w in text, r.diagnosis
    assert "claimed - true" not in text, r.diagnosis


def test_the_cli_prints_the_product_rule():
    r = CliRunner().invoke(cli, ["check", "x**2*sin(x)", "--grad", "x=2*x*cos(x)",
                                 "--timeout", str(BUDGET)])
    assert r.exit_code == 1, r.output
    assert "diagnosis: x: the product rule: the claim has neither" in r.output


@pytest.mark.parametrize("expr, grads, words", [
    ("x**2*sin(x)", {"x": "2*x*sin(x)"}, "missing term x**2*cos(x)"),  # (one term: as before)
    ("x*y**2", {"x": "2*x*y"}, "wrong variable: this is the derivative with respect to y"),
    ("sin(x**2)", {"x": "cos(x**2)"}, "missing factor 2*x"),
    ("sinh(x)", {"x": "cos(x)"}, "claimed - true = cos(x) - cosh(x)"),  # (no product)
])
def test_other_diagnoses_are_unchanged(expr, grads, words):
    r = check(expr, grads)
    assert r.verdict == "wrong", r.text()
    assert words in " | ".join(r.diagnosis), r.diagnosis


@pytest.mark.parametrize("expr, grads", [
    ("x**2*sin(x)", {"x": "2*x*sin(x) + x**2*cos(x)"}),
    ("sin(x)*y", {"x": "y*cos(x)", "y": "sin(x)"}),
    ("x*exp(x)*sin(x)", {"x": "exp(x)*sin(x) + x*exp(x)*sin(x) + x*exp(x)*cos(x)"}),
])
def test_right_answers_are_still_correct(expr, grads):
    r = check(expr, grads)
    assert r.verdict == "correct", r.text()
    assert not r.diagnosis


def test_an_unrelated_claim_is_named_neither():
    x, y = sp.symbols("x y", real=True)
    hints = explain(sp.cos(x), y, x * y)  # (d/dx of x*y is y: cos(x) is no swap of it)
    assert [k for k, *_ in hints] == ["differs"], hints
    kind, true, words = explain(2 * x * sp.cos(x), 2 * x * sp.sin(x) + x**2 * sp.cos(x),
                                x**2 * sp.sin(x))[0]
    assert kind == "product" and "u\u2032v\u2032 = 2*x*cos(x)" in words, words
