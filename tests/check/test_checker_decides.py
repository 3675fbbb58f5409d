"""The checker decides the cases the issue lists: exact constants (``pi/4``), kinks
written two ways, a claim wrong by a tiny constant (an exact non-zero polynomial
difference), a tiny function wrong by a factor (tolerance relative to the gradient's
size), a claim that is nan where the true gradient is finite, a wrong claim for a
non-square matrix (a verdict, not bad input); and gives no false verdict where decimals
are exact (``0.1*x**2`` and ``x/5``)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from symgrad_cli.main import cli


def check(expr, grad, *extra):
    r = CliRunner().invoke(cli, ["check", expr, "--grad", grad, *extra, "--json"])
    assert r.exit_code in (0, 1, 3), r.output
    return r.exit_code, json.loads(r.output)


@pytest.mark.parametrize("expr, grad", [
    ("sqrt(2)*exp(x)*cos(x + pi/4)", "x=-2*exp(x)*sin(x)"),
    ("relu(2*x)", "x=2*relu(x)/x"),
    ("abs(3*x)", "x=3*sign(x)"),
    ("log(log(x))", "x=1/(x*log(x))"),
    ("sqrt(x**2 + 2*x + 1)", "x=(x + 1)/sqrt(x**2 + 2*x + 1)"),
    ("1e-10*x**2", "x=2e-10*x"),
    ("0.1*x**2", "x=x/5"),
    ("x**4", "x=4*x**3"),
    ("log(x**2)", "x=2/x"),
])
def test_correct(expr, grad):
    code, rep = check(expr, grad)
    assert (code, rep["verdict"]) == (0, "correct"), rep


@pytest.mark.parametrize("expr, grad, where", [
    ("sqrt(2)*exp(x)*cos(x + pi/4)", "x=exp(x)*(cos(x) - sin(x))", None),
    ("x**4", "x=4.000001*x**3", None),
    ("1e-10*x**2", "x=1e-10*x", None),
    ("log(x**2)", "x=2*exp(-log(x))", "negative"),
    ("relu(2*x)", "x=relu(x)/x", None),
])
def test_wrong_with_a_counterexample(expr, grad, where):
    code, rep = check(expr, grad)
    assert (code, rep["verdict"]) == (1, "wrong"), rep
    ce = rep["counterexample"]
    assert ce is not None
    if where == "negative":  # the claim is nan there, the true gradient finite
        assert ce["point"]["x"] < 0 and ce["claimed"] != ce["claimed"]
        assert abs(ce["true"] - 2 / ce["point"]["x"]) < 1e-9


def test_exact_constants_in_the_true_gradient():
    _, rep = check("sqrt(2)*exp(x)*cos(x + pi/4)", "x=exp(x)*(cos(x) - sin(x))")
    true = json.dumps(rep)
    assert "1.414" not in true and "e-16" not in true


def test_non_square_matrix_claim_is_a_verdict():
    code, rep = check("sum(X*X)", "X=X*X", "--at", "X=[[1,2,3],[4,5,6]]")
    assert (code, rep["verdict"]) == (1, "wrong")
    code, rep = check("sum(X*X)", "X=2*X", "--at", "X=[[1,2,3],[4,5,6]]")
    assert (code, rep["verdict"]) == (0, "correct")


# The calculus table, in the forms students write (right-but-different, and typical
# mistakes): every verdict is asserted.
TABLE = [
    ("atan(x)", "1/(1+x**2)", "correct"), ("asin(x)", "1/sqrt(1-x**2)", "correct"),
    ("acos(x)", "-1/sqrt(1-x**2)", "correct"), ("cosh(x)", "sinh(x)", "correct"),
    ("tanh(x)", "1/cosh(x)**2", "correct"), ("log1p(x)", "1/(1+x)", "correct"),
    ("exp2(x)", "log(2)*2**x", "correct"), ("log2(x)", "1/(x*log(2))", "correct"),
    ("log10(x)", "1/(x*ln(10))", "correct"), ("x**x", "x**x*(log(x)+1)", "correct"),
    ("sigmoid(x)", "sigmoid(x)*(1-sigmoid(x))", "correct"),
    ("softplus(x)", "1/(1+exp(-x))", "correct"), ("erf(x)", "2*exp(-x**2)/sqrt(pi)", "correct"),
    ("sqrt(x)", "1/(2*sqrt(x))", "correct"), ("sin(x)**2", "sin(2*x)", "correct"),
    ("asinh(x)", "1/sqrt(x**2+1)", "correct"), ("log(cosh(x))", "tanh(x)", "correct"),
    ("exp(x)*sin(x)", "exp(x)*(sin(x)+cos(x))", "correct"),
    ("atan(x)", "1/(1-x**2)", "wrong"), ("cosh(x)", "-sinh(x)", "wrong"),
    ("log2(x)", "1/x", "wrong"), ("erf(x)", "exp(-x**2)", "wrong"),
    ("x**x", "x*x**(x-1)", "wrong"), ("sin(x)**2", "2*sin(x)", "wrong"),
    ("exp(x)*sin(x)", "exp(x)*cos(x)", "wrong"),
    # rational exponents stay exact (the parser folds 1/3 to a float; it is 1/3 again)
    ("x**(1/3)", "1/(3*x**(2/3))", "correct"), ("x**(2/3)", "2/(3*x**(1/3))", "correct"),
    ("x**(1/3)", "1/(3*x**(1/3))", "wrong"),
]


@pytest.mark.parametrize("expr, grad, verdict", TABLE)
def test_calculus_table(expr, grad, verdict):
    code, rep = check(expr, f"x={grad}")
    assert rep["verdict"] == verdict, rep


# Course gradients (a network, logistic regression, softmax cross-entropy), right in other
# forms and with typical mistakes.  The wrong ones are decided by the numbers, without
# SymPy's simplify of the difference (which took 10 s on the first of them).
_NET = "tanh(w2*tanh(w1*x + b1) + b2)"
_H1, _OUT = "tanh(b1 + w1*x)", "tanh(b2 + w2*tanh(b1 + w1*x))"
_LOGISTIC = "log(1 + exp(w1*x1 + w2*x2 + b)) - y*(w1*x1 + w2*x2 + b)"
COURSE = [
    (_NET, f"w1=w2*x*(1 - {_H1}**2)*(1 - {_OUT}**2)", "correct"),
    (_NET, f"w1=w2*x/cosh(b1 + w1*x)**2*(1 - {_OUT}**2)", "correct"),
    (_NET, f"w1=x*w2*(1 - {_H1})*(1 + {_H1})*(1 - {_OUT}**2)", "correct"),
    (_NET, f"b2=1 - {_OUT}**2", "correct"),
    (_NET, f"w1=w2*x*(1 - {_H1}**2)*(1 - {_OUT})", "wrong"),
    (_NET, f"w1=w2*(1 - {_H1}**2)*(1 - {_OUT}**2)", "wrong"),
    (_NET, f"w2=(1 - {_OUT}**2)", "wrong"),
    (_LOGISTIC, "w1=x1*(sigmoid(w1*x1 + w2*x2 + b) - y)", "correct"),
    (_LOGISTIC, "w1=x1*(1/(1 + exp(-(w1*x1 + w2*x2 + b))) - y)", "correct"),
    (_LOGISTIC, "b=exp(w1*x1 + w2*x2 + b)/(1 + exp(w1*x1 + w2*x2 + b)) - y", "correct"),
    (_LOGISTIC, "w1=x1*(sigmoid(w1*x1 + w2*x2 + b) + y)", "wrong"),
    (_LOGISTIC, "w1=sigmoid(w1*x1 + w2*x2 + b) - y", "wrong"),
    ("-sum(y*log_softmax(z))", "z=softmax(z)*sum(y) - y", "correct"),
    ("-sum(y*log_softmax(z))", "z=softmax(z) - y", "wrong"),
]


@pytest.mark.parametrize("expr, grad, verdict", COURSE)
def test_course_gradients(expr, grad, verdict):
    extra = ["--shape", "y=n", "--shape", "z=n"] if "softmax" in expr else []
    code, rep = check(expr, grad, *extra)
    assert rep["verdict"] == verdict, rep


def test_a_deep_net_in_another_form_is_proved_in_exponential_generators():
    # A three-layer net's gradient written with 1/cosh**2: the difference has 56
    # operations (past simplify's bound); cancel in exponential generators proves it.
    h1, h2 = "tanh(w1*x + b1)", "tanh(w2*tanh(w1*x + b1) + b2)"
    f = f"tanh(w3*{h2} + b3)"
    claim = (f"w1=w3*w2*x/cosh(w3*{h2} + b3)**2/cosh(w2*{h1} + b2)**2"
             f"/cosh(w1*x + b1)**2")
    code, rep = check(f, claim)
    assert (code, rep["verdict"]) == (0, "correct"), rep


def test_undecided_where_no_bounded_method_settles_it():
    # atan(x) + atan(1/x) is ±pi/2, so the claim is 0 = the true gradient wherever f is
    # defined; no bounded rewrite knows the identity of the two arctangents, and the
    # float64 differences (1e-16) do not survive exact evaluation: undecided.
    code, rep = check("atan(x) + atan(1/x)", "x=(atan(x) + atan(1/x))**2 - pi**2/4")
    assert (code, rep["verdict"]) == (3, "undecided"), rep
    assert rep["counterexample"] is None


def test_a_composition_is_proved_on_the_domain():
    # log(exp(1/x)) is 1/x wherever log(x) is defined (x > 0): proved with x = t, t > 0.
    code, rep = check("log(x)", "x=log(exp(1/x))")
    assert (code, rep["verdict"]) == (0, "correct"), rep


@pytest.mark.parametrize("grad, where", [
    ("x=2*x + relu(x - 5)", lambda x: x > 5),
    ("x=2*x + relu(-x - 8)", lambda x: x < -8),
    ("x=2*x*(1 + relu(x - 20)/x)", lambda x: x > 20),
])
def test_a_mistake_that_shows_only_at_another_scale_is_found(grad, where):
    # Right near the scale of 1 (where the random points are), wrong far out: points of
    # other scales find it, smallest first, confirmed exactly.
    code, rep = check("x**2", grad)
    assert (code, rep["verdict"]) == (1, "wrong"), rep
    x = rep["counterexample"]["point"]["x"]
    assert where(x) and rep["counterexample"]["claimed"] != rep["counterexample"]["true"]


@pytest.mark.parametrize("expr, grad", [
    ("relu(x - 5)**2", "x=2*relu(x - 5)"),
    ("x**2 + relu(x - 5)", "x=2*x + relu(x - 5)/(x - 5)"),
    ("exp(x)", "x=exp(x)*(1 + 0*relu(x - 5))"),
])
def test_other_scales_do_not_refute_a_right_claim(expr, grad):
    code, rep = check(expr, grad)
    assert rep["verdict"] in ("correct", "undecided") and code in (0, 3), rep


_MSE = ("mean((X @ w - y)**2)", "--shape", "X=n,d", "--shape", "w=d", "--shape", "y=n")


def test_a_mean_squared_error_gradient_for_every_size():
    # mean's 1/n is numel(y) in the forms: proved for every size, and the count of the
    # wrong vector refuted (with a counterexample at a size where they differ).
    code, rep = check(_MSE[0], "w=2*X.T@(X@w - y)/numel(y)", *_MSE[1:])
    assert (code, rep["verdict"]) == (0, "correct"), rep
    assert rep["variables"]["w"]["every_size"] == "proved"
    code, rep = check(_MSE[0], "w=2*X.T@(X@w - y)/numel(w)", *_MSE[1:])
    assert (code, rep["verdict"]) == (1, "wrong"), rep
    ce = rep["counterexample"]
    assert len(ce["point"]["y"]) != len(ce["point"]["w"])
    code, rep = check("mean(x**2)", "x=2*x/numel(x)", "--shape", "x=n")
    assert (code, rep["verdict"]) == (0, "correct"), rep


def test_a_scalar_claim_next_to_vectors_holds_for_every_size():
    # ∂/∂s of sum(s + x) is numel(x): "2" is right only at the traced size.
    code, rep = check("sum(s + x)", "s=2", "--shape", "x=n")
    assert (code, rep["verdict"]) == (1, "wrong"), rep
    assert len(rep["counterexample"]["point"]["x"]) != 2
    code, rep = check("sum(s + x)", "s=numel(x)", "--shape", "x=n")
    assert (code, rep["verdict"]) == (0, "correct"), rep
    assert rep["variables"]["s"]["every_size"] == "proved"


def test_exponential_generators_prove_only_what_holds():
    # cancel in exponential generators proves identities (checked at random points at 30
    # digits, the oracle) and never proves a non-identity zero.
    import random

    import sympy as sp

    from symgrad.checking.decision import exp_generators
    x, y = sp.symbols("x y", real=True)
    identities = [
        sp.sin(2 * x) - 2 * sp.sin(x) * sp.cos(x),
        1 / sp.cosh(x) ** 2 - (1 - sp.tanh(x) ** 2),
        sp.exp(x) * sp.exp(y) - sp.exp(x + y),
        1 / (1 + sp.exp(-x)) - sp.exp(x) / (1 + sp.exp(x)),
        sp.tanh(sp.tanh(x) + y) - sp.sinh(sp.tanh(x) + y) / sp.cosh(sp.tanh(x) + y),
        sp.cot(x) * sp.sin(x) - sp.cos(x),
        sp.cosh(x) ** 2 - sp.sinh(x) ** 2 - 1,
    ]
    others = [
        sp.sin(2 * x) - sp.sin(x) * sp.cos(x),
        sp.tanh(x) - 1 / sp.cosh(x) ** 2,
        sp.exp(2 * x) - sp.exp(x),
        sp.cosh(x) ** 2 + sp.sinh(x) ** 2 - 1,
        sp.exp(x ** 2) - sp.exp(x) ** 2,
    ]
    rng = random.Random(3)
    for d in identities:
        assert sp.cancel(exp_generators(d)) == 0, d
        for _ in range(3):
            at = {x: sp.Rational(rng.randint(-300, 300), 100),
                  y: sp.Rational(rng.randint(-300, 300), 100)}
            assert abs(sp.N(d.xreplace(at), 30)) < 1e-25, d
    for d in others:
        assert sp.cancel(exp_generators(d)) != 0, d
