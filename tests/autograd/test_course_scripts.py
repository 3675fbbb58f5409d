"""What outside course scripts exercise, written here in our own words and run in both
libraries on the same numbers: makemore part 4's hand-written backward pass of an MLP with
batch norm and cross-entropy (``t[range(n), y]``, ``retain_grad`` on every intermediate,
``keepdims``, ``Generator``, ``multinomial``), PyTorch's examples_nn scripts (Sequential,
Flatten, MSELoss(sum), manual updates under no_grad, optim), and a dynamic module."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import check_same

torch = pytest.importorskip("torch")


def ninja(L):
    rng = np.random.default_rng(7)
    n, vocab, emb_dim, block, hidden = 8, 27, 4, 3, 16
    X = L.tensor(rng.integers(0, vocab, (n, block)))
    Y = L.tensor(rng.integers(0, vocab, n))
    f = L.float32
    C = L.tensor(rng.normal(size=(vocab, emb_dim)), dtype=f)
    W1 = L.tensor(rng.normal(size=(emb_dim * block, hidden)) * 0.3, dtype=f)
    b1 = L.tensor(rng.normal(size=hidden) * 0.1, dtype=f)
    W2 = L.tensor(rng.normal(size=(hidden, vocab)) * 0.1, dtype=f)
    b2 = L.tensor(rng.normal(size=vocab) * 0.1, dtype=f)
    gain = L.tensor(rng.normal(size=(1, hidden)) * 0.1 + 1, dtype=f)
    bias = L.tensor(rng.normal(size=(1, hidden)) * 0.1, dtype=f)
    params = [C, W1, b1, W2, b2, gain, bias]
    for p in params:
        p.requires_grad = True
    emb = C[X]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bnvar = 1 / (n - 1) * (bndiff ** 2).sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = gain * bnraw + bias
    h = L.tanh(hpreact)
    logits = h @ W2 + b2
    norm_logits = logits - logits.max(1, keepdim=True).values
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    probs = counts * counts_sum ** -1
    logprobs = probs.log()
    loss = -logprobs[range(n), Y].mean()
    for t in (logprobs, probs, counts, logits, h, hpreact, bnraw, emb):
        t.retain_grad()
    loss.backward()
    # the hand-derived gradients of the lecture, checked against autograd
    dlogits = L.nn.functional.softmax(logits, 1)
    dlogits[range(n), Y] -= 1
    dlogits /= n
    dh = dlogits @ W2.T
    dhpreact = (1.0 - h ** 2) * dh
    dgain = (bnraw * dhpreact).sum(0, keepdim=True)
    dhprebn = gain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0)
                                      - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))
    dC = L.zeros_like(C)
    for k in range(n):
        for j in range(block):
            dC[X[k, j]] += (dhprebn @ W1.T).view(emb.shape)[k, j]
    fast = L.nn.functional.cross_entropy(logits, Y)
    return [loss.detach(), fast.detach(), [L.allclose(d, t.grad, atol=1e-6) for d, t in (
        (dlogits, logits), (dh, h), (dhpreact, hpreact), (dgain, gain), (dC, C))],
        logprobs.grad, C.grad, W1.grad, gain.grad]


def test_backprop_ninja():
    check_same(ninja, rtol=1e-4, atol=1e-6)


def test_generator_draws_have_torchs_shapes_and_types():
    def run(L):
        g = L.Generator().manual_seed(2147483647)
        ix = L.randint(0, 10, (4,), generator=g)
        w = L.randn((3, 2), generator=g)
        probs = L.tensor([[0.1, 0.9, 0.0], [0.5, 0.5, 0.0]])
        pick = L.multinomial(probs, num_samples=1, replacement=True, generator=g)
        return [tuple(ix.shape), str(ix.dtype), tuple(w.shape), tuple(pick.shape),
                str(pick.dtype), bool((pick < 2).all()), g.initial_seed(),
                tuple(L.multinomial(probs, 3).shape), tuple(probs[0].multinomial(2).shape)]
    assert run(__import__("symgrad")) == run(torch)


def polynomial(L, optimizer=None):
    x = L.linspace(-math.pi, math.pi, 200)
    y = L.sin(x)
    xx = x.unsqueeze(-1).pow(L.tensor([1, 2, 3]))
    model = L.nn.Sequential(L.nn.Linear(3, 1), L.nn.Flatten(0, 1))
    with L.no_grad():
        model[0].weight.copy_(L.tensor([[0.1, -0.2, 0.05]]))
        model[0].bias.fill_(0.3)
    loss_fn = L.nn.MSELoss(reduction="sum")
    lr = 1e-5 if optimizer in (None, "SGD") else 1e-3
    opt = None if optimizer is None else getattr(L.optim, optimizer)(model.parameters(), lr=lr)
    losses = []
    for _ in range(30):
        loss = loss_fn(model(xx), y)
        losses.append(loss.item())
        model.zero_grad() if opt is None else opt.zero_grad()
        loss.backward()
        if opt is None:
            with L.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
        else:
            opt.step()
    return [L.tensor(losses), model[0].weight.detach(), model[0].bias.detach()]


@pytest.mark.parametrize("optimizer", [None, "SGD", "RMSprop", "Adam"])
def test_polynomial_examples(optimizer):
    check_same(lambda L: polynomial(L, optimizer), rtol=1e-4, atol=1e-6)


def test_dynamic_net():
    def run(L):
        class DynamicNet(L.nn.Module):
            def __init__(self):
                super().__init__()
                for name, v in zip("abcde", (0.1, -0.2, 0.3, -0.05, 0.01)):
                    setattr(self, name, L.nn.Parameter(L.tensor(v)))

            def forward(self, x, order):
                y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
                for exp in range(4, order):
                    y = y + self.e * x ** exp
                return y
        x = L.linspace(-math.pi, math.pi, 100)
        model = DynamicNet()
        opt = L.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
        crit = L.nn.MSELoss(reduction="sum")
        for t in range(20):
            loss = crit(model(x, 4 + t % 3), L.sin(x))
            opt.zero_grad()
            loss.backward()
            opt.step()
        return [loss.detach()] + [p.detach() for p in model.parameters()]
    check_same(run, rtol=1e-5)
