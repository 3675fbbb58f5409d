"""Hessians in matrix form (``x.T @ A @ x`` -> ``A + A.T``): the form, evaluated with ``I``
the identity, equals the Hessian by reverse mode twice at two sizes."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from symgrad.autograd.functional import hessian
from symgrad.symbolic.hessians import hessian_text
from symgrad.symbolic.vectors import NoVectorForm

# (function, variable, dimensions, the form symgrad prints, or None to check values only)
CASES = [
    ("x.T @ A @ x", "x", {"x": "n", "A": "nn"}, "A + A.T"),
    ("sum((A @ x - b)**2)", "x", {"A": "mn", "x": "n", "b": "m"}, "2 * A.T @ A"),
    ("sum(x**2)", "x", {"x": "n"}, "2 * I"),
    ("dot(x, x) * y", "x", {"x": "n", "y": ""}, "2 * y * I"),
    ("sum(exp(x))", "x", {"x": "n"}, "diag(exp(x))"),
    ("sin(dot(a, x))", "x", {"a": "n", "x": "n"}, "-sin(dot(a, x)) * outer(a, a)"),
    ("log(sum(exp(x)))", "x", {"x": "n"}, None),
    ("-sum(log(sigmoid(y * (X @ w))))", "w", {"y": "m", "X": "mn", "w": "n"}, None),
    ("(B @ x + b) @ C @ (D @ x + d)", "x",
     {"B": "kn", "x": "n", "b": "k", "C": "kl", "D": "ln", "d": "l"}, None),
]
SIZES = [dict(n=3, m=4, k=2, l=3), dict(n=2, m=3, k=4, l=2)]


def point(dims, sizes, seed):
    rng = np.random.default_rng(seed)
    return {k: rng.uniform(-1, 1, size=tuple(sizes[c] for c in d)) for k, d in dims.items()}


@pytest.mark.parametrize("f,var,dims,form", CASES, ids=[c[0] for c in CASES])
def test_matrix_hessian_equals_reverse_mode_twice(f, var, dims, form):
    e = symgrad.parse(f)
    text = hessian_text(e, var, var, point(dims, SIZES[0], 0))
    if form is not None:
        assert text == form
    h = symgrad.parse(text)
    for seed, sizes in enumerate(SIZES):
        values = point(dims, sizes, seed + 1)
        leaves = e.leaves(**values)
        want = hessian(lambda t: e.evaluate({**leaves, var: t}), leaves[var]).detach().numpy()
        env = {**values, "I": np.eye(np.size(values[var]))}
        got = h.evaluate(**{k: env[k] for k in h.variables}).detach().numpy()
        np.testing.assert_allclose(np.broadcast_to(got, want.shape), want, rtol=1e-9,
                                   atol=1e-12)


def test_matrix_variables_have_no_matrix_hessian():
    with pytest.raises(NoVectorForm, match="four dimensions"):
        hessian_text(symgrad.parse("sum((A @ x)**2)"), "A", "A",
                     {"A": np.ones((2, 2)), "x": np.ones(2)})


def test_diff_prints_the_hessian_in_matrix_form():
    from click.testing import CliRunner
    from symgrad_cli.main import cli
    r = CliRunner().invoke(cli, ["diff", "x.T @ A @ x", "--order", "2", "--wrt", "x",
                                 "--shape", "x=n", "--shape", "A=n,n"])
    assert r.exit_code == 0, r.output
    assert "∂²f/∂x∂x = A + A.T" in r.output and "Hessian over" not in r.output
