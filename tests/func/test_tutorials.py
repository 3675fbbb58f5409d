"""PyTorch's torch.func tutorials, as workflows, print the same text under symgrad.

The three tutorials (Jacobians, Hessians, hvp and vhp; per-sample gradients; model
ensembling) are walked through step by step in the scripts below, written for this test in
the tutorials' order with their calls (``vjp`` + ``vmap`` of unit vectors, ``jacrev`` and
``jacfwd`` with ``argnums``, ``hessian`` three ways, batched Jacobians and Hessians and the
sum trick with ``movedim``, hvp by forward-over-reverse and reverse-over-reverse,
``functional_call`` with ``(params, buffers)``, ``vmap(grad(...), in_dims=(None, None, 0,
0))``, ``stack_module_state``, a ``.to('meta')`` copy, ``torch.vmap``, ``Timer``), at sizes
small enough for the test suite.  Each runs with ``torch`` bound to PyTorch 2.13 and to
symgrad (:mod:`tutorial_runner`: same random draws, timings masked); the printed text must
be the same.  The tutorials themselves, at their own sizes, are checked by hand with
``python tests/func/tutorial_runner.py <tutorial.py>`` (see bench/README.md).
"""
from __future__ import annotations

import pytest

import symgrad
from tutorial_runner import mask, run

torch = pytest.importorskip("torch")

JACOBIANS = '''
import torch
import torch.nn.functional as F
from functools import partial
_ = torch.manual_seed(0)

def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()

D = 6
weight, bias, x = torch.randn(D, D), torch.randn(D), torch.randn(D)
unit_vectors = torch.eye(D)
xp = x.clone().requires_grad_()

def compute_jac(xp):
    rows = [torch.autograd.grad(predict(weight, bias, xp), xp, v)[0] for v in unit_vectors]
    return torch.stack(rows)

jacobian = compute_jac(xp)
print(jacobian.shape)
print(jacobian[0])

from torch.func import vmap, vjp, jacrev, jacfwd, hessian
_, vjp_fn = vjp(partial(predict, weight, bias), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
print(torch.allclose(ft_jacobian, jacobian))
ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print(torch.allclose(ft_jacobian, jacobian))
jw, jb = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(jw.shape, jb.shape)

from torch.utils.benchmark import Timer
slow = Timer(stmt="compute_jac(xp)", globals=globals()).timeit(500)
fast = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals()).timeit(500)
print(slow)
print(f"with vmap: {fast}")
print(f"Performance delta: {abs(slow.times[0] - fast.times[0]) / slow.times[0] * 100:.4f} percent")

for Din, Dout in ((4, 40), (40, 4)):
    weight, bias, x = torch.randn(Dout, Din), torch.randn(Dout), torch.randn(Din)
    print(weight.shape)
    a = jacfwd(predict, argnums=2)(weight, bias, x)
    b = jacrev(predict, argnums=2)(weight, bias, x)
    print(a.shape, torch.allclose(a, b, atol=1e-6))

Din, Dout = 12, 5
weight, bias, x = torch.randn(Dout, Din), torch.randn(Dout), torch.randn(Din)
hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print(hess_api.shape, torch.allclose(hess_api, hess_fwdfwd, atol=1e-6),
      torch.allclose(hess_api, hess_revrev, atol=1e-6))
print(hess_api[1, 2, :4])

batch_size, Din, Dout = 7, 5, 3
weight = torch.randn(Dout, Din)
print(f"weight shape = {weight.shape}")
bias, x = torch.randn(Dout), torch.randn(batch_size, Din)
batch_jacobian0 = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)

def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)

batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
print(batch_jacobian0.shape, torch.allclose(batch_jacobian0, batch_jacobian1))
batch_hess = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)
print(batch_hess.shape)
print(batch_hess[0, 0, 0])

from torch.func import jvp, grad

def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]

def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)

def f(x):
    return x.sin().sum()

x, tangent = torch.randn(64), torch.randn(64)
result = hvp(f, (x,), (tangent,))
print(torch.allclose(result, hvp_revrev(f, (x,), (tangent,))[0]))
print(result[:5])
'''

PER_SAMPLE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class SmallCNN(nn.Module):
    def __init__(self):
        super(SmallCNN, self).__init__()
        self.conv1 = nn.Conv2d(1, 3, 3, 1)
        self.fc1 = nn.Linear(27, 8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)

def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)

device = 'cuda'
batch_size = 6
data = torch.randn(batch_size, 1, 8, 8, device=device)
targets = torch.randint(4, (batch_size,), device=device)
model = SmallCNN().to(device=device)
loss = loss_fn(model(data), targets)
loss.backward()
print(loss)

def compute_grad(sample, target):
    prediction = model(sample.unsqueeze(0))
    return torch.autograd.grad(loss_fn(prediction, target.unsqueeze(0)),
                               list(model.parameters()))

def compute_sample_grads(data, targets):
    sample_grads = zip(*[compute_grad(data[i], targets[i]) for i in range(batch_size)])
    return [torch.stack(shards) for shards in sample_grads]

per_sample_grads = compute_sample_grads(data, targets)
print(per_sample_grads[0].shape)

from torch.func import functional_call, vmap, grad
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}

def compute_loss(params, buffers, sample, target):
    predictions = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
    return loss_fn(predictions, target.unsqueeze(0))

ft_compute_sample_grad = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
print(list(ft_per_sample_grads))
for manual, ft in zip(per_sample_grads, ft_per_sample_grads.values()):
    print(ft.shape, torch.allclose(manual, ft, atol=3e-3, rtol=1e-5))

from torch.utils.benchmark import Timer
without_vmap = Timer(stmt="compute_sample_grads(data, targets)", globals=globals())
with_vmap = Timer(stmt="ft_compute_sample_grad(params, buffers, data, targets)",
                  globals=globals())
print(f"Per-sample-grads without vmap {without_vmap.timeit(100)}")
print(f"Per-sample-grads with vmap {with_vmap.timeit(100)}")
'''

ENSEMBLING = '''
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))

device = 'cuda'
num_models = 4
data = torch.randn(10, 5, 1, 4, 4, device=device)
models = [SimpleMLP().to(device) for _ in range(num_models)]
minibatches = data[:num_models]
loop1 = [model(mb) for model, mb in zip(models, minibatches)]
minibatch = data[0]
loop2 = [model(minibatch) for model in models]

from torch.func import stack_module_state, functional_call
params, buffers = stack_module_state(models)
print([p.size(0) for p in params.values()], buffers)
print({k: v.shape for k, v in params.items()})
base_model = copy.deepcopy(models[0]).to('meta')

def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))

from torch import vmap
predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
print(predictions1_vmap.shape)
print(torch.allclose(predictions1_vmap, torch.stack(loop1), atol=1e-3, rtol=1e-5))
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print(torch.allclose(predictions2_vmap, torch.stack(loop2), atol=1e-3, rtol=1e-5))
print(predictions2_vmap[1, 0])

from torch.utils.benchmark import Timer
loop = Timer(stmt="[m(b) for m, b in zip(models, minibatches)]", globals=globals())
mapped = Timer(stmt="vmap(fmodel)(params, buffers, minibatches)", globals=globals())
print(f"without vmap {loop.timeit(100)}")
print(f"with vmap {mapped.timeit(100)}")
'''

SCRIPTS = {"jacobians_hessians": JACOBIANS, "per_sample_grads": PER_SAMPLE,
           "ensembling": ENSEMBLING}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_prints_what_pytorch_prints(name):
    want = run(SCRIPTS[name], torch, timer_cap=2)
    got = run(SCRIPTS[name], symgrad, timer_cap=2)
    assert "<Measurement>" in want or name == "jacobians_hessians"
    assert got == want


def test_timings_are_masked_only():
    text = ("a <torch.utils.benchmark.utils.common.Measurement object at 0x7f>\nstmt\n"
            "  3.92 us\n  1 measurement, 100 runs , 1 thread\nPerformance delta: 12.5 percent")
    assert mask(text) == "a <Measurement>\nPerformance delta: ? percent"
    assert mask("tensor([1., 2.])") == "tensor([1., 2.])"
