"""PyTorch's 60-minute blitz, "Neural Networks"
(https://pytorch.org/tutorials/beginner/blitz/neural_networks_tutorial.html), step by step
with the tutorial's own calls, run with ``torch`` bound to PyTorch 2.13 and to symgrad: the
LeNet (``nn.Conv2d``, ``F.max_pool2d``, ``F.relu``, ``view``, ``nn.Linear``), ``print(net)``,
its parameters, a forward pass, ``backward`` with random gradients, ``nn.MSELoss`` against an
``arange`` target, the ``grad_fn`` chain, ``conv1.bias.grad`` before and after ``backward``,
and an ``optim.SGD`` step.

Both libraries get the same numbers: ``torch.randn`` and the layers' initial weights
(``nn.init.kaiming_uniform_`` / ``uniform_``, with the bounds each library computes) are
drawn from one numpy generator, in float64.  What the script prints must then be the same
text, memory addresses aside.
"""
from __future__ import annotations

import contextlib
import io
import math
import re

import numpy as np
import pytest

import symgrad

torch_ = pytest.importorskip("torch")


def tutorial(torch, nn, F, optim) -> None:
    """The tutorial's code, in its order (``torch`` is either library)."""
    class Net(nn.Module):

        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, self.num_flat_features(x))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

        def num_flat_features(self, x):
            size = x.size()[1:]
            num_features = 1
            for s in size:
                num_features *= s
            return num_features

    net = Net()
    print(net)
    params = list(net.parameters())
    print(len(params))
    print(params[0].size())
    input = torch.randn(1, 1, 32, 32)
    out = net(input)
    print(out)
    net.zero_grad()
    out.backward(torch.randn(1, 10))

    output = net(input)
    target = torch.arange(1, 11)
    target = target.view(1, -1)
    criterion = nn.MSELoss()
    loss = criterion(output, target)
    print(loss)
    print(loss.grad_fn)
    print(loss.grad_fn.next_functions[0][0])
    print(loss.grad_fn.next_functions[0][0].next_functions[0][0])

    net.zero_grad()
    print('conv1.bias.grad before backward')
    print(net.conv1.bias.grad)
    loss.backward()
    print('conv1.bias.grad after backward')
    print(net.conv1.bias.grad)

    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)

    optimizer = optim.SGD(net.parameters(), lr=0.01)
    optimizer.zero_grad()
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    print(loss)
    print(net.fc3.bias)


def _run(lib, monkeypatch) -> str:
    """The tutorial under ``lib`` with shared draws; what it printed."""
    gen = np.random.default_rng(0)

    def fill(t, low, high):
        with lib.no_grad():
            t.copy_(lib.tensor(gen.uniform(low, high, tuple(t.shape)), dtype=t.dtype))
        return t

    def kaiming_uniform_(t, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
        fan_in = t.shape[1] * math.prod(t.shape[2:])
        bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(fan_in)
        return fill(t, -bound, bound)

    def uniform_(t, a=0.0, b=1.0, generator=None):
        return fill(t, a, b)

    def randn(*size, dtype=None, **kwargs):
        return lib.tensor(gen.standard_normal(size), dtype=dtype or lib.get_default_dtype())

    monkeypatch.setattr(lib.nn.init, "kaiming_uniform_", kaiming_uniform_)
    monkeypatch.setattr(lib.nn.init, "uniform_", uniform_)
    shim = type("torch", (), {"randn": staticmethod(randn), "arange": staticmethod(lib.arange)})
    printed = io.StringIO()
    # (float64, so that sums taken in another order cannot flip a printed digit)
    default = lib.get_default_dtype()
    lib.set_default_dtype(lib.float64)
    try:
        with contextlib.redirect_stdout(printed):
            tutorial(shim, lib.nn, lib.nn.functional, lib.optim)
    finally:
        lib.set_default_dtype(default)
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", printed.getvalue())


def test_the_tutorial_prints_what_pytorch_prints(monkeypatch):
    want = _run(torch_, monkeypatch)
    got = _run(symgrad, monkeypatch)
    assert "MseLossBackward0" in want and "Conv2d(1, 6, kernel_size=(5, 5)" in want
    assert got == want


def test_the_tutorial_runs_under_import_symgrad_as_torch():
    """The same code with symgrad's own draws: it runs, and the graph is PyTorch's."""
    import symgrad as torch
    import symgrad.nn as nn
    import symgrad.nn.functional as F
    import symgrad.optim as optim
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        tutorial(torch, nn, F, optim)
    text = printed.getvalue()
    assert "<MseLossBackward0 object at" in text and "<AddmmBackward0 object at" in text
    assert "grad_fn=<AddBackward0>" not in text and "tensor([0., 0., 0., 0., 0., 0.])" \
        not in text.split("after backward")[1]
