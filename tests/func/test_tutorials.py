"""PyTorch's torch.func tutorials, as workflows, print the same text under symgrad.

The three tutorials (Jacobians, Hessians, hvp and vhp; per-sample gradients; model
ensembling) are walked through step by step in the scripts below, written for this test in
the tutorials' order with their calls (``vjp`` + ``vmap`` of unit vectors, ``jacrev`` and
``jacfwd`` with ``argnums``, ``hessian`` three ways, batched Jacobians and Hessians and the
sum trick with ``movedim``, hvp by forward-over-reverse and reverse-over-reverse,
``functional_call`` with ``(params, buffers)``, ``vmap(grad(...), in_dims=(None, None, 0,
0))``, ``stack_module_state``, a ``.to('meta')`` copy, ``torch.vmap``, ``Timer``), at sizes
small enough for the test suite, but the batch-Jacobian cell at the tutorial's own sizes
(64 samples, 31 -> 33, float32), whose ``assert torch.allclose`` of ``vmap(jacrev(f))``
against the sum trick fails if a row's product rounds differently alone than in the batch
(its Jacobian entries are ``(1 - y²) w`` where ``tanh`` saturates).  Each runs with ``torch``
bound to PyTorch 2.13 and to symgrad, each with its own generator and layer initialisation
(symgrad's draws are PyTorch's; :mod:`tutorial_runner`, timings masked); the printed text
must be the same.  The tutorials themselves, at their own sizes, are checked by hand with
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
from torch.func import vmap, vjp, jacrev, jacfwd, hessian, jvp, grad
from torch.utils.benchmark import Timer
_ = torch.manual_seed(0)

def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()

D = 16
weight, bias, x = torch.randn(D, D), torch.randn(D), torch.randn(D)
xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)
jacobian = torch.stack([torch.autograd.grad(predict(weight, bias, xp), xp, v)[0]
                        for v in unit_vectors])
print(jacobian.shape)
print(jacobian[0])
_, vjp_fn = vjp(partial(predict, weight, bias), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
print(torch.allclose(ft_jacobian, jacobian))
ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print(torch.allclose(ft_jacobian, jacobian))
print(Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals()).timeit(500))
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(ft_jac_weight.shape, ft_jac_bias.shape)

for Din, Dout in ((8, 256), (256, 8)):
    weight, bias, x = torch.randn(Dout, Din), torch.randn(Dout), torch.randn(Din)
    print(weight.shape)
    fwd = jacfwd(predict, argnums=2)(weight, bias, x)
    rev = jacrev(predict, argnums=2)(weight, bias, x)
    print(fwd.shape, torch.allclose(fwd, rev), torch.equal(fwd, rev))

Din, Dout = 24, 12
weight, bias, x = torch.randn(Dout, Din), torch.randn(Dout), torch.randn(Din)
hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print(torch.allclose(hess_api, hess_fwdfwd), torch.allclose(hess_api, hess_revrev))
print(hess_api.shape)

batch_size, Din, Dout = 64, 31, 33
weight = torch.randn(Dout, Din)
print(f"weight shape = {weight.shape}")
bias = torch.randn(Dout)
x = torch.randn(batch_size, Din)
batch_jacobian0 = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)

def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)

batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
assert torch.allclose(batch_jacobian0, batch_jacobian1)
print(torch.equal(batch_jacobian0, batch_jacobian1))
batch_hess = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x[:8])
print(batch_hess.shape)

def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]

def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)

def f(x):
    return x.sin().sum()

x, tangent = torch.randn(2048), torch.randn(2048)
result = hvp(f, (x,), (tangent,))
assert torch.allclose(result, hvp_revrev(f, (x,), (tangent,))[0])
print(result[:4])
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
for i, (manual, ft) in enumerate(zip(per_sample_grads, ft_per_sample_grads.values())):
    is_close = torch.allclose(manual, ft, atol=3e-3, rtol=1e-5)
    if not is_close:
        print(f"Gradient {i} mismatch: {(manual - ft).abs().max().item()}")
    assert torch.allclose(manual, ft, atol=3e-3, rtol=1e-5)
    print(ft.shape)

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

# The forward-mode AD tutorial's last part, as written: ``import functorch as ft`` (the
# package PyTorch 2.13's wheel ships; symgrad.functorch under symgrad), its deprecation
# warnings printed.
FUNCTORCH = '''
import functools
import warnings
import torch
import torch.nn as nn
_ = torch.manual_seed(0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import functorch as ft

    primal0 = torch.randn(10, 10)
    tangent0 = torch.randn(10, 10)
    primal1 = torch.randn(10, 10)
    tangent1 = torch.randn(10, 10)

    def fn(x, y):
        return x ** 2 + y ** 2

    primal_out, tangent_out = ft.jvp(fn, (primal0, primal1), (tangent0, tangent1))
    primal = torch.randn(10, 10)
    tangent = torch.randn(10, 10)
    y = torch.randn(10, 10)
    new_fn = functools.partial(fn, y=y)
    primal_out2, tangent_out2 = ft.jvp(new_fn, (primal,), (tangent,))

    model = nn.Linear(5, 5)
    input = torch.randn(16, 5)
    tangents = tuple([torch.rand_like(p) for p in model.parameters()])
    func, params, buffers = ft.make_functional_with_buffers(model)

    def func_params_only(params):
        return func(params, buffers, input)

    model_output, jvp_out = ft.jvp(func_params_only, (params,), (tangents,))
    fmodel, stacked, _ = ft.combine_state_for_ensemble([nn.Linear(5, 2) for _ in range(3)])
    ensemble = ft.vmap(fmodel, in_dims=(0, 0, None))(stacked, (), input)
print(torch.allclose(tangent_out, 2 * primal0 * tangent0 + 2 * primal1 * tangent1))
print(torch.allclose(tangent_out2, 2 * primal * tangent))
print(type(func).__name__, len(params), len(buffers), params[0].requires_grad,
      params[0] is model.weight, torch.equal(params[0], model.weight))
print(model_output[0])
print(jvp_out[0].detach())  # (torch's tangent here requires grad: its addmm formula keeps
# the term of the primal weight times a zero tangent; symgrad's leaves the term out)
print(type(fmodel).__name__, [tuple(p.shape) for p in stacked], ensemble.shape)
for message in sorted({str(w.message) for w in caught if "functorch" in str(w.message)}):
    print(message)
'''

SCRIPTS = {"jacobians_hessians": JACOBIANS, "per_sample_grads": PER_SAMPLE,
           "ensembling": ENSEMBLING, "forward_ad_functorch": FUNCTORCH}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_prints_what_pytorch_prints(name):
    want = run(SCRIPTS[name], torch, timer_cap=2, own_draws=True)
    got = run(SCRIPTS[name], symgrad, timer_cap=2, own_draws=True)
    assert "<Measurement>" in want or name in ("jacobians_hessians", "forward_ad_functorch")
    assert got == want


def test_timings_are_masked_only():
    text = ("a <torch.utils.benchmark.utils.common.Measurement object at 0x7f>\nstmt\n"
            "  3.92 us\n  1 measurement, 100 runs , 1 thread\nPerformance delta: 12.5 percent")
    assert mask(text) == "a <Measurement>\nPerformance delta: ? percent"
    assert mask("tensor([1., 2.])") == "tensor([1., 2.])"
