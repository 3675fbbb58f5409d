"""``symgrad.nn.functional`` against PyTorch 2.13: losses, linear, softmax, dropout,
one_hot, normalize — values, graphs (node names, ``_saved_*``), gradients, errors — and
``nll_loss`` (whose class-index target the op-table sampler cannot make) against finite
differences and second derivatives."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import symgrad  # noqa: E402
from test_ops_against_torch import Leaf, compare, const  # noqa: E402

X = Leaf([[-1.5, 0.5, 2.0], [0.3, -0.2, 1.0]])
T = const([[1.0, 0.0, 2.0], [0.5, 0.5, 0.5]])
B = const([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
P = const([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
Y = const([2, 0], "int64")
W3 = const([1.0, 2.0, 3.0])
WB = Leaf(np.linspace(-1.0, 1.5, 12).reshape(2, 3, 2).tolist())  # bilinear's (out, in1, in2)


def F(L):
    return L.nn.functional


CASES = {
    "mse": (lambda L, x, t: F(L).mse_loss(x, t), X, T),
    "mse-sum": (lambda L, x, t: F(L).mse_loss(x, t, reduction="sum"), X, T),
    "mse-none": (lambda L, x, t: F(L).mse_loss(x, t, reduction="none"), X, T),
    "mse-both-grad": (lambda L, x, t: F(L).mse_loss(x, t * 2), X, X),
    "mse-broadcast": (lambda L, x, t: F(L).mse_loss(x, t[0]), X, T),
    "mse-legacy": (lambda L, x, t: F(L).mse_loss(x, t, size_average=False), X, T),
    "l1": (lambda L, x, t: F(L).l1_loss(x, t), X, T),
    "l1-none": (lambda L, x, t: F(L).l1_loss(x, t, reduction="none"), X, T),
    "smooth_l1": (lambda L, x, t: F(L).smooth_l1_loss(x, t, beta=0.7), X, T),
    "smooth_l1-0": (lambda L, x, t: F(L).smooth_l1_loss(x, t, beta=0.0), X, T),
    "huber": (lambda L, x, t: F(L).huber_loss(x, t, delta=0.7, reduction="sum"), X, T),
    "bce": (lambda L, x, t: F(L).binary_cross_entropy(x.sigmoid(), t), X, B),
    "bce-weight": (lambda L, x, t: F(L).binary_cross_entropy(
        x.sigmoid(), t, weight=L.tensor([1.0, 2.0, 3.0]), reduction="none"), X, B),
    "bce-out-of-range": (lambda L, x, t: F(L).binary_cross_entropy(x, t), X, B),
    "bce-size": (lambda L, x, t: F(L).binary_cross_entropy(x.sigmoid(), t[0]), X, B),
    "bce-logits": (lambda L, x, t: F(L).binary_cross_entropy_with_logits(x, t), X, B),
    "bce-logits-pos": (lambda L, x, t: F(L).binary_cross_entropy_with_logits(
        x, t, pos_weight=L.tensor([1.0, 2.0, 3.0]), weight=L.tensor([0.5, 1.0, 2.0])), X, B),
    "bce-logits-size": (lambda L, x, t: F(L).binary_cross_entropy_with_logits(x, t[0]), X, B),
    "nll": (lambda L, x, y: F(L).nll_loss(x, y), X, Y),
    "nll-weight": (lambda L, x, y: F(L).nll_loss(x, y, weight=L.tensor([1.0, 2.0, 3.0])), X, Y),
    "nll-sum": (lambda L, x, y: F(L).nll_loss(x, y, reduction="sum"), X, Y),
    "nll-none": (lambda L, x, y: F(L).nll_loss(x, y, reduction="none"), X, Y),
    "nll-ignore": (lambda L, x, y: F(L).nll_loss(x, y * 0 - 100 + y * 51), X, Y),
    "nll-one-sample": (lambda L, x, y: F(L).nll_loss(x[0], y[0]), X, Y),
    "nll-out-of-bounds": (lambda L, x, y: F(L).nll_loss(x, y + 1), X, Y),
    "nll-float-target": (lambda L, x, y: F(L).nll_loss(x, y * 1.0), X, Y),
    "nll-batch": (lambda L, x, y: F(L).nll_loss(x, y[:1]), X, Y),
    "ce": (lambda L, x, y: F(L).cross_entropy(x, y), X, Y),
    "ce-sum": (lambda L, x, y: F(L).cross_entropy(x, y, reduction="sum"), X, Y),
    "ce-none": (lambda L, x, y: F(L).cross_entropy(x, y, reduction="none"), X, Y),
    "ce-weight": (lambda L, x, y: F(L).cross_entropy(x, y, weight=L.tensor([1.0, 2.0, 3.0])),
                  X, Y),
    "ce-smoothing": (lambda L, x, y: F(L).cross_entropy(x, y, label_smoothing=0.1), X, Y),
    "ce-smoothing-ignore": (lambda L, x, y: F(L).cross_entropy(
        x, y * 0 - 100 + y * 51, label_smoothing=0.2), X, Y),
    "ce-probabilities": (lambda L, x, p: F(L).cross_entropy(x, p), X, P),
    "ce-probabilities-smoothing": (lambda L, x, p: F(L).cross_entropy(
        x, p, label_smoothing=0.2, reduction="sum"), X, P),
    "ce-one-sample": (lambda L, x, y: F(L).cross_entropy(x[1], y[1]), X, Y),
    "kl-batchmean": (lambda L, x, p: F(L).kl_div(x.log_softmax(1), p, reduction="batchmean"),
                     X, P),
    "kl-log-target": (lambda L, x, p: F(L).kl_div(x.log_softmax(1), (p + 0.1).log(),
                                                  reduction="sum", log_target=True), X, P),
    "bad-reduction": (lambda L, x, t: F(L).mse_loss(x, t, reduction="avg"), X, T),
    "linear": (lambda L, x, w: F(L).linear(x, w.t(), w[0]), X, Leaf([[1.0, 0.5], [2.0, -1.0],
                                                                     [0.0, 3.0]])),
    "linear-no-bias": (lambda L, x, w: F(L).linear(x, w.t()), X, Leaf([[1.0, 0.5], [2.0, -1.0],
                                                                       [0.0, 3.0]])),
    "linear-vector": (lambda L, x, w: F(L).linear(x[0], w.t(), w[1]), X,
                      Leaf([[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]])),
    "linear-3d": (lambda L, x, w: F(L).linear(x.view(1, 2, 3), w.t(), w[2]), X,
                  Leaf([[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]])),
    "bilinear": (lambda L, x, w: F(L).bilinear(x, x[:, :2] * 2, w, w[0, 0]), X, WB),
    "bilinear-1d": (lambda L, x, w: F(L).bilinear(x[0], x[1, :2], w), X, WB),
    "bilinear-3d": (lambda L, x, w: F(L).bilinear(x.view(2, 1, 3), x[:, None, 1:], w[:, :, :2]),
                    X, WB),
    "softmax": (lambda L, x, t: F(L).softmax(x, dim=1) * t, X, T),
    "log_softmax": (lambda L, x, t: F(L).log_softmax(x, 0) * t, X, T),
    "normalize": (lambda L, x, t: F(L).normalize(x, dim=1), X, T),
    "normalize-p1": (lambda L, x, t: F(L).normalize(x, p=1, dim=0), X, T),
    "dropout-eval": (lambda L, x, t: F(L).dropout(x, 0.5, training=False) * t, X, T),
    "dropout-p0": (lambda L, x, t: F(L).dropout(x, 0.0) * t, X, T),
    "one_hot": (lambda L, x, y: F(L).one_hot(y, 4), X, Y),
    "one_hot-infer": (lambda L, x, y: F(L).one_hot(y), X, Y),
    "one_hot-small": (lambda L, x, y: F(L).one_hot(y, 2), X, Y),
    "one_hot-negative": (lambda L, x, y: F(L).one_hot(y - 1), X, Y),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, *leaves = CASES[name]
    compare(fn, *leaves)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_gradients(reduction, weighted):
    """nll_loss's first and second derivatives against finite differences."""
    x = symgrad.tensor(np.random.default_rng(0).normal(size=(4, 3)), dtype=symgrad.float64,
                       requires_grad=True)
    y = symgrad.tensor([2, 0, 1, -100])
    w = symgrad.tensor([0.5, 2.0, 1.5], dtype=symgrad.float64) if weighted else None

    def f(x):
        return symgrad.nn.functional.nll_loss(x.log_softmax(1), y, weight=w,
                                              reduction=reduction)
    assert symgrad.autograd.gradcheck(f, (x,))
    assert symgrad.autograd.gradgradcheck(f, (x,))


def test_dropout_keeps_the_expectation():
    symgrad.manual_seed(0)
    x = symgrad.ones(20000, requires_grad=True)
    y = symgrad.nn.functional.dropout(x, 0.25)
    kept = (y.detach() != 0).float().mean().item()
    values = np.unique(y.detach().numpy())
    assert abs(kept - 0.75) < 0.02 and np.allclose(values, [0.0, 1 / 0.75])
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), y.detach().numpy())
    assert y.grad_fn.name() == "MulBackward0"


def _double(lib, fn, leaves):
    """The first gradients with create_graph (their graphs, with saved values, as
    ``graph_desc`` describes them) and the gradients of their sum of squares."""
    from test_ops_against_torch import graph_desc
    made = [leaf.make(lib) for leaf in leaves]
    try:
        out = fn(lib, *made)
    except Exception as e:  # noqa: BLE001 - the error is compared (first in the forward)
        return {"raises": (type(e).__name__, str(e))}
    wrt = [m for m in made if getattr(m, "requires_grad", False)]
    g = lib.tensor(np.linspace(0.5, 2.0, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
    firsts = lib.autograd.grad(out, wrt, g, create_graph=True, allow_unused=True)
    report = {"graphs": [None if f is None else graph_desc(f.grad_fn, made) for f in firsts]}
    total = sum((f * f).sum() for f in firsts if f is not None and f.requires_grad)
    if getattr(total, "requires_grad", False):
        seconds = lib.autograd.grad(total, wrt, allow_unused=True)
        # (PyTorch's zero second derivatives can be ZeroTensors: numpy(force=True))
        report["second"] = [None if h is None else np.round(
            h.detach().numpy(force=True) if lib is torch else h.detach().numpy(), 9).tolist()
            for h in seconds]
    return report


@pytest.mark.parametrize("name", sorted(n for n in CASES if not n.startswith(
    ("one_hot", "dropout"))))
def test_double_backward_matches_torch(name):
    # Second derivatives of the losses and layers: the first gradients' graphs are
    # PyTorch's (MseLossBackwardBackward0, NllLossBackwardBackward0, ... with their saved
    # values) and the second derivatives equal PyTorch's.
    fn, *leaves = CASES[name]
    s, t = _double(symgrad, fn, leaves), _double(torch, fn, leaves)
    assert s == t, f"\nsymgrad {s}\ntorch   {t}"
