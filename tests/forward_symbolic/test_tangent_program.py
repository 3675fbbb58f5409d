"""Forward mode in the symbolic layer: the tangent program, its closed form and numbers,
the matrix forms (J v, Jᵀ u, Jacobians) and the Jacobian checker.

Oracles: SymPy's directional derivative ``Σ ∂f/∂x_j ẋ_j`` of the expression's own SymPy
form, central finite differences, PyTorch's ``autograd.functional.jvp`` / ``jacobian``, and, for the
matrix forms (which hold for every size), the printed text parsed back and evaluated at
two sizes against forward mode's numbers.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symgrad
from symgrad.checking.jacobians import check_jacobian
from symgrad.ops import OPS
from symgrad.symbolic.forward_mode import (forward_derivatives, jacobian_form, jvp_form,
                                           vjp_forms)
from symgrad.symbolic.parser import FUNCTION_OPS
from symgrad.symbolic.tangents import DOT, chain_text, directional_sympy, dotted

SCALAR = ["sin(x*y)", "x**3*y - exp(x/y)", "tanh(1.1*tanh(x) + 0.1)*y", "log(x**2 + y**2)",
          "sqrt(x)*atan2(y, x)", "sigmoid(x - y)**2", "x/(1 + y**2) - 3*x*y"]


def _point(names, rng):
    return {k: float(rng.uniform(0.3, 1.7)) for k in names}


@pytest.mark.parametrize("text", SCALAR)
def test_closed_form_is_sympys_directional_derivative(text):
    f = symgrad.parse(text)
    p = f.tangent_program()
    syms = {k: p.inputs[k][0] for k in f.variables}
    want = directional_sympy(f.to_sympy(), p.seeds, syms)
    got = p.closed_form("none")
    diff = sp.simplify(got - want)
    if isinstance(diff, sp.Piecewise):  # (atan2's rule: 0 at the origin, as PyTorch's)
        diff = next(e for e, c in diff.args if c == sp.true)
    assert diff == 0, (got, want)
    # every seed appears: a wrong tangent for one input would drop or change a term
    for k in f.variables:
        assert sp.diff(got, p.seeds[k][()]) != 0


def test_program_lines_in_evaluation_order():
    p = symgrad.parse("sin(x*y)").tangent_program()
    assert [ln.name for ln in p.lines] == ["v1", "v" + DOT + "1", "v2", "v" + DOT + "2"]
    assert [ln.rhs() for ln in p.lines[1::2]] == [
        f"y·{dotted('x')} + x·{dotted('y')}", f"cos(v1)·{dotted('v1')}"]
    assert str(p).splitlines()[3] == f"{dotted('v2')} = cos(v1)·{dotted('v1')}"
    assert r"\dot{v}_{2} &= \dot{v}_{1} \cos{\left(v_{1} \right)}" in p.to_latex()


def test_chain_text_reads_as_local_times_tangent():
    a, b, t, s = sp.symbols("a b t s")
    assert chain_text(-sp.cos(a) * t + (1 - a ** 2) * s, [t, s]) == "-cos(a)·t + (1 - a**2)·s"
    assert chain_text(t / b, [t]) == "(1/b)·t"
    assert chain_text(sp.Integer(0), [t]) == "0"
    step = sp.Piecewise((0, a <= 0), (1, True))
    assert chain_text(step * t, [t]) == "[a > 0]·t"  # (relu's, as an Iverson bracket)


def test_an_input_as_the_output():
    p = symgrad.parse("x").tangent_program()
    assert p.lines == [] and p.closed_form() == p.seeds["x"][()]
    assert float(p.directional({"x": 3.0}, {"x": 2.0})) == 2.0


@pytest.mark.parametrize("text", SCALAR)
def test_numbers_agree_with_finite_differences(text):
    rng = np.random.default_rng(len(text))
    f = symgrad.parse(text)
    p = f.tangent_program()
    at = _point(f.variables, rng)
    v = {k: float(rng.normal()) for k in f.variables}
    h = 1e-6
    plus = f.evaluate(**{k: at[k] + h * v[k] for k in at}).item()
    minus = f.evaluate(**{k: at[k] - h * v[k] for k in at}).item()
    assert np.isclose(p.directional(at, v), (plus - minus) / (2 * h), rtol=1e-6, atol=1e-8)


# Every elementwise function of the expression language, through the op table's rule.
UNARY = sorted(name for name, op in FUNCTION_OPS.items()
               if op is not None and op.elementwise and op.arity == 1 and op.grads
               and op.grads[0] is not None and name == op.expr)


@pytest.mark.parametrize("name", UNARY)
def test_every_elementwise_function_against_finite_differences(name):
    op = FUNCTION_OPS[name]
    lo, hi = op.domain
    u0 = 0.55 if lo < 0.55 < hi else (lo + 0.65 if np.isfinite(lo) else hi - 0.65)
    x0 = u0 / 2  # (the argument 2*x is u0, inside the function's domain)
    f = symgrad.parse(f"{name}(2*x)")
    p = f.tangent_program(x=x0)
    h = 1e-6
    fd = (f.evaluate(x=x0 + h).item() - f.evaluate(x=x0 - h).item()) / (2 * h)
    if not np.isfinite(fd):
        pytest.skip(f"{name} is not differentiable at {x0}")
    got = float(p.directional({"x": x0}, {"x": 1.0}))
    assert np.isclose(got, fd, rtol=1e-5, atol=1e-6), (name, got, fd)


VECTOR = [("tanh(W @ x + b)", {"W": (2, 3), "x": (3,), "b": (2,)}),
          ("exp(x) * sum(x)", {"x": (3,)}),
          ("softmax(x)", {"x": (4,)}),
          ("A @ x - b", {"A": (2, 2), "x": (2,), "b": (2,)})]


@pytest.mark.parametrize("text,shapes", VECTOR)
def test_vector_outputs_against_torch(torch, text, shapes):
    rng = np.random.default_rng(3)
    f = symgrad.parse(text)
    at = {k: rng.uniform(-1, 1, size=s) for k, s in shapes.items()}
    direction = {k: rng.normal(size=s) for k, s in shapes.items()}
    d = forward_derivatives(f, at=at, direction=direction, simplify="none")
    names = list(f.variables)

    def fn(*xs):
        env = {**dict(zip(names, xs))}
        return _torch_eval(torch, text, env)
    _, jv = torch.autograd.functional.jvp(fn, tuple(torch.tensor(at[k]) for k in names),
                                          tuple(torch.tensor(direction[k]) for k in names))
    assert np.allclose(d.columns[0], jv.numpy(), rtol=1e-9, atol=1e-12)
    assert d.agree
    # the default directions are the Jacobian's columns
    full = forward_derivatives(f, at=at, simplify="none")
    jac = np.stack([np.ravel(c) for c in full.columns], axis=1)
    ref = torch.autograd.functional.jacobian(fn, tuple(torch.tensor(at[k]) for k in names))
    n_out = jac.shape[0]
    assert np.allclose(jac, np.concatenate([r.numpy().reshape(n_out, -1) for r in ref],
                                           axis=1))


def _torch_eval(torch, text, env):
    return {"tanh(W @ x + b)": lambda: torch.tanh(env["W"] @ env["x"] + env["b"]),
            "exp(x) * sum(x)": lambda: torch.exp(env["x"]) * env["x"].sum(),
            "softmax(x)": lambda: torch.softmax(env["x"], -1),
            "A @ x - b": lambda: env["A"] @ env["x"] - env["b"]}[text]()


def _ascii(text: str, names) -> str:
    for k in names:
        text = text.replace(dotted(k), f"d{k}")
    return text.replace("f\u0304", "u")


MATRIX = [("tanh(W @ x + b)", ("n", "m"), {"W": ("n", "m"), "x": ("m",), "b": ("n",)}),
          ("sum((A @ x - b)**2)", ("n", "m"), {"A": ("n", "m"), "x": ("m",), "b": ("n",)}),
          ("x.T @ A @ x", ("n",), {"A": ("n", "n"), "x": ("n",)}),
          ("sin(dot(x, y)) * x", ("n",), {"x": ("n",), "y": ("n",)})]


@pytest.mark.parametrize("text,dims,labels", MATRIX)
def test_matrix_forms_hold_at_every_size(text, dims, labels):
    f = symgrad.parse(text)
    names = list(f.variables)
    base = {k: np.full(tuple(2 if d == "n" else 3 for d in s), 0.5) for k, s in labels.items()}
    jv_text = _ascii(jvp_form(f, names, base, labels), names)
    vjp_text = {k: _ascii(t, names) for k, t in vjp_forms(f, names, base, labels).items()}
    jac_text = {}
    for k in names:
        try:
            jac_text[k] = _ascii(jacobian_form(f, k, base, labels), names)
        except ValueError:  # (NoVectorForm: a matrix input)
            pass
    rng = np.random.default_rng(5)
    for sizes in ({"n": 1, "m": 2}, {"n": 3, "m": 2}):
        at = {k: rng.uniform(-1, 1, size=tuple(sizes[d] for d in s)) for k, s in labels.items()}
        v = {k: rng.normal(size=np.shape(a)) for k, a in at.items()}
        d = forward_derivatives(f, at=at, direction=v)
        env = {**at, **{f"d{k}": v[k] for k in names}}
        if np.ndim(d.value) == 1:  # (I: the identity of the output's size)
            env["I"] = np.eye(np.size(d.value))
        jv = symgrad.parse(jv_text)
        got = jv.evaluate(**{k: env[k] for k in jv.variables}).detach().numpy()
        assert np.allclose(got, d.columns[0]), (text, sizes, jv_text)
        u = rng.normal(size=np.shape(d.value))
        jac = forward_derivatives(f, at=at).columns
        j = np.stack([np.ravel(c) for c in jac], axis=1)
        start = 0
        for k in names:
            n = int(np.size(at[k]))
            block = j[:, start:start + n]
            start += n
            e = symgrad.parse(vjp_text[k])
            vals = {**env, "u": u}
            vjp = e.evaluate(**{n_: vals[n_] for n_ in e.variables}).detach().numpy()
            assert np.allclose(np.ravel(vjp), block.T @ np.ravel(u)), (text, k, vjp_text[k])
            if k in jac_text:
                e = symgrad.parse(jac_text[k])
                got = np.asarray(e.evaluate(**{n_: env[n_] for n_ in e.variables}
                                            ).detach().numpy()) if e.variables else None
                want = block.reshape(np.shape(got)) if got is not None else None
                if got is not None:
                    assert np.allclose(got, want), (text, k, jac_text[k])


def test_jacobian_forms_as_a_textbook_writes_them():
    v = {"W": np.ones((2, 3)), "x": np.ones(3), "b": np.ones(2)}
    f = symgrad.parse("tanh(W @ x + b)")
    assert jacobian_form(f, "x", v) == "diag(1 - tanh(W @ x + b) ** 2) @ W"
    assert jacobian_form(symgrad.parse("sin(x)"), "x", {"x": v["x"]}) == "diag(cos(x))"
    assert jacobian_form(symgrad.parse("A @ x"), "x", {"A": np.ones((2, 3)), "x": v["x"]}) == "A"
    assert vjp_forms(symgrad.parse("A @ x"), ["x"], {"A": np.ones((2, 3)), "x": v["x"]}) == {
        "x": "A.T @ f\u0304"}


def test_check_jacobian_verdicts():
    sh = {"W": ("n", "m"), "x": ("m",), "b": ("n",)}
    ok = check_jacobian("tanh(W @ x + b)", {"x": "diag(1 - tanh(W @ x + b)**2) @ W"},
                        shapes=sh, samples=3)
    assert ok.verdict == "correct" and ok.exit_code == 0
    bad = check_jacobian("tanh(W @ x + b)", {"x": "diag(1 - tanh(W @ x + b)) @ W"},
                         shapes=sh, samples=3)
    assert bad.verdict == "wrong" and bad.counterexample["variable"] == "x"
    assert "Jacobian of" in bad.text() and "∂f/∂x" in bad.text()
    diag = check_jacobian("x*x", {"x": "2*x"}, at={"x": [1.0, 2.0]}, samples=2)
    assert diag.verdict == "wrong" and "diag(2*x)" in diag.diagnosis[-1]
    proved = check_jacobian("A @ x", {"x": "A"}, shapes={"A": ("n", "m"), "x": ("m",)},
                            samples=2)
    assert proved.variables["x"]["every_size"] == "proved"
    # right at size 1 only (sum(x)*x has the Jacobian sum(x)*I + outer(x, ones))
    one = check_jacobian("sum(x)*x", {"x": "diag(2*x)"}, at={"x": [1.5]}, samples=2)
    assert one.verdict == "wrong" and "wrong at other sizes" in one.notes[-1]
    with pytest.raises(ValueError, match="not a variable"):
        check_jacobian("x*x", {"z": "1"})


def test_symbolic_work_is_linear_in_the_graph():
    text = "x"
    for _ in range(12):
        text = f"tanh({text})"
    p = symgrad.parse(text).tangent_program()
    assert len(p.lines) == 24 and p.size() < 12 * 8
