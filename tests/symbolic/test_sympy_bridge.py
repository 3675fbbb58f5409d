"""The SymPy bridge and symbolic reverse mode on the graph, against sympy.diff."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symgrad
from symgrad.symbolic.expression import EvaluationError
from symgrad.symbolic.parser import ParseError
from symgrad.symbolic.bridge import (almost_everywhere, gradient_program, leaf_symbols, nice_number,
                              to_sympy)

V2 = [0.7, -0.4]
V3 = [0.3, 1.2, -0.8]
M2 = [[1.5, -0.5], [0.25, 2.0]]

# (expression, values: the shapes of the variables and a point inside the domain)
TEXTBOOK = [
    ("x**2", {"x": 1.3}),
    ("x**3 - 2*x + 1", {"x": 0.7}),
    ("x**-1", {"x": 1.3}),
    ("sqrt(x)", {"x": 1.3}),
    ("1/x", {"x": 1.3}),
    ("x*y", {"x": 1.3, "y": -0.4}),
    ("x/y", {"x": 1.3, "y": 0.9}),
    ("x**2*y**3", {"x": 1.3, "y": 0.9}),
    ("sin(x)*cos(x)", {"x": 0.4}),
    ("x*exp(x)", {"x": 0.4}),
    ("exp(x)/x", {"x": 1.4}),
    ("log(x)/x", {"x": 1.4}),
    ("x**2*log(x)", {"x": 1.4}),
    ("(x + 1)/(x - 1)", {"x": 3.0}),
    ("sin(x)/(1 + cos(x))", {"x": 0.3}),
    ("tan(x)", {"x": 0.3}),
    ("sin(x**2)", {"x": 0.9}),
    ("cos(3*x + 1)", {"x": 0.9}),
    ("exp(sin(x))", {"x": 0.9}),
    ("log(1 + x**2)", {"x": 0.9}),
    ("sqrt(1 + x**2)", {"x": 0.9}),
    ("sin(cos(tan(x)))", {"x": 0.2}),
    ("exp(-x**2/2)", {"x": 0.6}),
    ("tanh(x)", {"x": 0.6}),
    ("tanh(2*x + y)", {"x": 0.6, "y": -0.1}),
    ("sigmoid(x)", {"x": 0.6}),
    ("log(sigmoid(x))", {"x": 0.6}),
    ("x*sigmoid(x)", {"x": 0.6}),
    ("2**x", {"x": 0.6}),
    ("x**y", {"x": 1.6, "y": 0.7}),
    ("e**x + pi*x", {"x": 0.6}),
    ("abs(x)", {"x": -0.6}),
    ("relu(x)*x", {"x": 0.6}),
    ("exp(x*y)*sin(y)", {"x": 0.3, "y": 0.8}),
    ("log(x*y + 1)", {"x": 0.3, "y": 0.8}),
    ("sin(x)**2 + cos(x)**2", {"x": 0.8}),
    ("dot(x, y)", {"x": V3, "y": V3[::-1]}),
    ("sin(dot(x, y))", {"x": V3, "y": [1.0, -0.5, 0.25]}),
    ("sum(x*x)", {"x": V3}),
    ("mean(x**2)", {"x": V3}),
    ("norm(x)", {"x": V3}),
    ("norm(x)**2", {"x": V3}),
    ("x.T @ A @ x", {"x": V2, "A": M2}),
    ("dot(x, A @ y)", {"x": V2, "A": M2, "y": [0.5, 1.5]}),
    ("sum(A @ B)", {"A": M2, "B": [[0.5, 1.0], [-1.0, 2.0]]}),
    ("sum(A*A.T)", {"A": M2}),
    ("log(sum(exp(x)))", {"x": V3}),
    ("sum(softmax(x)*y)", {"x": V3, "y": [1.0, 2.0, 3.0]}),
    ("sum(log_softmax(x)*y)", {"x": V3, "y": [0.2, 0.3, 0.5]}),
    ("sum(sigmoid(w*x))", {"w": 0.5, "x": V3}),
    ("sum(tanh(A @ x))", {"A": M2, "x": V2}),
    ("sum(relu(x))", {"x": V3}),
    ("mean(sqrt(x*x + 1))", {"x": V3}),
    ("sum((x - y)**2)/2", {"x": V3, "y": [0.0, 1.0, 2.0]}),
]


def _symbols(expr_values):
    """Symbols of every variable's elements, as to_sympy names them."""
    return {k: leaf_symbols(k, np.shape(v)) for k, v in expr_values.items()}


def _at(values, syms):
    subs = {}
    for k, v in values.items():
        a = np.asarray(v, dtype=float)
        for ix in np.ndindex(*a.shape):
            subs[syms[k][ix]] = sp.Rational(repr(float(a[ix])))
    return subs


@pytest.mark.parametrize("text,values", TEXTBOOK, ids=[t for t, _ in TEXTBOOK])
def test_textbook_derivatives_match_sympy_diff(text, values):
    e = symgrad.parse(text)
    f = e.to_sympy(**values)
    assert isinstance(f, sp.Expr)
    syms = _symbols(values)
    prog = e.gradient_program(**values)
    closed = prog.closed_form(simplify=False)
    numeric = e.gradient(**values)
    program_numbers = prog.evaluate()
    rng = np.random.default_rng(1)
    # Compare at the given point and at a second point nearby (exactly, 30 digits).
    points = [values, {k: np.asarray(v) * (1 + 0.1 * rng.uniform(-1, 1, np.shape(v)))
                       for k, v in values.items()}]
    for k in values:
        mine = np.asarray(closed[k].tolist() if isinstance(closed[k], sp.MatrixBase)
                          else closed[k], dtype=object).reshape(np.shape(values[k]))
        for ix in np.ndindex(*np.shape(values[k])):
            want = sp.diff(f, syms[k][ix])
            for pt in points:
                subs = _at(pt, syms)
                a = complex(almost_everywhere(mine[ix]).xreplace(subs).evalf(30))
                b = complex(want.xreplace(subs).evalf(30))
                assert abs(a - b) <= 1e-12 * max(1.0, abs(b)), (k, ix, mine[ix], want)
            # The program's numbers, reverse mode and sympy.diff agree at the point.
            b = float(want.xreplace(_at(values, syms)).evalf(30))
            assert np.asarray(program_numbers[k])[ix] == pytest.approx(b, rel=1e-9, abs=1e-12)
            assert np.asarray(numeric[k])[ix] == pytest.approx(b, rel=1e-9, abs=1e-12)


def test_table_is_large_enough():
    assert len(TEXTBOOK) >= 40


def test_simple_closed_forms_simplify_to_textbook_answers():
    x, y = sp.symbols("x y", real=True)
    e = symgrad.parse("x**2 * sin(x)")
    assert sp.simplify(e.diff("x") - (2 * x * sp.sin(x) + x ** 2 * sp.cos(x))) == 0
    e = symgrad.parse("x * y ** 2")
    assert e.diff("y") == 2 * x * y
    assert e.diff("x") == y ** 2


def test_to_sympy_names_leaves_and_elements():
    x = symgrad.tensor([1.0, 2.0], requires_grad=True, name="x")
    A = symgrad.tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True, name="A")
    out = to_sympy(x @ A @ x)
    s = {str(a) for a in out.free_symbols}
    assert s == {"x_0", "x_1", "A_0_0", "A_0_1", "A_1_0", "A_1_1"}
    v = to_sympy(A @ x)
    assert isinstance(v, sp.Matrix) and v.shape == (2, 1)
    assert str(v[0]) == "A_0_0*x_0 + A_0_1*x_1"


def test_to_sympy_default_names_are_stable_and_skip_taken_names():
    a = symgrad.tensor(2.0, requires_grad=True)
    b = symgrad.tensor(3.0, requires_grad=True, name="x")
    c = symgrad.tensor(4.0, requires_grad=True)
    out = a * b + c
    assert str(to_sympy(out)) == "x*y + z"
    assert str(to_sympy(out)) == "x*y + z"  # the same names every time


def test_to_sympy_constants_are_exact():
    x = symgrad.tensor(0.5, requires_grad=True, name="x")
    c = symgrad.tensor([0.1, 0.2])
    assert str(to_sympy(symgrad.tanh(1.1 * x + 0.1))) == "tanh(11*x/10 + 1/10)"
    assert to_sympy((c * x).sum()) == sp.Rational(3, 10) * sp.Symbol("x", real=True)
    assert to_sympy(symgrad.tensor(2.0)) == 2
    assert nice_number(1 / 3) == sp.Rational(1, 3)  # (the parser folds 1/3: it is 1/3)
    assert nice_number(0.123456789) == sp.Float(0.123456789)  # (no short form: a float)


def test_to_sympy_of_a_leaf_and_of_float32_tensors():
    x = symgrad.tensor([1.0, 2.0], requires_grad=True, name="w")
    assert list(to_sympy(x)) == list(leaf_symbols("w", (2,)))
    y = symgrad.tensor(1.5, requires_grad=True, name="y")
    assert to_sympy(y * 0.1) == sp.Symbol("y", real=True) / 10


def _nested_tanh(d, x0=0.3):
    x = symgrad.tensor(x0, dtype=symgrad.float64, requires_grad=True, name="x")
    f = x
    for _ in range(d):
        f = symgrad.tanh(1.1 * f + 0.1)
    return x, f


def test_deep_program_is_linear_and_matches_reverse_mode():
    d = 64
    x, f = _nested_tanh(d)
    prog = gradient_program(f)
    # mul, add, tanh per level, forward and adjoint, plus the seed and x̄.
    assert len(prog.lines) <= 6 * d + 2
    assert len(prog.lines) >= 6 * d
    assert prog.size() <= 12 * 6 * d
    (g,) = symgrad.autograd.grad(f, [x])
    assert float(prog.evaluate()["x"]) == pytest.approx(g.item(), rel=1e-12)
    assert prog.value() == pytest.approx(f.item(), rel=1e-12)
    # At another point, against central differences of the forward function.
    at = 0.7
    h = 1e-6
    fd = (_nested_tanh(d, at + h)[1].item() - _nested_tanh(d, at - h)[1].item()) / (2 * h)
    assert float(prog.evaluate({"x": at})["x"]) == pytest.approx(fd, rel=1e-6)


def test_shared_subexpressions_stay_shared():
    # y = x; y = y*y 20 times: the closed form has x**(2**20); the program 20 lines each.
    x = symgrad.tensor(1.0001, dtype=symgrad.float64, requires_grad=True, name="x")
    y = x
    for _ in range(20):
        y = y * y
    prog = gradient_program(y)
    assert len([ln for ln in prog.lines if ln.kind == "forward"]) == 20
    assert len(prog.lines) == 20 + 20 + 1
    (g,) = symgrad.autograd.grad(y, [x])
    assert float(prog.evaluate()["x"]) == pytest.approx(g.item(), rel=1e-9)


def test_program_text_one_line_per_node():
    x = symgrad.tensor(2.0, requires_grad=True, name="x")
    y = symgrad.tensor(3.0, requires_grad=True, name="y")
    p = gradient_program(symgrad.sin(x * y) + x)
    text = str(p).splitlines()
    assert text[0].startswith("v1 = x*y") and "MulBackward0" in text[0]
    assert text[3] == "v\u03043 = 1"
    assert text[-2].startswith("x\u0304 = v\u03041*y + v\u03043")
    assert p.closed_form()["y"] == sp.Symbol("x", real=True) * sp.cos(
        sp.Symbol("x", real=True) * sp.Symbol("y", real=True))


def test_program_wrt_subset_and_unused_leaf():
    x = symgrad.tensor(2.0, requires_grad=True, name="x")
    y = symgrad.tensor(3.0, requires_grad=True, name="y")
    z = symgrad.tensor(3.0, requires_grad=True, name="z")
    f = x * y
    p = gradient_program(f, wrt=[x])
    assert p.wrt == ["x"] and set(p.evaluate()) == {"x"}
    assert float(p.evaluate()["x"]) == 3.0
    with pytest.raises(RuntimeError, match="not have been used"):
        gradient_program(f, wrt=[z])
    with pytest.raises(ValueError, match="not a leaf"):
        gradient_program(f, wrt=["q"])


def test_program_rejects_non_scalar_outputs():
    x = symgrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar outputs"):
        gradient_program(x * 2)


def test_vector_program_evaluates_like_reverse_mode_at_new_values():
    e = symgrad.parse("sum(softmax(A @ x) * y)")
    vals = {"A": M2, "x": V2, "y": [1.0, -2.0]}
    prog = e.gradient_program(**vals)
    new = {"A": [[0.3, 0.1], [-1.0, 0.5]], "x": [2.0, 1.0], "y": [0.5, 0.5]}
    got = prog.evaluate(new)
    want = e.gradient(**new)
    for k in vals:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-14)


def test_norm_gradient_is_clean_almost_everywhere():
    e = symgrad.parse("norm(x)")
    g = e.diff("x", x=[1.0, 2.0])
    x0, x1 = sp.symbols("x_0 x_1", real=True)
    assert sp.simplify(almost_everywhere(g[0]) - x0 / sp.sqrt(x0 ** 2 + x1 ** 2)) == 0


# ------------------------------------------------------------------------ parse/evaluate
def test_parse_builds_the_same_ir_as_the_tensor_front_end():
    e = symgrad.parse("sin(x*y) + x")
    out = e.evaluate(x=2.0, y=3.0)
    assert type(out.grad_fn).__name__ == "AddBackward0"
    names = [type(n).__name__ for n, _ in out.grad_fn.next_functions]
    assert names == ["SinBackward0", "AccumulateGrad"]
    x = out.grad_fn.next_functions[1][0].variable
    assert x.name == "x" and x.is_leaf and x.requires_grad


def test_parse_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    e = symgrad.parse("log(sum(exp(A @ x))) + norm(x)*mean(x)")
    A, x = np.array(M2), np.array(V2)
    g = e.gradient(A=A, x=x)
    tA = torch.tensor(A, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    out = torch.log(torch.exp(tA @ tx).sum()) + tx.norm() * tx.mean()
    out.backward()
    np.testing.assert_allclose(g["A"], tA.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g["x"], tx.grad.numpy(), rtol=1e-12)


def test_parse_constants_and_power_operator():
    e = symgrad.parse("pi*x^2 + e")
    assert e.variables == ["x"]
    assert e.to_sympy() == sp.pi * sp.Symbol("x", real=True) ** 2 + sp.E
    assert e.gradient(x=1.0)["x"] == pytest.approx(2 * np.pi)


def test_evaluation_errors_point_at_the_column():
    e = symgrad.parse("x + dot(x, y)")
    with pytest.raises(EvaluationError) as info:
        e.evaluate(x=[1.0, 2.0], y=[1.0, 2.0, 3.0])
    assert info.value.column == 5
    assert "dot" in str(info.value) and "^" in info.value.pretty()
    e = symgrad.parse("x @ A")
    with pytest.raises(EvaluationError) as info:
        e.evaluate(x=[1.0, 2.0, 3.0], A=M2)
    assert info.value.column == 3
    assert isinstance(info.value, ParseError)


def test_missing_and_unknown_values_are_clear():
    e = symgrad.parse("x*y")
    with pytest.raises(ValueError, match="no value given for y"):
        e.evaluate(x=1.0)
    with pytest.raises(ValueError, match="z not in the expression"):
        e.evaluate(x=1.0, y=2.0, z=3.0)


@pytest.mark.parametrize("text", ["__import__('os')", "x.__class__", "sin(x", "x +", "",
                                  "foo(x)", "1.2.3", "(" * 500 + "x" + ")" * 500])
def test_parse_rejects_malformed_text(text):
    with pytest.raises(ParseError) as info:
        symgrad.parse(text)
    assert info.value.column >= 1
    assert "^" in info.value.pretty()


def test_verify_agrees_and_would_catch_a_broken_rule(monkeypatch):
    x = symgrad.tensor([0.5, -1.0, 2.0], requires_grad=True, name="x", dtype=symgrad.float64)
    A = symgrad.tensor([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0]], requires_grad=True,
                       dtype=symgrad.float64)
    f = (symgrad.tanh(A @ x) * symgrad.sigmoid(A @ x)).sum() + x.norm()
    r = symgrad.verify(f)
    assert r.verdict == "correct", r.text()
    from symgrad import ops
    broken = (lambda m, grad, result: grad * (1 + result * result),)
    monkeypatch.setattr(ops.TANH, "grads", broken)
    f = symgrad.tanh(x).sum()
    r = symgrad.verify(f)
    assert r.verdict == "wrong" and r.counterexample["variable"] == "x"


# ------------------------------------------------------------------------ vector form
VECTOR_FORMS = [
    ("sin(dot(x, y))", "x", {"x": V3, "y": [1.0, 2.0, 3.0]}, "cos(dot(x, y)) * y"),
    ("x.T @ A @ x", "x", {"x": V2, "A": M2}, "(A + A.T) @ x"),
    ("x.T @ A @ x", "A", {"x": V2, "A": M2}, "outer(x, x)"),
    ("norm(x)", "x", {"x": V3}, "x / norm(x)"),
    ("log(sum(exp(x)))", "x", {"x": V3}, "exp(x) / sum(exp(x))"),
    ("sum(x*x)", "x", {"x": V3}, "2 * x"),
    ("sum(softmax(x)*y)", "x", {"x": V3, "y": [1.0, 2.0, 3.0]}, None),
    ("sum(log_softmax(x)*y)", "x", {"x": V3, "y": [1.0, 2.0, 3.0]}, None),
    ("sum(sigmoid(w*x))", "w", {"w": 0.5, "x": V3}, None),
    ("sum(tanh(A @ x))", "x", {"A": M2, "x": V2}, "A.T @ (1 - tanh(A @ x) ** 2)"),
    ("sum(A*B.T)", "A", {"A": M2, "B": M2}, None),
    ("sum(w + x)", "w", {"w": 0.5, "x": V3}, "3"),
    ("sum(log_softmax(x))", "x", {"x": V3}, "1 - 3 * softmax(x)"),
    ("sum(x - w)**2", "w", {"w": 0.5, "x": V3}, None),
    ("mean(w*x + 1)", "w", {"w": 0.5, "x": V3}, None),
    ("sum(exp(x)/(1 + x**2))", "x", {"x": V3}, None),
    ("1/norm(x)", "x", {"x": V3}, None),
]


@pytest.mark.parametrize("text,var,values,want", VECTOR_FORMS,
                         ids=[f"{t}/{v}" for t, v, _, _ in VECTOR_FORMS])
def test_vector_form_gradients_are_right(text, var, values, want):
    g = symgrad.parse(text).vector_gradient(var, **values)
    if want is not None:
        assert g == want
    # The vector form is itself an expression: the checker must call it correct.
    r = symgrad.check(text, {var: g}, at=values, samples=3)
    assert r.verdict == "correct", r.text()


@pytest.mark.parametrize("text,var,values", [
    ("sum(cumsum(x) * x)", "x", {"x": V3}),
    ("sum(A @ B)", "A", {"A": M2, "B": M2}),
    ("sum(relu(x))", "x", {"x": V3}),
])
def test_no_vector_form_is_said_plainly(text, var, values):
    from symgrad.symbolic.vectors import NoVectorForm
    with pytest.raises(NoVectorForm):
        symgrad.parse(text).vector_gradient(var, **values)
    # The per-element symbolic gradient still exists.
    assert symgrad.parse(text).diff(var, simplify=False, **values) is not None


def test_max_along_a_dimension_symbolically():
    A = symgrad.tensor([[1.0, 3.0], [2.0, 0.5]], requires_grad=True, name="A",
                       dtype=symgrad.float64)
    w = symgrad.tensor([1.0, 2.0], dtype=symgrad.float64)
    f = (A.max(dim=0).values * w).sum()
    assert str(to_sympy(f)) == "Max(A_0_0, A_1_0) + 2*Max(A_0_1, A_1_1)"
    prog = gradient_program(f)
    (g,) = symgrad.autograd.grad(f, [A])
    np.testing.assert_array_equal(prog.evaluate()["A"], g.numpy())
    # Elsewhere the maxima sit in other places; the program follows them.
    got = prog.evaluate({"A": [[5.0, -1.0], [2.0, 0.0]]})["A"]
    np.testing.assert_array_equal(got, [[1.0, 0.0], [0.0, 2.0]])


def test_closed_form_with_timeout_and_latex():
    e = symgrad.parse("norm(x)*x")
    prog = e.gradient_program()
    x = sp.Symbol("x", real=True)
    g = prog.closed_form(timeout=30)["x"]
    assert not g.has(sp.Piecewise)
    for v in (sp.Rational(3, 2), -2):
        assert (g - 2 * x * sp.sign(x)).subs(x, v) == 0
    assert prog.closed_form(simplify=False)["x"].has(sp.Piecewise)
    tex = prog.to_latex()
    assert tex.startswith("\\begin{aligned}") and "\\bar{x} &=" in tex
    assert tex.count(" \\\\\n") == len(prog.lines) - 1


def test_program_names_never_clash_with_leaves_and_json_form():
    a = symgrad.tensor(1.0, requires_grad=True, name="v1")
    p = gradient_program(symgrad.exp(a) * a)
    names = [ln.name for ln in p.lines]
    assert names[0] == "t1" and names[-1] == "v\u03041"
    assert float(p.evaluate()["v1"]) == pytest.approx(2 * np.e)
    d = p.as_dict()
    assert d["wrt"] == ["v1"] and d["leaves"] == {"v1": []}
    assert d["lines"][0] == {"name": "t1", "kind": "forward", "ops": ["ExpBackward0"],
                             "expr": "exp(v1)"}


# ------------------------------------------------------------------------ higher order
@pytest.mark.parametrize("text,var,order", [
    ("x**3*sin(y)", "x", 2), ("x**3*sin(y)", "x", 3), ("x**3*sin(y)", "y", 3),
    ("exp(x*y)/x", "x", 2), ("tanh(x)", "x", 3), ("sigmoid(x)*log(1 + x**2)", "x", 2),
    ("x**3", "x", 4),
])
def test_higher_order_derivatives_match_sympy(text, var, order):
    e = symgrad.parse(text)
    f = e.to_sympy()
    s = sp.Symbol(var, real=True)
    got = e.diff(var, order=order, simplify=False)
    want = sp.diff(f, s, order)
    point = {sp.Symbol(v, real=True): sp.Rational(7, 10) for v in e.variables}
    assert complex(sp.N(sp.sympify(got).xreplace(point) - want.xreplace(point), 30)) \
        == pytest.approx(0, abs=1e-20)


def test_hessian_of_vector_expressions():
    e = symgrad.parse("x.T @ A @ x")
    H = e.diff("x", order=2, x=V2, A=M2)
    a = leaf_symbols("A", (2, 2))
    assert H == sp.Matrix([[2 * a[0, 0], a[0, 1] + a[1, 0]], [a[0, 1] + a[1, 0], 2 * a[1, 1]]])
    e = symgrad.parse("log(sum(exp(x)))")
    H = e.diff("x", order=2, x=V3)
    f = e.to_sympy(x=V3)
    xs = list(leaf_symbols("x", (3,)))
    want = sp.hessian(f, xs)
    point = {s: sp.Rational(k + 1, 3) for k, s in enumerate(xs)}
    diff = (H - want).xreplace(point)
    assert all(abs(complex(sp.N(d, 30))) < 1e-20 for d in diff)


def test_backward_graphs_are_in_the_same_ir():
    # create_graph=True records the backward pass; the bridge reads it like any graph.
    x = symgrad.tensor(0.7, requires_grad=True, name="x", dtype=symgrad.float64)
    (g,) = symgrad.autograd.grad(symgrad.sin(x) * x ** 3, x, create_graph=True)
    xs = sp.Symbol("x", real=True)
    assert sp.simplify(to_sympy(g) - sp.diff(sp.sin(xs) * xs ** 3, xs)) == 0
    (h,) = symgrad.autograd.grad(g, x, retain_graph=True)
    assert float(gradient_program(g).evaluate()["x"]) == pytest.approx(h.item(), rel=1e-12)


# ------------------------------------------------------------------------ every kind of node
def _front_end_cases():
    x = symgrad.tensor([0.5, -1.2, 2.0], requires_grad=True, name="x", dtype=symgrad.float64)
    A = symgrad.tensor([[1.0, 2.0, -0.5], [0.3, -1.0, 1.5]], requires_grad=True, name="A",
                       dtype=symgrad.float64)
    return x, A, {
        "index": lambda: x[0] * x[2],
        "slice": lambda: (x[1:] ** 2).sum(),
        "advanced index": lambda: x[[0, 0, 2]].sum() * x[1],
        "cat": lambda: (symgrad.cat([x, x * 2]) ** 2).sum(),
        "stack": lambda: (symgrad.stack([x, symgrad.sin(x)]) * 3).sum(),
        "reshape": lambda: (A.reshape(3, 2) @ A).sum(),
        "expand": lambda: (x.unsqueeze(0).expand(2, 3) * A).sum(),
        "where": lambda: symgrad.where(x > 0, x ** 2, -x).sum(),
        "clamp": lambda: x.clamp(-1, 1).sum(),
        "maximum": lambda: symgrad.maximum(x, x ** 2).sum(),
        "sum dim": lambda: (A.sum(dim=1) ** 2).sum(),
        "mean dim": lambda: (A.mean(dim=0, keepdim=True) * A).sum(),
        "transpose": lambda: (A.transpose(0, 1) @ A).sum(),
        "mm": lambda: (A @ A.T).sum(),
        "squeeze": lambda: (A[0:1].squeeze(0) * x).sum(),
        "max dim": lambda: A.max(dim=1).values.sum(),
        "min": lambda: A.min() * 2,
        "softmax dim": lambda: (A.softmax(dim=1) * A).sum(),
        "norm dim": lambda: A.norm(dim=1).sum(),
        "pow tensor": lambda: (x.abs() ** A[0]).sum(),
        "rsub rdiv": lambda: ((1 - x) * (2 / x)).sum(),
        "casts": lambda: x.float().double().clone().sum(),
        "relu sigmoid": lambda: (symgrad.relu(A) + symgrad.sigmoid(A)).sum(),
    }


@pytest.mark.parametrize("case", list(_front_end_cases()[2]))
def test_program_matches_reverse_mode_for_every_kind_of_node(case):
    x, A, cases = _front_end_cases()
    f = cases[case]
    prog = gradient_program(f())
    leaves = [t for t in (x, A) if t.name in prog.leaves]
    grads = symgrad.autograd.grad(f(), leaves)
    got = prog.evaluate()
    for t, g in zip(leaves, grads):
        np.testing.assert_allclose(got[t.name], g.numpy(), rtol=1e-6, atol=1e-12)


def test_constant_arithmetic_follows_floats():
    assert np.isnan(symgrad.parse("x + (-8)**(1/3)").evaluate(x=1.0).item())
    assert symgrad.parse("x * 10**400").evaluate(x=1.0).item() == np.inf
    with pytest.raises(EvaluationError) as info:
        symgrad.parse("x + 1/0").evaluate(x=1.0)
    assert info.value.column == 6


# -------------------------------------------------------------- parsed text and named tensors
def test_to_sympy_names_leaves():
    w = symgrad.tensor([1.0, 2.0], requires_grad=True, name="w")
    b = symgrad.tensor(0.5, requires_grad=True, name="b")
    f = symgrad.tanh(w).sum() * b
    w0, w1, bb = sp.symbols("w_0 w_1 b", real=True)
    assert sp.simplify(symgrad.to_sympy(f) - bb * (sp.tanh(w0) + sp.tanh(w1))) == 0
    e = symgrad.parse("x.T @ A @ x")
    fx = e.to_sympy(x=[0, 0], A=[[0, 0], [0, 0]])
    names = {s.name for s in fx.free_symbols}
    assert names == {"x_0", "x_1", "A_0_0", "A_0_1", "A_1_0", "A_1_1"}


def test_parse_runs_forward_reverse_and_symbolic():
    torch = pytest.importorskip("torch")
    e = symgrad.parse("sigmoid(dot(w, x) + b)")
    pt = {"w": [0.5, -1.0], "x": [1.0, 2.0], "b": 0.1}
    tw = torch.tensor(pt["w"], dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(pt["b"], dtype=torch.float64, requires_grad=True)
    ty = torch.sigmoid(torch.dot(tw, torch.tensor(pt["x"], dtype=torch.float64)) + tb)
    ty.backward()
    assert e.evaluate(**pt).item() == pytest.approx(ty.item(), rel=1e-15)
    g = e.gradient(**pt)
    assert np.allclose(g["w"], tw.grad.numpy()) and g["b"] == pytest.approx(tb.grad.item())
    prog = e.gradient_program(["w", "b"], **pt)
    sym = prog.evaluate(pt)
    assert np.allclose(sym["w"], tw.grad.numpy(), rtol=1e-12)


def test_symbolic_gradient_grows_linearly_with_the_graph():
    ops = []
    for depth in (10, 20, 40):
        text = "x"
        for _ in range(depth):
            text = f"tanh({text})"
        prog = symgrad.parse(text).gradient_program(["x"])
        ops.append(prog.size())  # SymPy count_ops over all lines
        assert len(prog.lines) == 2 * depth + 1
    assert ops[1] == 2 * ops[0] and ops[2] == 4 * ops[0], ops
