"""The Matrix Cookbook's gradient identities (Petersen & Pedersen, 2012; equation numbers
of that edition), and those of least squares, logistic regression, softmax cross-entropy
and one dense layer: the vector form that ``symgrad diff`` prints evaluates to the
identity at several sizes, is proved equal to it in the matrix algebra (for every size),
and a typical mistake (a missing transpose, ``2*A@x`` for a non-symmetric ``A``, the
outer product the wrong way round, a missing factor) is refuted at every size tried.

The oracle is the identity as the book prints it, evaluated with numpy through the
expression language, and reverse mode on the function itself.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from symgrad.symbolic.vectors import proved_equal

# (equation, function, variable, dimensions, identity, typical mistake)
COOKBOOK = [
    ("49", "det(X)", "X", {"X": "nn"}, "det(X) * inverse(X).T", "det(X) * inverse(X)"),
    ("51", "det(A @ X @ B)", "X", {"A": "nn", "X": "nn", "B": "nn"},
     "det(A @ X @ B) * inverse(X).T", "det(A @ X @ B) * inverse(X)"),
    ("55", "log(det(X.T @ X))", "X", {"X": "kn"}, "2 * X @ inverse(X.T @ X)",
     "X @ inverse(X.T @ X)"),
    ("57", "log(abs(det(X)))", "X", {"X": "nn"}, "inverse(X).T", "inverse(X)"),
    ("57 logdet", "logdet(X)", "X", {"X": "nn"}, "inverse(X.T)", "inverse(X)"),
    ("58 k=2", "det(X @ X)", "X", {"X": "nn"}, "2 * det(X @ X) * inverse(X).T",
     "2 * det(X @ X) * inverse(X)"),
    ("59-60", "sum(C * inverse(X))", "X", {"C": "nn", "X": "nn"},
     "-inverse(X).T @ C @ inverse(X).T", "-inverse(X) @ C @ inverse(X)"),
    ("61", "a @ inverse(X) @ b", "X", {"a": "n", "X": "nn", "b": "n"},
     "-inverse(X).T @ outer(a, b) @ inverse(X).T", "-inverse(X) @ outer(a, b) @ inverse(X)"),
    ("62", "det(inverse(X))", "X", {"X": "nn"}, "-det(inverse(X)) * inverse(X).T",
     "det(inverse(X)) * inverse(X).T"),
    ("63", "trace(A @ inverse(X) @ B)", "X", {"A": "mn", "X": "nn", "B": "nm"},
     "-(inverse(X) @ B @ A @ inverse(X)).T", "-inverse(X) @ B @ A @ inverse(X)"),
    ("69", "dot(x, a)", "x", {"x": "n", "a": "n"}, "a", "x"),
    ("70", "a @ X @ b", "X", {"a": "n", "X": "nm", "b": "m"}, "outer(a, b)", "outer(b, a)"),
    ("71", "a @ X.T @ b", "X", {"a": "m", "X": "nm", "b": "n"}, "outer(b, a)",
     "outer(a, b)"),
    ("72", "a @ X @ a", "X", {"a": "n", "X": "nn"}, "outer(a, a)", "2 * outer(a, a)"),
    ("78", "b @ X.T @ X @ c", "X", {"b": "m", "X": "nm", "c": "m"},
     "X @ (outer(b, c) + outer(c, b))", "2 * X @ outer(b, c)"),
    ("79", "(B @ x + b) @ C @ (D @ x + d)", "x",
     {"B": "kn", "x": "n", "b": "k", "C": "kl", "D": "ln", "d": "l"},
     "B.T @ C @ (D @ x + d) + D.T @ C.T @ (B @ x + b)",
     "B.T @ C @ (D @ x + d) + D.T @ C @ (B @ x + b)"),
    ("81", "x @ B @ x", "x", {"x": "n", "B": "nn"}, "(B + B.T) @ x", "2 * B @ x"),
    ("82", "b @ X.T @ D @ X @ c", "X", {"b": "m", "X": "nm", "D": "nn", "c": "m"},
     "D.T @ X @ outer(b, c) + D @ X @ outer(c, b)",
     "D @ X @ outer(b, c) + D.T @ X @ outer(c, b)"),
    ("83", "(X @ b + c) @ D @ (X @ b + c)", "X", {"X": "nm", "b": "m", "c": "n", "D": "nn"},
     "(D + D.T) @ outer(X @ b + c, b)", "2 * D @ outer(X @ b + c, b)"),
    ("101", "trace(X @ A)", "X", {"X": "nm", "A": "mn"}, "A.T", "A"),
    ("102", "trace(A @ X @ B)", "X", {"A": "kn", "X": "nm", "B": "mk"}, "A.T @ B.T",
     "A @ B"),
    ("103", "trace(A @ X.T @ B)", "X", {"A": "km", "X": "nm", "B": "nk"}, "B @ A",
     "A.T @ B.T"),
    ("104", "trace(X.T @ A)", "X", {"X": "nm", "A": "nm"}, "A", "2 * A"),
    ("105", "trace(A @ X.T)", "X", {"A": "nm", "X": "nm"}, "A", "-A"),
    ("111", "trace(X @ X)", "X", {"X": "nn"}, "2 * X.T", "2 * X"),
    ("112", "trace(X @ X @ B)", "X", {"X": "nn", "B": "nn"}, "(X @ B + B @ X).T",
     "X @ B + B @ X"),
    ("113", "trace(X.T @ B @ X)", "X", {"X": "nm", "B": "nn"}, "B @ X + B.T @ X",
     "2 * B @ X"),
    ("114", "trace(B @ X @ X.T)", "X", {"B": "nn", "X": "nm"}, "B @ X + B.T @ X",
     "2 * B @ X"),
    ("115", "trace(X @ X.T @ B)", "X", {"X": "nm", "B": "nn"}, "B @ X + B.T @ X",
     "2 * B.T @ X"),
    ("116", "trace(X @ B @ X.T)", "X", {"X": "nm", "B": "mm"}, "X @ B.T + X @ B",
     "2 * X @ B"),
    ("117", "trace(B @ X.T @ X)", "X", {"B": "mm", "X": "nm"}, "X @ B.T + X @ B",
     "2 * X @ B.T"),
    ("least squares, x", "sum((A @ x - b)**2)", "x", {"A": "nm", "x": "m", "b": "n"},
     "2 * A.T @ (A @ x - b)", "2 * A @ (A @ x - b)"),
    ("least squares, A", "sum((A @ x - b)**2)", "A", {"A": "nm", "x": "m", "b": "n"},
     "2 * outer(A @ x - b, x)", "2 * outer(x, A @ x - b)"),
    ("logistic regression", "-sum(log(sigmoid(y * (X @ w))))", "w",
     {"y": "n", "X": "nm", "w": "m"}, "-X.T @ (y * (1 - sigmoid(y * (X @ w))))",
     "-X.T @ (y * sigmoid(y * (X @ w)))"),
    ("softmax cross-entropy, W", "-sum(y * log_softmax(W @ x + b))", "W",
     {"y": "k", "W": "kn", "x": "n", "b": "k"},
     "outer(sum(y) * softmax(W @ x + b) - y, x)", "outer(softmax(W @ x + b) - y, y)"),
    ("softmax cross-entropy, b", "-sum(y * log_softmax(W @ x + b))", "b",
     {"y": "k", "W": "kn", "x": "n", "b": "k"},
     "sum(y) * softmax(W @ x + b) - y", "softmax(W @ x + b)"),
    ("dense layer, W", "v @ tanh(W @ x + b)", "W", {"v": "k", "W": "kn", "x": "n", "b": "k"},
     "outer(v * (1 - tanh(W @ x + b)**2), x)", "outer(v * (1 - tanh(W @ x + b)), x)"),
    ("dense layer, x", "v @ tanh(W @ x + b)", "x", {"v": "k", "W": "kn", "x": "n", "b": "k"},
     "W.T @ (v * (1 - tanh(W @ x + b)**2))", "W @ (v * (1 - tanh(W @ x + b)**2))"),
]

IDS = [c[0] for c in COOKBOOK]
#: Sizes of the named dimensions: a base, and others where the shapes differ.
#: (k > n everywhere: X of k x n has full column rank in equation 55)
SIZES = [dict(n=3, m=2, k=4, l=5), dict(n=2, m=4, k=3, l=2), dict(n=4, m=3, k=5, l=4)]


def values(dims: dict, sizes: dict, seed: int) -> dict:
    """Random values; square matrices well conditioned (A + n I: positive determinant)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, d in dims.items():
        shape = tuple(sizes[c] for c in d)
        v = rng.uniform(-1, 1, size=shape)
        if len(shape) == 2 and shape[0] == shape[1]:
            v += shape[0] * np.eye(shape[0])
        out[name] = v
    return out


def evaluate(text: str, point: dict) -> np.ndarray:
    e = symgrad.parse(text)
    return np.asarray(e.evaluate(**{k: point[k] for k in e.variables}).detach().numpy())


@pytest.mark.parametrize("eq,f,var,dims,identity,mistake", COOKBOOK, ids=IDS)
def test_vector_form_is_the_identity_at_several_sizes(eq, f, var, dims, identity, mistake):
    e = symgrad.parse(f)
    form = e.vector_gradient(var, **values(dims, SIZES[0], 0))
    for seed, sizes in enumerate(SIZES):
        point = values(dims, sizes, seed + 1)
        true = e.gradient(**point)[var]
        np.testing.assert_allclose(np.broadcast_to(evaluate(form, point), true.shape), true,
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(evaluate(identity, point), true, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("eq,f,var,dims,identity,mistake", COOKBOOK, ids=IDS)
def test_identity_is_proved_for_every_size(eq, f, var, dims, identity, mistake):
    e = symgrad.parse(f)
    point = values(dims, SIZES[0], 0)
    labels = {k: tuple(d) for k, d in dims.items()}
    assert proved_equal(e, var, symgrad.parse(identity), point, labels)
    assert not proved_equal(e, var, symgrad.parse(mistake), point, labels)


@pytest.mark.parametrize("eq,f,var,dims,identity,mistake", COOKBOOK, ids=IDS)
def test_mistake_is_refuted_at_every_size(eq, f, var, dims, identity, mistake):
    """At every size tried the mistake has the wrong values or cannot even be evaluated
    (a missing transpose of a non-square matrix)."""
    e = symgrad.parse(f)
    for seed, sizes in enumerate(SIZES):
        point = values(dims, sizes, seed + 10)
        true = e.gradient(**point)[var]
        try:
            got = evaluate(mistake, point)
        except ValueError:  # EvaluationError: the shapes of the mistake do not fit
            continue
        assert got.shape != true.shape or not np.allclose(got, true, rtol=1e-6)


CHECKED = ["70", "81", "102", "113", "least squares, x", "least squares, A",
           "softmax cross-entropy, W", "57"]


@pytest.mark.parametrize("eq,f,var,dims,identity,mistake",
                         [c for c in COOKBOOK if c[0] in CHECKED], ids=CHECKED)
def test_symgrad_check_gives_the_verdicts(eq, f, var, dims, identity, mistake):
    """The checker with symbolic sizes (--shape): the identity is correct for every size,
    the mistake wrong, with a counterexample."""
    shapes = {k: tuple(d) for k, d in dims.items()}  # (named sizes: n, m)
    r = symgrad.check(f, {var: identity}, shapes=shapes, samples=3)
    assert r.verdict == "correct", r.text()
    assert r.variables[var]["every_size"] == "proved"
    r = symgrad.check(f, {var: mistake}, shapes=shapes, samples=3)
    assert r.verdict == "wrong", r.text()
    assert r.counterexample is not None or any("wrong shape" in d for d in r.diagnosis)
    assert r.variables[var]["true_vector"] == symgrad.parse(f).vector_gradient(
        var, **{k: np.ones(s) for k, s in
                symgrad.symbolic.shapes.resolve_shapes(shapes)[0].items()})


def test_the_identity_matrix_has_no_vector_form():
    """d trace(X)/dX = I (equation 100): the expression language has no identity matrix,
    so the gradient is given per element, and says why."""
    from symgrad.symbolic.vectors import NoVectorForm
    with pytest.raises(NoVectorForm, match="identity"):
        symgrad.parse("trace(X)").vector_gradient("X", X=np.eye(3))
