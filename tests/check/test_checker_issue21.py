"""Issue 21: a checker that never lies, says where a claim holds, and explains mistakes.

Every example the issue names, as command-line runs (CliRunner) and library calls: the
three right answers that were called wrong (a point outside the domain, float rounding of
a result that cancels to 0, a kink), the undecided ones that now get verdicts (proofs under
the domain, piece by piece, logarithmic differentiation, exact constant factors), verdicts
that say where, and the diagnosis table.  The symbolic budget is raised to 5 s so that a
busy test machine gives the verdicts an idle one gives in 1.5 s (the budget is CPU time).
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

import symgrad
from symgrad.checking.decision import is_zero, symbolic_job
from symgrad.checking.domain import Kinks, confirm
from symgrad.checking.regions import regions
from symgrad_cli.main import cli

BUDGET = 5.0


def cli_check(expr, *args):
    r = CliRunner().invoke(cli, ["check", expr, *args, "--timeout", str(BUDGET), "--json"])
    assert r.exit_code in (0, 1, 3), r.output
    rep = json.loads(r.output)
    assert r.exit_code == {"correct": 0, "wrong": 1, "undecided": 3}[rep["verdict"]]
    return rep


def check(expr, grads, **kw):
    return symgrad.check(expr, grads, timeout=BUDGET, **kw)


# -- 1. soundness: the three right answers that were called wrong ---------------------------
def test_a_point_outside_the_domain_is_no_counterexample():
    rep = cli_check("log(x + sqrt(x**2 - 1))", "--grad", "x=1/(sqrt(x - 1)*sqrt(x + 1))",
                    "--at", "x=1.5")
    assert rep["verdict"] == "correct", rep
    assert rep["counterexample"] is None


def test_rounding_of_a_gradient_that_cancels_to_zero_is_no_counterexample():
    rep = cli_check("tanh(x) - (exp(2*x) - 1)/(exp(2*x) + 1)", "--grad", "x=0")
    assert rep["verdict"] == "correct", rep
    assert any("rounding" in n for n in rep["notes"])


def test_a_kink_is_not_judged():
    rep = cli_check("abs(x)", "--grad", "x=x/abs(x)", "--at", "x=0")
    assert rep["verdict"] == "correct", rep
    assert any("kink" in n for n in rep["notes"])
    r = check("relu(x)", {"x": "(sign(x) + 1)/2"}, at={"x": 0})
    assert r.verdict == "correct", r.text()


def test_exact_evaluation_decides_what_float64_cannot():
    x = sp.Symbol("x", real=True)
    t = 1 - sp.tanh(x) ** 2 - 4 * sp.exp(2 * x) / (sp.exp(2 * x) + 1) ** 2
    assert confirm([sp.Integer(0)], [t], {x: sp.Rational(3, 2)}) == "equal"
    # a claim 1e-9 off is different, exactly; a float constant (pi**2/4 folded to 15
    # digits) cannot make a difference of 1e-16 count
    assert confirm([40 * sp.exp(40 * x) * sp.Float(1 + 1e-9)], [40 * sp.exp(40 * x)],
                   {x: 0}) == "different"
    c = (sp.atan(x) + sp.atan(1 / x)) ** 2 - sp.Float(float(sp.pi ** 2 / 4))
    assert confirm([c], [sp.Integer(0)], {x: sp.Rational(3, 2)}) != "different"


def test_kinks_are_found_in_every_form_and_a_flat_argument_is_none():
    x, y = sp.symbols("x y", real=True)
    k = Kinks([sp.Piecewise((0, sp.Max(0, x - y) <= 0), (1, True))], [x, y])
    assert k.near({"x": 1.0, "y": 1.0})
    assert not k.near({"x": -2.0, "y": 1.0})  # (Max(0, x - y) = 0 on a whole region)


# -- 2. proofs under the domain ---------------------------------------------------------------
@pytest.mark.parametrize("expr, grad", [
    ("log(x)**2", "log(x**2)/x"),
    ("log(log(x))", "1/log(x**x)"),
    ("log(x - 5)", "1/(x - 5)"),
    ("sqrt(x**2 + 2*x + 1)", "(x + 1)/abs(x + 1)"),
    ("acos(1/x)", "1/(abs(x)*sqrt(x**2 - 1))"),
    ("(1 + 1/x)**x", "(1 + 1/x)**x*(log(1 + 1/x) - 1/(x + 1))"),
    ("sin(x)**log(x)", "sin(x)**log(x)*(log(sin(x))/x + log(x)*cos(x)/sin(x))"),
    ("0.5*x**2 - 0.5*relu(abs(x) - 1)**2", "hardtanh(x)"),
    # more of each kind: a sign that is 0 on a whole piece, |x| = x where log(x) lives,
    # log|x| on both sides of 0, the two arctangents' derivatives cancelling
    ("hardtanh(2*x)", "2*(1 - sign(relu(abs(2*x) - 1)))"),
    ("log(x)", "1/abs(x)"),
    ("log(abs(x))", "1/x"),
    ("atan(x) + atan(1/x)", "0"),
])
def test_undecided_examples_are_proved_on_the_domain(expr, grad):
    r = check(expr, {"x": grad})
    assert r.verdict == "correct", r.text()


def test_log_minus_five_on_the_command_line():
    rep = cli_check("log(x - 5)", "--grad", "x=1/(x - 5)")
    assert rep["verdict"] == "correct", rep


def test_a_multiclass_hinge_loss_is_proved_within_the_budget():
    r = check("sum(relu(s - y + 1))", {"s": "(sign(s - y + 1) + 1)/2",
                                        "y": "-sum((sign(s - y + 1) + 1)/2)"},
              at={"s": [0.3, -2.0, 1.5, 0.2, 0.9], "y": 0.5})
    assert r.verdict == "correct", r.text()


def test_pieces_of_the_domain():
    x = sp.Symbol("x", real=True)
    ps = regions(sp.acos(1 / x), 1 / (sp.Abs(x) * sp.sqrt(x ** 2 - 1)),
                 1 / (x ** 2 * sp.sqrt(1 - 1 / x ** 2)), x, prove=is_zero)
    assert [(p.where(x), p.status) for p in ps] == [("x < -1", "equal"), ("x > 1", "equal")]
    # sin(x)**log(x) is real on (2pi, 3pi) too: no pieces from a domain that misses it
    assert regions(sp.sin(x) ** sp.log(x), sp.Integer(0), sp.Integer(0), x) is None


def test_a_job_past_its_budget_proves_nothing_and_says_so():
    x = sp.Symbol("x", real=True)
    [(status, _, _)] = symbolic_job([([sp.log(x ** 2) / x], [2 * sp.log(x) / x])], [False],
                                    sp.log(x) ** 2, 0.0)
    assert status == "not shown equal"


# -- 3. verdicts that say where; exact constant factors --------------------------------------
def test_wrong_on_a_window_of_width_one_hundredth():
    rep = cli_check("relu(x - 0.5) - relu(x - 0.51)", "--grad", "x=0")
    assert rep["verdict"] == "wrong", rep
    assert 0.5 < rep["counterexample"]["point"]["x"] < 0.51
    assert "right for x < 0.5 and x > 0.51, wrong for 0.5 < x < 0.51" in rep["diagnosis"][0]


@pytest.mark.parametrize("expr, grad, words", [
    ("x**2", "2*abs(x)", "right for x > 0, wrong for x < 0"),
    ("leaky_relu(x)", "1", "right for x > 0, wrong for x < 0"),
    ("relu(x)**2", "2*x", "drops a branch"),
    ("log(abs(x))", "1/abs(x)", "right for x > 0, wrong for x < 0"),
])
def test_right_on_part_of_the_domain(expr, grad, words):
    r = check(expr, {"x": grad})
    assert r.verdict == "wrong", r.text()
    assert r.counterexample["point"]["x"] < 0
    assert any(words in d for d in r.diagnosis), r.diagnosis


def test_right_outside_a_window_and_wrong_inside_it():
    r = check("abs(x - 1) + abs(x + 1)", {"x": "2*sign(x)"})
    assert r.verdict == "wrong" and abs(r.counterexample["point"]["x"]) < 1, r.text()
    assert "right for x < -1 and x > 1, wrong for -1 < x < 1" in r.diagnosis[0]


def test_a_non_zero_exact_constant_factor():
    rep = cli_check("exp(40*x)", "--grad", "x=40*exp(40*x)*(1 + 1e-9)")
    assert rep["verdict"] == "wrong", rep
    assert rep["diagnosis"] == ["x: extra factor 1.000000001"]


def test_a_coefficient_off_by_a_millionth_is_printed_with_its_digits():
    r = CliRunner().invoke(cli, ["check", "x**4", "--grad", "x=4.000001*x**3",
                                 "--timeout", str(BUDGET)])
    assert r.exit_code == 1, r.output
    assert "claimed 4.000001, true 4" in r.output
    assert "extra factor 1.00000025" in r.output and "extra factor 1\n" not in r.output


# -- 4. diagnoses a teacher would write -------------------------------------------------------
@pytest.mark.parametrize("expr, grads, at, words, never", [
    ("sin(x**2)", {"x": "cos(x**2)"}, None, "the chain rule: 2*x is the derivative of the "
     "inner x**2", None),
    ("sigmoid(w*x)", {"w": "x"}, None, "is the derivative of the outer", None),
    ("sinh(x)", {"x": "cos(x)"}, None, "claimed - true = cos(x) - cosh(x)", "factor"),
    ("y**8/2", {"y": "4*y**7 + 2"}, None, "extra term 2", "factor"),
    ("x**2 + 3*x", {"x": "2*x + 3 + 5"}, None, "extra term 5", "factor"),
    ("x**2 + 3*x", {"x": "2*x"}, None, "missing term 3", None),
    ("sin(x)*cos(x)", {"x": "cos(x)**2"}, None, "missing term -sin(x)**2", None),
    ("mean((y - t)**2)", {"y": "2*(y - t)"}, {"y": [1.0, 2.0], "t": [0.0, 1.0]},
     "missing factor 1/numel(y)", "extra factor 2"),
    ("norm(x)", {"x": "x"}, {"x": [1.0, 2.0, 3.0]}, "missing factor 1/norm(x)", None),
    ("x.T @ A @ y", {"A": "outer(y, x)"}, None, "transposed", None),
])
def test_diagnosis_table(expr, grads, at, words, never):
    r = check(expr, grads, at=at)
    assert r.verdict == "wrong", r.text()
    text = " | ".join(r.diagnosis)
    assert words in text, r.diagnosis
    if never is not None:
        assert never not in text, r.diagnosis


def test_a_transpose_is_shown_on_a_matrix_without_a_side_of_one():
    r = check("x.T @ A @ y", {"A": "outer(y, x)"})
    sizes = r.counterexample["sizes"]
    assert min(sizes["A"]) >= 2, sizes
    a = np.array(r.counterexample["claimed"])
    assert not np.allclose(a, np.array(r.counterexample["true"]))
