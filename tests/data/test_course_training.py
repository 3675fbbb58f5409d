"""Course-style training loops over a ``TensorDataset`` in shuffled mini-batches, written
once for ``import torch`` and run unchanged under ``import symgrad as torch``: with the
same starting weights and the same seed, the loader visits the samples in the same order
(symgrad's generator is PyTorch's MT19937), so every loss agrees with PyTorch's."""
from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

XOR = '''
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

X = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
y = torch.tensor([[0.0], [1.0], [1.0], [0.0]])
model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1), nn.Sigmoid())
with torch.no_grad():
    for p, w in zip(model.parameters(), WEIGHTS):
        p.copy_(torch.tensor(w))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
loss_fn = nn.BCELoss()
torch.manual_seed(0)
loader = DataLoader(TensorDataset(X, y), batch_size=2, shuffle=True)
for epoch in range(60):
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(xb)
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: loss = {total / len(loader.dataset):.6f}")
print("predictions =", [round(v, 4) for v in model(X).squeeze(1).tolist()])
'''

REGRESSION = '''
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split

x = torch.tensor(XS).unsqueeze(1)
y = 3.0 * x + 2.0 + torch.tensor(NOISE).unsqueeze(1)
train, val = random_split(TensorDataset(x, y), [0.8, 0.2],
                          generator=torch.Generator().manual_seed(42))
print("sizes =", len(train), len(val))
model = torch.nn.Linear(1, 1)
with torch.no_grad():
    model.weight.fill_(0.5)
    model.bias.zero_()
opt = torch.optim.Adam(model.parameters(), lr=0.1)
torch.manual_seed(1)
train_loader = DataLoader(train, batch_size=16, shuffle=True, drop_last=True)
val_loader = DataLoader(val, batch_size=64)
for epoch in range(15):
    for xb, yb in train_loader:
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        val_loss = sum(torch.nn.functional.mse_loss(model(xb), yb, reduction="sum")
                       for xb, yb in val_loader) / len(val)
    print(f"epoch {epoch + 1}: val loss = {val_loss.item():.6f}")
print("weight =", round(model.weight.item(), 5), "bias =", round(model.bias.item(), 5))
'''


SEEDED = '''
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.rand(64, 1) * 4 - 2
y = x ** 2 + 0.1 * torch.rand(64, 1)
model = nn.Sequential(nn.Linear(1, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
for epoch in range(20):
    for xb, yb in loader:
        loss = nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: loss = {loss.item():.6f}")
'''


def _run(source: str, as_symgrad: bool, **values) -> str:
    if as_symgrad:
        source = source.replace("import torch\n", "import symgrad as torch\n", 1)
        source = re.sub(r"^from torch(\.| )", r"from symgrad\1", source, flags=re.M)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<course>", "exec"), dict(values))
    return out.getvalue()


def _numbers(text: str) -> list:
    return [float(v) for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)]


def test_a_seeded_script_draws_data_weights_and_order_as_pytorch(torch):
    """Nothing fed in: rand, nn.Linear's initialisation and the shuffled order all come
    from the seed, as in PyTorch."""
    want, got = _run(SEEDED, False), _run(SEEDED, True)
    assert len(_numbers(want)) == 4
    np.testing.assert_allclose(_numbers(got), _numbers(want), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("script", ["xor", "regression"])
def test_losses_match_pytorch_when_seeded_alike(torch, script):
    rng = np.random.default_rng(3)
    if script == "xor":
        shapes = [(4, 2), (4,), (1, 4), (1,)]
        values = {"WEIGHTS": [rng.normal(0, 1, s).astype(np.float32).tolist()
                              for s in shapes]}
        source = XOR
    else:
        values = {"XS": rng.uniform(-1, 1, 100).astype(np.float32).tolist(),
                  "NOISE": rng.normal(0, 0.1, 100).astype(np.float32).tolist()}
        source = REGRESSION
    want = _run(source, False, **values)
    got = _run(source, True, **values)
    assert [line.split("=")[0] for line in got.splitlines()] == [
        line.split("=")[0] for line in want.splitlines()]
    assert len(_numbers(want)) >= 7
    np.testing.assert_allclose(_numbers(got), _numbers(want), rtol=2e-4, atol=2e-5)
