"""PyTorch's 60-minute blitz, "Neural Networks", as the tutorial reads today
(``torch.flatten``, layers c1 ... output, ``f.data.sub_``, ``optim.SGD``), run unchanged
but for a ``torch.manual_seed(0)`` under PyTorch 2.13 and under ``import symgrad as
torch``: symgrad's generator is PyTorch's, so the layers' initial weights and every
``randn`` are the same, and the script must print the same text (addresses aside)."""
from __future__ import annotations

import contextlib
import io
import re
import sys

import pytest

import symgrad

pytest.importorskip("torch")

SCRIPT = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution
        # kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


net = Net()
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight

input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)

net.zero_grad()
out.backward(torch.randn(1, 10))

output = net(input)
target = torch.randn(10)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)

print(loss.grad_fn)  # MSELoss
print(loss.grad_fn.next_functions[0][0])  # Linear
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

net.zero_grad()     # zeroes the gradient buffers of all parameters

print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)

loss.backward()

print('conv1.bias.grad after backward')
print(net.conv1.bias.grad)

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)

import torch.optim as optim

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)

# in your training loop:
optimizer.zero_grad()   # zero the gradient buffers
output = net(input)
loss = criterion(output, target)
loss.backward()
optimizer.step()    # Does the update
print(net(input))
'''

_MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.optim")


def _printed(lib_modules: dict) -> str:
    saved = {name: sys.modules.get(name) for name in _MODULES}
    sys.modules.update(lib_modules)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(SCRIPT, "neural_networks_tutorial", "exec"), {"__name__": "tutorial"})
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return re.sub(r"0x[0-9a-f]+", "0x?", out.getvalue())


def test_the_tutorial_prints_what_pytorch_prints():
    import torch
    import torch.nn
    import torch.nn.functional
    import torch.optim
    want = _printed({name: sys.modules[name] for name in _MODULES})
    import symgrad.nn.functional
    import symgrad.optim
    got = _printed({"torch": symgrad, "torch.nn": symgrad.nn,
                    "torch.nn.functional": symgrad.nn.functional,
                    "torch.optim": symgrad.optim})
    assert "conv1.bias.grad after backward" in want and "MseLossBackward0" in want
    assert got == want
