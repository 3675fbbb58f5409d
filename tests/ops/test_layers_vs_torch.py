"""embedding and layer_norm against PyTorch 2.13 and finite differences: values, node
names and next functions, saved attributes, first and second derivatives, options
(padding_idx, max_norm, scale_grad_by_freq, weight/bias or not) and errors."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from conftest import check_same, same_outcome

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
W = RNG.normal(size=(5, 3))
IDX = [[1, 2, 1], [4, 0, 1]]
X = RNG.normal(size=(2, 3, 4))
LW, LB = RNG.normal(size=4), RNG.normal(size=4)


def _describe(L, y, leaves):
    fn = y.grad_fn
    names = [fn.name()] + [n.name() if n else None for n, _ in fn.next_functions]
    saved = {a: getattr(fn, a) for a in dir(fn) if a.startswith("_saved_")
             and not hasattr(getattr(fn, a), "shape")}
    tensors = {a: getattr(fn, a) for a in dir(fn) if a.startswith("_saved_")
               and hasattr(getattr(fn, a), "shape")}
    v = L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
    gs = L.autograd.grad(y, leaves, v, create_graph=True)
    graded = [(g * g).sum() for g in gs if g.requires_grad]
    second = L.autograd.grad(sum(graded[1:], graded[0]), leaves, allow_unused=True) \
        if graded else ()
    return [y, names, saved, tensors, list(gs), list(second)]


EMBEDDINGS = {
    "plain": {}, "padding_idx": {"padding_idx": 1}, "negative padding": {"padding_idx": -1},
    "scale_grad_by_freq": {"scale_grad_by_freq": True},
    "max_norm": {"max_norm": 1.5},
}


@pytest.mark.parametrize("name", list(EMBEDDINGS))
def test_embedding(name):
    def run(L):
        w = L.tensor(W, dtype=L.float64, requires_grad=True)
        w_ = w * 1  # a non-leaf, so that max_norm's in-place renorm is allowed
        y = L.nn.functional.embedding(L.tensor(IDX), w_, **EMBEDDINGS[name])
        return _describe(L, y, [w])
    check_same(run, rtol=1e-10, atol=1e-12)


LAYER_NORMS = {
    "no affine": lambda L, x, w, b: L.nn.functional.layer_norm(x, (4,)),
    "weight": lambda L, x, w, b: L.nn.functional.layer_norm(x, (4,), w),
    "weight and bias": lambda L, x, w, b: L.nn.functional.layer_norm(x, [4], w, b, 1e-3),
    "two dims": lambda L, x, w, b: L.nn.functional.layer_norm(x, (3, 4)),
    "module": lambda L, x, w, b: L.nn.LayerNorm(4, dtype=L.float64)(x),
}


@pytest.mark.parametrize("name", list(LAYER_NORMS))
def test_layer_norm(name):
    def run(L):
        x = L.tensor(X, dtype=L.float64, requires_grad=True)
        w = L.tensor(LW, dtype=L.float64, requires_grad=True)
        b = L.tensor(LB, dtype=L.float64, requires_grad=True)
        y = LAYER_NORMS[name](L, x, w, b)
        leaves = [n.variable for n, _ in y.grad_fn.next_functions
                  if n is not None and hasattr(n, "variable")]
        used = [x] + [t for t in (w,) if any(t is v for v in leaves)]
        # (the bias's gradient is a sum of the incoming gradient: PyTorch's fused backward
        # marks it as requiring grad under create_graph, symgrad's does not; its value:)
        db = L.autograd.grad(y, b, L.ones_like(y), retain_graph=True)[0] \
            if any(b is v for v in leaves) else None
        return _describe(L, y, used) + [db]
    check_same(run, rtol=1e-9, atol=1e-10)


def test_layer_norm_finite_differences():
    """Second derivatives of a layer norm (through its recomputed statistics)."""
    x = symgrad.tensor(X, dtype=symgrad.float64, requires_grad=True)
    w = symgrad.tensor(LW, dtype=symgrad.float64, requires_grad=True)
    assert symgrad.autograd.gradcheck(
        lambda a, b: symgrad.nn.functional.layer_norm(a, (4,), b), (x, w))
    assert symgrad.autograd.gradgradcheck(
        lambda a, b: symgrad.nn.functional.layer_norm(a, (4,), b), (x, w))
    e = symgrad.tensor(W, dtype=symgrad.float64, requires_grad=True)
    assert symgrad.autograd.gradgradcheck(
        lambda a: symgrad.nn.functional.embedding(symgrad.tensor(IDX), a, padding_idx=2), (e,))


def test_modules():
    def run(L):
        L.manual_seed(0)
        emb = L.nn.Embedding(6, 3, padding_idx=2)
        ln = L.nn.LayerNorm((3,), elementwise_affine=False)
        pre = L.nn.Embedding.from_pretrained(L.tensor(W, dtype=L.float32))
        return [repr(emb), emb.weight[2], tuple(emb.weight.shape), repr(ln),
                [n for n, _ in ln.named_parameters()], repr(pre), pre.weight.requires_grad,
                repr(L.nn.Embedding(5, 2, max_norm=1.0, scale_grad_by_freq=True)),
                repr(L.nn.LayerNorm(4, bias=False)), str(emb(L.tensor([[0, 2]])).shape)]
    check_same(run)


@pytest.mark.parametrize("bad", [
    lambda L: L.nn.functional.embedding(L.tensor([1.0]), L.ones(3, 2)),
    lambda L: L.nn.functional.embedding(L.tensor([5]), L.ones(3, 2)),
    lambda L: L.nn.functional.embedding(L.tensor([1]), L.ones(3, 2), padding_idx=3),
    lambda L: L.nn.functional.layer_norm(L.ones(2, 3, 4), (5,)),
    lambda L: L.nn.functional.layer_norm(L.ones(2, 3, 4), 4),
    lambda L: L.nn.Embedding(3, 2, padding_idx=5),
])
def test_errors(bad):
    same_outcome(bad)


@pytest.mark.parametrize("pad, value", [((1, 2), None), ((1, -1, 2, 0), 3.0),
                                        ((0, 0, -1, 1), None), ((1, 1, 1, 1), -2.5)])
def test_pad(pad, value):
    def run(L):
        x = L.tensor(X[0], dtype=L.float64, requires_grad=True)
        y = L.nn.functional.pad(x, pad) if value is None else \
            L.nn.functional.pad(x, pad, value=value)
        return _describe(L, y, [x])
    check_same(run)


@pytest.mark.parametrize("bad", [
    lambda L: L.nn.functional.pad(L.ones(2, 3), (1, 2, 3)),
    lambda L: L.nn.functional.pad(L.ones(3), (1, 1, 1, 1)),
])
def test_pad_errors(bad):
    same_outcome(bad)


@pytest.mark.parametrize("lead", [(4,), (2, 3), ()])
def test_bilinear_values_and_gradients(lead):
    def run(L):
        rng = np.random.default_rng(5)
        x1 = L.tensor(rng.normal(size=lead + (2,)), dtype=L.float64, requires_grad=True)
        x2 = L.tensor(rng.normal(size=lead + (3,)), dtype=L.float64, requires_grad=True)
        w = L.tensor(rng.normal(size=(5, 2, 3)), dtype=L.float64, requires_grad=True)
        b = L.tensor(rng.normal(size=5), dtype=L.float64, requires_grad=True)
        y = L.nn.functional.bilinear(x1, x2, w, b)
        gs = L.autograd.grad((y * y).sum(), (x1, x2, w, b), create_graph=True)
        hs = L.autograd.grad(sum(g.sum() for g in gs), (x1, x2, w))
        return [y.detach(), [g.detach() for g in gs], list(hs),
                repr(L.nn.Bilinear(2, 3, 4, bias=False))]
    check_same(run, rtol=1e-10, atol=1e-12)
