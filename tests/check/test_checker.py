"""symgrad.check: a corpus of hand-derived gradients, right ones and typical mistakes."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

import symgrad
from symgrad._util import children, run_with_timeout
from symgrad.checking import Report

V3 = [0.5, -1.2, 2.0]
M2 = [[1.0, 2.0], [-0.5, 3.0]]
N2 = [[0.3, -1.0], [2.0, 0.7]]

# Correct gradients, written in a different form than symgrad's own.
CORRECT = [
    ("x**2*sin(x)", {"x": "x*(2*sin(x) + x*cos(x))"}, None),
    ("exp(2*x)", {"x": "2*exp(x)**2"}, None),
    ("log(x**2)", {"x": "2/x"}, None),
    ("sqrt(x)", {"x": "1/(2*sqrt(x))"}, {"x": 2.0}),
    ("sin(x)**2", {"x": "sin(2*x)"}, None),
    ("cos(x)**2", {"x": "-sin(2*x)"}, None),
    ("tan(x)", {"x": "1/cos(x)**2"}, None),
    ("tanh(x)", {"x": "4/(exp(x) + exp(-x))**2"}, None),
    ("sigmoid(x)", {"x": "exp(-x)/(1 + exp(-x))**2"}, None),
    ("x/(1 + x)", {"x": "1/(1 + x)**2"}, None),
    ("x*exp(x)", {"x": "(1 + x)*exp(x)"}, None),
    ("x**x", {"x": "x**x*(log(x) + 1)"}, {"x": 1.5}),
    ("log(sigmoid(x))", {"x": "1 - sigmoid(x)"}, None),
    ("x*y**2", {"x": "y*y", "y": "2*y*x"}, None),
    ("sin(x*y)", {"x": "y*cos(y*x)", "y": "cos(x*y)*x"}, None),
    ("exp(x)*exp(y)", {"x": "exp(x + y)"}, None),
    ("x**3", {"x": "x**2 + 2*x**2"}, None),
    ("dot(x, y)", {"x": "y", "y": "x"}, {"x": V3, "y": [1.0, 2.0, 3.0]}),
    ("sin(dot(x, y))", {"x": "y*cos(dot(y, x))"}, {"x": V3, "y": [1.0, 2.0, 3.0]}),
    ("sum(x*x)", {"x": "x + x"}, {"x": V3}),
    ("x.T @ A @ x", {"x": "A @ x + A.T @ x"}, {"x": [1.0, 2.0], "A": M2}),
    ("norm(x)", {"x": "x/sqrt(dot(x, x))"}, {"x": V3}),
    ("norm(x)**2", {"x": "2*x"}, {"x": V3}),
    ("log(sum(exp(x)))", {"x": "exp(x)/sum(exp(x))"}, {"x": V3}),
    ("mean(x**2)", {"x": "2*x/3"}, {"x": V3}),
    ("sum(A*A)", {"A": "2*A"}, {"A": M2}),
    ("sum(A*B.T)", {"A": "B.T", "B": "A.T"}, {"A": M2, "B": N2}),
    ("sum(log_softmax(x)*y)", {"x": "y - softmax(x)*sum(y)"},
     {"x": V3, "y": [0.2, 0.3, 0.5]}),
    ("log(1 + x**2)", {"x": "2*x/(1 + x**2)"}, None),
    # Kinks: proved piece by piece (the sign of each kink's argument).
    ("abs(x)", {"x": "x/abs(x)"}, None),
    ("sum(abs(x))", {"x": "x/abs(x)"}, {"x": V3}),
    ("x*relu(x)", {"x": "2*relu(x)"}, None),
    ("sum(relu(x))", {"x": "relu(x)/x"}, {"x": V3}),
    ("abs(x*y)", {"x": "y*abs(x*y)/(x*y)"}, None),
]

# Typical mistakes, each with the words its diagnosis should contain (or None).
WRONG = [
    ("sin(x**2)", {"x": "cos(x**2)"}, None, "missing factor 2*x"),
    ("exp(2*x)", {"x": "exp(2*x)"}, None, "missing factor 2"),
    ("x**3", {"x": "3*x"}, None, "missing factor x"),
    ("cos(x)", {"x": "sin(x)"}, None, "wrong sign"),
    ("1/x", {"x": "1/x**2"}, None, "wrong sign"),
    ("log(x)", {"x": "-1/x"}, {"x": 2.0}, "wrong sign"),
    ("x*y**2", {"x": "2*x*y"}, None, "derivative with respect to y"),
    ("sin(x*y)", {"x": "x*cos(x*y)"}, None, "derivative with respect to y"),
    ("dot(x, y)", {"x": "x"}, {"x": V3, "y": [1.0, 2.0, 3.0]}, "with respect to y"),
    ("sum(A*B.T)", {"A": "B"}, {"A": M2, "B": N2}, "transposed"),
    ("sum(A.T*B)", {"A": "B"}, {"A": M2, "B": N2}, "transposed"),
    ("sum(x*x)", {"x": "x"}, {"x": V3}, "missing factor 2"),
    ("norm(x)**2", {"x": "x"}, {"x": V3}, "missing factor 2"),
    ("sqrt(x)", {"x": "1/sqrt(x)"}, {"x": 2.0}, "extra factor 2"),
    ("mean(x**2)", {"x": "2*x"}, {"x": V3}, "missing factor 1/numel(x)"),
    ("tanh(x)", {"x": "1 + tanh(x)**2"}, None, "wrong sign of the term"),
    ("x*exp(x)", {"x": "x*exp(x)"}, None, "missing term exp(x)"),
    ("x**2*sin(x)", {"x": "2*x*sin(x)"}, None, "missing term x**2*cos(x)"),
    ("log(1 + x**2)", {"x": "1/(1 + x**2)"}, None, "missing factor 2*x"),
    ("sigmoid(x)", {"x": "sigmoid(x)"}, None, "missing"),
    ("x/y", {"y": "x/y**2"}, None, "wrong sign"),
    ("exp(-x**2/2)", {"x": "x*exp(-x**2/2)"}, None, "wrong sign"),
    ("log(sum(exp(x)))", {"x": "exp(x)"}, {"x": V3}, None),
    ("x.T @ A @ x", {"x": "A @ x"}, {"x": [1.0, 2.0], "A": M2}, None),
    ("x.T @ A @ x", {"x": "2*A @ x"}, {"x": [1.0, 2.0], "A": M2}, "when A is symmetric"),
    ("norm(x)", {"x": "x"}, {"x": V3}, "missing factor 1/norm(x)"),
    ("sin(x)*cos(x)", {"x": "cos(x)**2 + sin(x)**2"}, None, "wrong sign of the term"),
    ("exp(x)/x", {"x": "exp(x)/x**2"}, {"x": 2.0}, None),
    ("x*relu(x)", {"x": "relu(x)"}, None, "missing factor 2"),
    ("abs(x)", {"x": "1"}, None, None),
]


def test_corpus_is_large_and_balanced():
    assert len(CORRECT) + len(WRONG) >= 50
    assert len(CORRECT) >= 25 and len(WRONG) >= 25


@pytest.mark.parametrize("expr,grads,at", CORRECT, ids=[c[0] for c in CORRECT])
def test_correct_gradients_are_recognised(expr, grads, at):
    r = symgrad.check(expr, grads, at=at, samples=4)
    assert r.verdict == "correct", r.text()
    assert r.counterexample is None and not r.diagnosis
    assert r.exit_code == 0 and r.ok


@pytest.mark.parametrize("expr,grads,at,words", WRONG, ids=[c[0] for c in WRONG])
def test_mistakes_are_caught_and_explained(expr, grads, at, words):
    r = symgrad.check(expr, grads, at=at, samples=4)
    assert r.verdict == "wrong", r.text()
    assert r.exit_code == 1 and not r.ok
    c = r.counterexample
    assert c is not None and c["variable"] in grads
    # The counterexample is real: reverse mode at that point gives c["true"].
    true = symgrad.parse(expr).gradient(**c["point"])[c["variable"]]
    np.testing.assert_allclose(c["true"], true, rtol=1e-12)
    assert not np.allclose(c["claimed"], c["true"], rtol=1e-6)
    if words is not None:
        assert any(words in d for d in r.diagnosis), r.diagnosis


def test_agreeing_at_the_given_point_is_not_enough():
    # 2 is d(x**2)/dx at x = 1 only.
    r = symgrad.check("x**2", {"x": "2"}, at={"x": 1.0})
    assert r.verdict == "wrong"
    assert r.counterexample["point"]["x"] != 1.0


def _endless_job(*args):
    while True:  # (CPU time: the worker's bound ends it)
        pass


def test_timeout_gives_undecided_never_correct(monkeypatch):
    import sys
    monkeypatch.setattr(sys.modules["symgrad.checking.decision"], "symbolic_job",
                        _endless_job)
    r = symgrad.check("x**2*sin(x)", {"x": "x*(2*sin(x) + x*cos(x))"}, timeout=0.2)
    assert r.verdict == "undecided"
    assert r.exit_code == 3
    assert any("reached its bound (0.4 s of CPU time)" in n for n in r.notes), r.notes
    assert children() == []


def test_numbers_only_is_undecided():
    r = symgrad.check("x**2", {"x": "2*x"}, symbolic=False)
    assert r.verdict == "undecided"


def test_wrong_shape():
    r = symgrad.check("dot(x, A @ y)", {"y": "A @ y"},
                      at={"x": [1.0, 2.0], "A": [[1.0, 0.0, 2.0], [0.5, 1.0, -1.0]],
                          "y": [1.0, 2.0, 3.0]})
    assert r.verdict == "wrong"
    assert any("wrong shape" in d for d in r.diagnosis)


def test_claim_that_cannot_be_evaluated_is_wrong_shape():
    r = symgrad.check("x.T @ A @ x", {"x": "x @ x @ A"}, at={"x": [1.0, 2.0], "A": M2})
    assert r.verdict == "wrong"
    assert "wrong shape" in r.diagnosis[0] and "column 7" in r.diagnosis[0]


def test_constant_claims_and_scalar_broadcast():
    assert symgrad.check("3*x + 1", {"x": 3}).verdict == "correct"
    r = symgrad.check("sum(x)", {"x": "1"}, at={"x": V3})
    assert r.verdict == "correct"
    assert any("broadcast" in n for n in r.notes)


def test_report_text_and_json():
    r = symgrad.check("sin(x**2)", {"x": "cos(x**2)"}, at={"x": 1.5})
    assert isinstance(r, Report)
    text = r.text()
    assert text.startswith("WRONG: gradient of sin(x**2)")
    assert "counterexample: at x=1.5" in text and "missing factor 2*x" in text
    data = json.loads(r.to_json())
    assert data["verdict"] == "wrong"
    assert data["counterexample"]["point"] == {"x": 1.5}
    assert data["counterexample"]["true"] == pytest.approx(2 * 1.5 * np.cos(1.5 ** 2))
    assert data["finite_differences"]["x"]["agrees_with_reverse_mode"] is True


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match="not a variable"):
        symgrad.check("x**2", {"y": "2*x"})
    with pytest.raises(ValueError, match="does not have"):
        symgrad.check("x**2", {"x": "2*z"})
    with pytest.raises(ValueError, match="several variables"):
        symgrad.check("x*y", "y")
    with pytest.raises(symgrad.symbolic.parser.ParseError):
        symgrad.check("x**2", {"x": "2*x +"})


def test_bad_input_is_a_symgrad_error_of_the_builtin_type():
    with pytest.raises(symgrad.SymgradError, match="not a variable") as err:
        symgrad.check("x**2", {"y": "2*x"})
    assert isinstance(err.value, ValueError)
    with pytest.raises(symgrad.SymgradError, match="got None") as err:
        symgrad.check("x**2", {"x": None})
    assert isinstance(err.value, TypeError)
    with pytest.raises(symgrad.SymgradError, match="samples"):
        symgrad.check("x**2", {"x": "2*x"}, samples=-1)


def test_symbolic_worker_cannot_hang_the_caller():
    status, value = run_with_timeout(time.sleep, (30,), 0.5)
    assert status == "timeout" and value is None
    assert children() == []  # (the worker was killed, not waited for: no wall time)
    assert run_with_timeout(pow, (2, 10), 10) == ("ok", 1024)


def test_rounding_in_the_claim_is_not_a_mistake():
    # float64 loses the low digits of x in (x + 1e12) - 1e12; the claim is still right.
    r = symgrad.check("x**2", {"x": "((x + 1e12) - 1e12)*2"})
    assert r.verdict == "correct"
    assert any("rounding" in n for n in r.notes)
    r = symgrad.check("x**2", {"x": "((x + 1e12) - 1e12)*3"})
    assert r.verdict == "wrong" and r.diagnosis == ["x: extra factor 3/2"]


def test_scalar_claim_for_a_vector_variable():
    r = symgrad.check("sum(x*x)", {"x": "dot(x, x)"}, at={"x": [1.0, 2.0]})
    assert r.verdict == "wrong"
    assert r.diagnosis == ["x: wrong shape: the claimed gradient is a scalar, but x is "
                           "a vector"]


def test_random_points_skip_the_domain_edge():
    # log and sqrt: half of [-2, 2] is outside; the checker still finds enough points.
    r = symgrad.check("sqrt(x)*log(y)", {"x": "log(y)/(2*sqrt(x))", "y": "sqrt(x)/y"},
                      samples=10)
    assert r.verdict == "correct" and r.points == 11
