"""``nn`` modules against PyTorch 2.13: printed forms, the parameter tree (names, order,
state_dict, children), forward values and graphs, gradients, modes, hooks and the errors of
registration and ``load_state_dict``.  Weights are random in both libraries, so each test
writes the same numbers into both before it compares."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from conftest import check_same, describe, oracle, same_outcome

torch = pytest.importorskip("torch")


def same_weights(model, lib, seed: int = 0):
    """Write the same pseudo-random numbers into every parameter of ``model``."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in model.named_parameters():
            p.copy_(lib.tensor(rng.uniform(-1, 1, tuple(p.shape)), dtype=p.dtype))
    return model


# --------------------------------------------------------------------------- printed forms
REPRS = [
    "nn.Linear(3, 2)", "nn.Linear(3, 2, bias=False)", "nn.Identity()", "nn.ReLU()",
    "nn.ReLU(inplace=True)", "nn.ReLU6()", "nn.LeakyReLU()", "nn.LeakyReLU(0.2, True)",
    "nn.ELU()", "nn.ELU(alpha=0.5)", "nn.SELU()", "nn.CELU(2.0)", "nn.GELU()",
    "nn.GELU('tanh')", "nn.SiLU()", "nn.Mish(inplace=True)", "nn.Softplus()",
    "nn.Softplus(beta=2, threshold=10)", "nn.Hardtanh()", "nn.Hardtanh(-2.0, 2.0)",
    "nn.Hardsigmoid(inplace=True)", "nn.Hardswish()", "nn.Softmax()", "nn.Softmax(dim=1)",
    "nn.LogSoftmax(1)", "nn.Tanh()", "nn.Sigmoid()", "nn.LogSigmoid()", "nn.Softsign()",
    "nn.Tanhshrink()", "nn.Dropout()", "nn.Dropout(0.2, True)", "nn.Flatten()",
    "nn.Flatten(0, 1)", "nn.Unflatten(1, (2, 5))", "nn.MSELoss()", "nn.L1Loss()",
    "nn.SmoothL1Loss(beta=0.5)", "nn.HuberLoss()", "nn.BCELoss()", "nn.BCEWithLogitsLoss()",
    "nn.NLLLoss()", "nn.CrossEntropyLoss(label_smoothing=0.1)", "nn.KLDivLoss()",
    "nn.Sequential()", "nn.Embedding(10, 3)", "nn.Embedding(10, 3, padding_idx=-1)",
    "nn.LayerNorm(4)", "nn.LayerNorm([3, 4], elementwise_affine=False)",
    "nn.DataParallel(nn.Linear(1, 1))", "nn.Bilinear(2, 3, 4)",
    "nn.ParameterList([nn.Parameter(nn.Linear(2, 3).weight.detach()), nn.Parameter("
    "nn.Linear(4, 1).bias.detach())])",
    "nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))",
    "nn.Sequential(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), nn.Dropout(0.1))",
    "nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU()])",
    "nn.ModuleDict({'act': nn.ReLU(), 'out': nn.Linear(1, 1)})",
]


@pytest.mark.parametrize("text", REPRS)
def test_repr(text):
    def build(lib):
        return repr(eval(text, {"nn": lib.nn}))  # our own test text, not user input
    assert build(symgrad) == build(torch)


class Net:
    """The custom module of every course, written against ``lib``."""

    @staticmethod
    def make(lib):
        class TwoLayer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = lib.nn.Linear(3, 4)
                self.register_buffer("scale", lib.tensor([2.0]))
                self.register_buffer("scratch", lib.zeros(1), persistent=False)
                self.gain = lib.nn.Parameter(lib.ones(1))
                self.out = lib.nn.Sequential(lib.nn.Tanh(), lib.nn.Linear(4, 2))

            def forward(self, x):
                return self.out(self.hidden(x) * self.scale) * self.gain

        return same_weights(TwoLayer(), lib)


def test_parameter_tree():
    def tree(lib):
        m = Net.make(lib)
        return (repr(m), [n for n, _ in m.named_parameters()],
                [n for n, _ in m.named_buffers()], list(m.state_dict()),
                [n for n, _ in m.named_modules()], [n for n, _ in m.named_children()],
                [type(c).__name__ for c in m.children()], len(list(m.parameters())),
                len(list(m.parameters(recurse=False))), [n for n, _ in m.out.named_parameters(
                    prefix="out")])
    assert tree(symgrad) == tree(torch)


def test_forward_backward_and_graph():
    def run(lib):
        m = Net.make(lib)
        x = lib.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=lib.float32)
        y = m(x)
        loss = lib.nn.MSELoss()(y, lib.ones(5, 2))
        loss.backward()
        return [y, loss] + [p.grad for p in m.parameters()]
    check_same(run, rtol=1e-5)
    want, got = (describe(run(lib)[:2], lib) for lib in (torch, symgrad))
    assert got == want


@pytest.mark.parametrize("name, make, x", [
    ("linear 1-D", lambda L: L.nn.Linear(3, 2), np.arange(3.0)),
    ("linear 3-D", lambda L: L.nn.Linear(3, 2), np.arange(12.0).reshape(2, 2, 3) / 10),
    ("linear no bias", lambda L: L.nn.Linear(3, 2, bias=False), np.arange(6.0).reshape(2, 3)),
    ("mlp", lambda L: L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 4),
                                      L.nn.GELU(), L.nn.Linear(4, 1), L.nn.Sigmoid()),
     np.arange(6.0).reshape(2, 3) / 5 - 0.3),
    ("flatten", lambda L: L.nn.Sequential(L.nn.Flatten(), L.nn.Linear(6, 2)),
     np.arange(12.0).reshape(2, 2, 3) / 7),
    ("unflatten", lambda L: L.nn.Unflatten(1, (2, 3)), np.arange(12.0).reshape(2, 6)),
    ("softmax", lambda L: L.nn.Sequential(L.nn.Linear(3, 3), L.nn.LogSoftmax(dim=1)),
     np.arange(6.0).reshape(2, 3) / 4),
] + [(f"activation {a}", (lambda a: lambda L: getattr(L.nn, a)())(a),
      np.linspace(-3, 3, 8).reshape(2, 4))
     for a in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
               "Softplus", "Hardtanh", "Hardsigmoid", "Hardswish", "Tanh", "Sigmoid",
               "LogSigmoid", "Softsign", "Tanhshrink", "Identity")])
def test_module_forward(name, make, x):
    def run(lib):
        m = same_weights(make(lib), lib).double()
        inp = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        y = m(inp)
        (y * y).sum().backward()
        return [y, inp.grad] + [p.grad for p in m.parameters()]
    # (PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, even in float64)
    check_same(run, rtol=1e-7 if "Hardsigmoid" in name else 1e-10, atol=1e-12)
    want, got = (describe(run(lib)[0], lib) for lib in (torch, symgrad))
    assert got == want


@pytest.mark.parametrize("loss, x, t", [
    ("nn.MSELoss()", [[0.5, -1.0], [2.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]),
    ("nn.L1Loss(reduction='sum')", [[0.5, -1.0]], [[1.0, 0.0]]),
    ("nn.SmoothL1Loss(beta=0.5)", [[0.5, -1.0, 3.0]], [[1.0, 0.0, 0.0]]),
    ("nn.HuberLoss(delta=2.0)", [[0.5, -1.0, 3.0]], [[1.0, 0.0, 0.0]]),
    ("nn.BCELoss()", [[0.2, 0.9]], [[0.0, 1.0]]),
    ("nn.BCEWithLogitsLoss(pos_weight=L.tensor([2.0, 0.5], dtype=L.float64))",
     [[0.2, -0.9]], [[0.0, 1.0]]),
    ("nn.CrossEntropyLoss()", [[0.2, -0.9, 1.0], [0.1, 0.2, 0.3]], [2, 0]),
    ("nn.CrossEntropyLoss(weight=L.tensor([1.0, 2.0, 3.0], dtype=L.float64), "
     "label_smoothing=0.1)", [[0.2, -0.9, 1.0], [0.1, 0.2, 0.3]], [2, 0]),
    ("nn.NLLLoss(ignore_index=1)", [[-0.2, -0.9, -1.0], [-0.1, -0.2, -0.3]], [1, 0]),
    ("nn.KLDivLoss(reduction='batchmean')", [[-0.2, -0.9]], [[0.3, 0.7]]),
    ("nn.MSELoss(size_average=False)", [[0.5, -1.0]], [[1.0, 0.0]]),
])
def test_loss_modules(loss, x, t):
    def run(lib):
        m = eval(loss, {"nn": lib.nn, "L": lib})  # our own test text
        inp = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        tgt = lib.tensor(t, dtype=lib.int64 if isinstance(t[0], int) else lib.float64)
        out = m(inp, tgt)
        out.backward()
        return [out, inp.grad, list(m.state_dict())]
    check_same(run, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- behaviour
def test_train_eval_and_dropout():
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Dropout(0.5))
        flags = [m.training, m[1].training]
        m.eval()
        flags += [m.training, m[1].training]
        x = lib.ones(3, 2)
        same = bool((m(x) == m[0](x)).all())
        m.train()
        return flags + [m[1].training, same, m.train(False) is m]
    assert run(symgrad) == run(torch)
    same_outcome(lambda L: L.nn.Linear(1, 1).train("yes"))


def test_zero_grad_and_requires_grad():
    def run(lib):
        m = Net.make(lib)
        m(lib.ones(2, 3)).sum().backward()
        m.zero_grad(set_to_none=False)
        zeros = [p.grad for p in m.parameters()]
        m.zero_grad()
        nones = [p.grad is None for p in m.parameters()]
        m.requires_grad_(False)
        return zeros + nones + [p.requires_grad for p in m.parameters()]
    check_same(run)


def test_hooks():
    def run(lib):
        m = same_weights(lib.nn.Linear(2, 2), lib)
        seen = []
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape) or out + 1)
        a = m(lib.ones(1, 2))
        h1.remove()
        h2.remove()
        return [a, m(lib.ones(1, 2)), [tuple(s) for s in seen]]
    check_same(run)


def test_dtype_conversion_keeps_parameters():
    def run(lib):
        m = Net.make(lib)
        p = m.hidden.weight
        m.double()
        same = m.hidden.weight is p
        dtypes = [str(t.dtype) for t in m.state_dict().values()]
        m.to(lib.float32)
        m.to("cpu")
        return [same, dtypes, str(p.dtype), m(lib.ones(1, 3)).dtype == lib.float32]
    assert run(symgrad) == run(torch)
    same_outcome(lambda L: L.nn.Linear(1, 1).to(L.int64))
    same_outcome(lambda L: L.nn.Linear(1, 1).cuda())
    assert describe(symgrad.nn.ReLU().cuda(), symgrad) == describe(torch.nn.ReLU().cuda(),
                                                                     torch)


def test_state_dict_round_trip():
    def run(lib):
        a, b = Net.make(lib), same_weights(Net.make(lib), lib, seed=1)
        keys = b.load_state_dict(a.state_dict())
        sd = b.state_dict()
        return [repr(keys), [str(k) for k in sd], list(sd.values()),
                [t.requires_grad for t in sd.values()], type(sd).__name__,
                repr(b.load_state_dict({"gain": lib.ones(1)}, strict=False))]
    check_same(run)


@pytest.mark.parametrize("bad", [
    lambda L: L.nn.Linear(2, 1).load_state_dict({"weight": L.ones(3, 3), "foo": L.ones(1)}),
    lambda L: L.nn.Linear(2, 1).load_state_dict({"weight": L.ones(1, 2)}),
    lambda L: L.nn.Linear(2, 1).load_state_dict({"weight": L.ones(1, 2), "bias": L.ones(1),
                                                 "x.y": L.ones(1)}),
])
def test_load_state_dict_errors(bad):
    same_outcome(bad)


def _assign(what):
    def scenario(L):
        m = L.nn.Linear(2, 2)
        m.register_buffer("buf", L.ones(1))
        m.child = L.nn.ReLU()
        if what == "tensor as parameter":
            m.weight = L.ones(2, 2)
        elif what == "int as child":
            m.child = 3
        elif what == "int as buffer":
            m.buf = 3
        elif what == "missing attribute":
            return m.nothing
        elif what == "dotted buffer":
            m.register_buffer("a.b", L.ones(1))
        elif what == "buffer over attribute":
            m.register_buffer("in_features", L.ones(1))
        elif what == "forward missing":
            return L.nn.Module()(1)
    return scenario


@pytest.mark.parametrize("what", ["tensor as parameter", "int as child", "int as buffer",
                                  "missing attribute", "dotted buffer", "buffer over attribute",
                                  "forward missing"])
def test_registration_errors(what):
    same_outcome(_assign(what))


def test_parameter_before_init():
    def scenario(L):
        class Broken(L.nn.Module):
            def __init__(self):
                self.w = L.nn.Parameter(L.ones(1))
        return Broken()
    same_outcome(scenario)


def test_containers():
    def run(lib):
        seq = lib.nn.Sequential(lib.nn.Linear(1, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
        ml = lib.nn.ModuleList([lib.nn.ReLU()])
        ml.append(lib.nn.Tanh())
        ml.extend([lib.nn.Sigmoid()])
        md = lib.nn.ModuleDict({"a": lib.nn.ReLU()})
        md["b"] = lib.nn.Tanh()
        return [len(seq), repr(seq[0]), repr(seq[-1]), repr(seq[1:]), len(ml), repr(ml),
                [type(m).__name__ for m in ml], list(md.keys()), "a" in md, repr(md)]
    assert run(symgrad) == run(torch)


# --------------------------------------------------------------------------- nn.init
def test_linear_initialisation_statistics():
    """Linear's default init is U(-1/sqrt(in), 1/sqrt(in)) for weight and bias."""
    symgrad.manual_seed(0)
    m = symgrad.nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    for p in (m.weight, m.bias):
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.95 * bound
        assert abs(a.std() - bound / np.sqrt(3)) < 0.05 * bound
    assert m.weight.dtype is symgrad.float32 and m.weight.requires_grad


@pytest.mark.parametrize("fn, kwargs, shape, std", [
    ("xavier_uniform_", {}, (300, 200), np.sqrt(2 / 500)),
    ("xavier_normal_", {"gain": 2.0}, (300, 200), 2 * np.sqrt(2 / 500)),
    ("kaiming_uniform_", {"nonlinearity": "relu"}, (300, 200), np.sqrt(2 / 200)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}, (300, 200),
     np.sqrt(2 / 300)),
    ("kaiming_normal_", {"a": 0.2}, (30, 20, 3, 3), np.sqrt(2 / 1.04 / 180)),
    ("normal_", {"std": 0.02}, (300, 200), 0.02),
    ("uniform_", {"a": -2.0, "b": 2.0}, (300, 200), 4 / np.sqrt(12)),
    ("trunc_normal_", {"std": 1.0}, (300, 200), 0.8796),  # std of N(0,1) cut at ±2
])
def test_init_statistics(fn, kwargs, shape, std):
    t = symgrad.empty(shape)
    out = getattr(symgrad.nn.init, fn)(t, **kwargs)
    assert out is t
    a = t.numpy()
    assert abs(a.std() - std) < 0.03 * std
    assert abs(a.mean()) < 0.03 * std
    if fn == "trunc_normal_":
        assert a.min() >= -2 and a.max() <= 2


def test_init_constants_and_gains():
    def run(lib):
        init = lib.nn.init
        gains = [init.calculate_gain(n) for n in ("linear", "sigmoid", "tanh", "relu", "selu")]
        gains.append(init.calculate_gain("leaky_relu", 0.2))
        ts = [init.constant_(lib.empty(2, 3), 0.5), init.ones_(lib.empty(2)),
              init.zeros_(lib.ones(2)), init.eye_(lib.empty(2, 3))]
        p = lib.nn.Parameter(lib.ones(2, 2))
        init.zeros_(p)
        return gains + ts + [p, p.grad_fn is None]
    check_same(run)
    same_outcome(lambda L: L.nn.init.xavier_uniform_(L.empty(3)))
    same_outcome(lambda L: L.nn.init.calculate_gain("swish"))
    same_outcome(lambda L: L.nn.init.kaiming_uniform_(L.empty(3, 3), mode="fan"))


def test_parameters_are_what_torch_builds():
    """Shapes, dtypes, leaf flags of every parameter of a model built with options."""
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4, dtype=lib.float64), lib.nn.ReLU(),
                              lib.nn.Linear(4, 2, bias=False))
        return [(n, tuple(p.shape), str(p.dtype), p.is_leaf, p.requires_grad,
                 type(p).__name__) for n, p in m.named_parameters()]
    assert run(symgrad) == run(oracle())
