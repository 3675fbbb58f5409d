"""Matrix functions against PyTorch 2.13 and finite differences: trace, det, logdet,
inverse, linalg.solve, outer, diag, linalg.norm — values, node names, saved attributes,
first and second derivatives, errors."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from conftest import check_same, same_outcome

torch = pytest.importorskip("torch")

A = [[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 1.0, 4.0]]
R = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]
V = [1.0, -2.0, 0.5]

CALLS = {
    "trace": lambda L, a, r, v: a.trace(), "trace rect": lambda L, a, r, v: L.trace(r),
    "det": lambda L, a, r, v: a.det(), "linalg.det": lambda L, a, r, v: L.linalg.det(a * 2),
    "logdet": lambda L, a, r, v: L.logdet(a), "inverse": lambda L, a, r, v: a.inverse(),
    "slogdet": lambda L, a, r, v: L.linalg.slogdet(a).logabsdet,
    "logdet negative": lambda L, a, r, v: (a * L.tensor([[-1.0], [1.0], [1.0]],
                                                        dtype=L.float64)).logdet(),
    "linalg.inv": lambda L, a, r, v: L.linalg.inv(a),
    "solve vector": lambda L, a, r, v: L.linalg.solve(a, v),
    "solve matrix": lambda L, a, r, v: L.linalg.solve(a, r.t()),
    "outer": lambda L, a, r, v: L.outer(v, v * 2), "outer method": lambda L, a, r, v: v.outer(v),
    "diag of vector": lambda L, a, r, v: L.diag(v), "diag offset": lambda L, a, r, v: v.diag(1),
    "diag of matrix": lambda L, a, r, v: L.diag(a), "diag of rect": lambda L, a, r, v: r.diag(),
    "norm": lambda L, a, r, v: L.linalg.norm(a), "norm fro": lambda L, a, r, v: L.linalg.norm(r, "fro"),
    "norm vector": lambda L, a, r, v: L.linalg.norm(v, 3),
    "norm dim": lambda L, a, r, v: L.linalg.norm(r, dim=1),
    "vector_norm": lambda L, a, r, v: L.linalg.vector_norm(r, 3, dim=(0, 1)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_against_torch(name):
    def run(L):
        a, r, v = (L.tensor(x, dtype=L.float64, requires_grad=True) for x in (A, R, V))
        y = CALLS[name](L, a, r, v)
        fn = y.grad_fn
        saved = {k: getattr(fn, k) for k in ("_saved_self_sym_sizes", "_saved_dim1",
                                              "_saved_dim2", "_saved_offset", "_saved_left",
                                              "_saved_dim", "_saved_ord", "_saved_keepdim")
                 if hasattr(fn, k)}
        # (values and dtypes: the sign of slogdet is an output with a graph in PyTorch, a
        # number here)
        tensors = {k: getattr(fn, k).detach() for k in ("_saved_LU", "_saved_pivots",
                                                         "_saved_inverse", "_saved_sign",
                                                         "_saved_condition")
                   if hasattr(fn, k)}
        w = L.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
        leaves = [a, r, v]
        gs = L.autograd.grad(y, leaves, w, create_graph=True, allow_unused=True)
        used = [(x, g) for x, g in zip(leaves, gs) if g is not None and g.requires_grad]
        second = L.autograd.grad(sum((g * g).sum() for _, g in used), [x for x, _ in used]) \
            if used else []
        names = [fn.name()] + [n.name() if n else None for n, _ in fn.next_functions]
        return [y, names, saved, tensors, [g for g in gs], list(second)]
    check_same(run, rtol=1e-9, atol=1e-10)


def test_gradgradcheck():
    a = symgrad.tensor(A, dtype=symgrad.float64, requires_grad=True)
    b = symgrad.tensor(V, dtype=symgrad.float64, requires_grad=True)
    for f, args in [(symgrad.det, (a,)), (symgrad.inverse, (a,)), (symgrad.logdet, (a,)),
                    (symgrad.linalg.solve, (a, b)), (symgrad.trace, (a,)),
                    (symgrad.diag, (a,)), (symgrad.diag, (b,))]:
        assert symgrad.autograd.gradcheck(f, args), f
        assert symgrad.autograd.gradgradcheck(f, args), f


ERRORS = [
    lambda L: L.ones(2, 3).det(), lambda L: L.ones(3).det(), lambda L: L.ones(2, 3).inverse(),
    lambda L: L.ones(3).trace(), lambda L: L.ones(2, 2, dtype=L.int64).det(),
    lambda L: L.linalg.solve(L.ones(2, 2), L.ones(3)),
    lambda L: L.tensor([[1.0, 2.0], [2.0, 4.0]]).inverse(),
    lambda L: L.diag(L.ones(2, 2, 2)), lambda L: L.outer(L.ones(2), L.ones(2, 2)),
]


@pytest.mark.parametrize("scenario", ERRORS)
def test_errors(scenario):
    same_outcome(scenario)


def test_logdet_of_negative_and_singular():
    check_same(lambda L: [L.tensor([[-1.0, 0.0], [0.0, 1.0]]).logdet(),
                          L.tensor([[1.0, 2.0], [2.0, 4.0]]).logdet()])


def _slogdet_story(L):
    """slogdet's two outputs share one LinalgSlogdetBackward0 node (sign 0, logabsdet
    1); a gradient reaching only the sign reaches no input; under create_graph the
    gradient is PyTorch's solve (LinalgSolveExBackward0)."""
    A = L.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=L.float64, requires_grad=True)
    out = []
    r = L.linalg.slogdet(A)
    out += [repr(r), repr(L.slogdet(A)), repr(A.slogdet()), r.sign.grad_fn is r.logabsdet.grad_fn,
            (r.sign.output_nr, r.logabsdet.output_nr), type(r.sign.grad_fn).__name__]
    r.sign.sum().backward()
    out.append(A.grad)
    try:
        r.logabsdet.backward()
    except RuntimeError as e:
        out.append(str(e)[:60])
    s, l = L.linalg.slogdet(A)
    (s * l).backward()
    out.append(A.grad.clone())
    s, l = L.linalg.slogdet(A * 2)
    out.append(L.autograd.grad(s, A, allow_unused=True))
    s, l = L.linalg.slogdet(A * 2)
    out.append(L.autograd.grad([s, l], A))
    s, l = L.linalg.slogdet(A)
    s.retain_grad()
    seen = []
    l.register_hook(lambda g: seen.append(g.item()))
    l.backward()
    out += [s.grad, seen]
    g, = L.autograd.grad(L.linalg.slogdet(A).logabsdet * 3, A, create_graph=True)
    fn = g.grad_fn
    out += [g, type(fn).__name__, [type(n).__name__ for n, _ in fn.next_functions]]
    out.append(L.autograd.grad(g.sum(), A))
    return out


def test_slogdet_two_outputs_as_torch():
    check_same(_slogdet_story, rtol=1e-12, atol=1e-12)
