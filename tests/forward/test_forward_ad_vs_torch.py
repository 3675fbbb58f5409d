"""``symgrad.autograd.forward_ad`` against PyTorch 2.13's: values, tangents, dtypes, reprs
and error messages, in-place ops and views on duals, custom Functions' ``jvp``,
``gradcheck(check_forward_ad=True)``, ``autograd.functional`` and PyTorch's forward-mode
tutorial (run unchanged with ``torch`` bound to symgrad).

Each snippet is written once against a library ``L`` (and its ``forward_ad`` as ``fwAD``)
and prints what a user would see; the printed text must be the same in both libraries.
"""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

import symgrad
import symgrad.autograd.forward_ad as sym_fwAD


def _run(snippet, L, fwAD) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            snippet(L, fwAD)
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            print(f"{type(e).__name__}: {e}")
    while fwAD._current_level >= 0 if hasattr(fwAD, "_current_level") else False:
        fwAD.exit_dual_level()  # (a snippet that failed inside a level: close it)
    return out.getvalue()


def _same(torch, snippet) -> None:
    import torch.autograd.forward_ad as torch_fwAD
    assert _run(snippet, symgrad, sym_fwAD) == _run(snippet, torch, torch_fwAD)


def _errors(L, fwAD):
    def attempt(f):
        try:
            print(f())
        except Exception as e:  # noqa: BLE001
            print(type(e).__name__, e)
    x = L.tensor([1., 2., 3.])
    attempt(lambda: fwAD.make_dual(x, L.ones(3)))
    attempt(lambda: fwAD.unpack_dual(x))
    attempt(lambda: fwAD.exit_dual_level())
    with fwAD.dual_level() as level:
        print(level)
        attempt(lambda: fwAD.make_dual(x, L.ones(2)))
        attempt(lambda: fwAD.make_dual(x, L.ones(3, dtype=L.int64)))
        attempt(lambda: fwAD.make_dual(L.tensor([1, 2]), L.ones(2)))
        attempt(fwAD.enter_dual_level)
        d = fwAD.make_dual(x, L.ones(3))
        attempt(lambda: fwAD.make_dual(d, L.ones(3)))
        attempt(lambda: fwAD.make_dual(x, L.ones(3), level=3))
        attempt(lambda: fwAD.unpack_dual(d, level=5))
        print(d, d._base is x, d.requires_grad, d.is_leaf)
        u = fwAD.unpack_dual(d)
        print(u, type(u).__name__, u._fields, u.primal._base is x)
    attempt(lambda: fwAD.exit_dual_level(level=0))
    print(fwAD.unpack_dual(d))


def _values(L, fwAD):
    x = L.tensor([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]], dtype=L.float64)
    v = L.tensor([[1.0, 0.5, -2.0], [0.1, -0.3, 0.8]], dtype=L.float64)
    w = L.tensor([[0.2, 0.1], [-0.5, 0.9], [1.1, 0.4]], dtype=L.float64)
    fs = [lambda a: a.sin() * a.exp(), lambda a: a.softmax(-1), lambda a: a.log_softmax(0),
          lambda a: a.logsumexp(1), lambda a: (a @ w).tanh(), lambda a: a.max(dim=1).values,
          lambda a: a.sum(0) / a.norm(), lambda a: L.cat([a, a * 2], 0).t(),
          lambda a: L.where(a > 0, a ** 2, -a), lambda a: a.clamp(-0.5, 0.5).cumsum(1),
          lambda a: a.reshape(3, 2)[1:].prod(), lambda a: a.var(1), lambda a: a.float().abs(),
          lambda a: L.nn.functional.relu(a) + L.sigmoid(a), lambda a: a[:, [2, 0]].mean()]
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        for f in fs:
            y = f(dual)
            p, t = fwAD.unpack_dual(y)
            print(p.dtype, t.dtype, tuple(t.shape), L.round(t * 1e6).tolist())
        print(dual.exp())


def _by_hand(L, fwAD):
    """The ops the table's sampler cannot make inputs for (tests/ops/test_op_table.py's
    BY_HAND): layer_norm, nll_loss, embedding, bilinear, sort, topk, kthvalue."""
    F = L.nn.functional
    x = L.tensor([[0.3, -1.2, 0.7, 2.0], [1.5, 0.2, -0.4, 0.1]], dtype=L.float64)
    tx = L.tensor([[1.0, 0.5, -2.0, 0.3], [0.1, -0.3, 0.8, 1.1]], dtype=L.float64)
    w = L.tensor([1.5, -0.5, 2.0, 0.3], dtype=L.float64)
    tw = L.tensor([0.2, 0.4, -0.1, 1.0], dtype=L.float64)
    target = L.tensor([3, 0])
    with fwAD.dual_level():
        d, dw = fwAD.make_dual(x, tx), fwAD.make_dual(w, tw)
        outs = [F.layer_norm(d, (4,), w, w * 0.1), F.layer_norm(x, (4,), dw, dw),
                F.layer_norm(d, (4,)), F.nll_loss(F.log_softmax(d, 1), target),
                F.nll_loss(d, target, reduction="none"), F.cross_entropy(d, target),
                F.embedding(L.tensor([[0, 1], [1, 1]]), d),
                F.bilinear(d, d[:, :3], L.ones(2, 4, 3, dtype=L.float64)),
                d.sort(1).values, d.topk(2, dim=1).values, d.kthvalue(2, 1).values,
                d.cumprod(1), d.median(1).values]
        for y in outs:
            print(L.round(fwAD.unpack_dual(y).tangent * 1e8).tolist())


def _unsupported(L, fwAD):
    """Ops PyTorch has no forward mode for: its NotImplementedError and message."""
    x = L.tensor([0.5, 1.0], dtype=L.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, L.ones(2, dtype=L.float64))
        for f in [lambda: L.histogram(d, 3).hist, lambda: L.histc(d, 3),
                  lambda: L.bincount(L.tensor([0, 1]), weights=d), lambda: (d * 1).asinh_(),
                  lambda: L.autograd.grad(L.nn.functional.hardsigmoid(d).sum(), d,
                                          create_graph=True)[0]]:
            try:
                print(fwAD.unpack_dual(f()).tangent)
            except NotImplementedError as e:
                print(e)


def _in_place_and_views(L, fwAD):
    with fwAD.dual_level():
        a = fwAD.make_dual(L.tensor([1., 2.]), L.tensor([1., 0.]))
        a.mul_(3)
        print(fwAD.unpack_dual(a))
        b = L.zeros(2)
        b.copy_(a)
        print(fwAD.unpack_dual(b))
        c = L.zeros(4)
        view = c[:2]
        view.copy_(a)
        print(fwAD.unpack_dual(c), fwAD.unpack_dual(view))
        print(fwAD.unpack_dual(a[0]))
        e = fwAD.make_dual(L.ones(2, 2), L.eye(2))
        row = e[1]
        e.add_(e * 2)
        print(fwAD.unpack_dual(row).tangent, fwAD.unpack_dual(e.t()).tangent)


def _functions(L, fwAD):
    class Exp(L.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.result = output

        @staticmethod
        def jvp(ctx, g):
            return g * ctx.result

    class NoJvp(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Mul(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            ctx.save_for_backward(x)
            return x * y

        @staticmethod
        def jvp(ctx, tx, ty):
            x, y = ctx.saved_tensors  # save_for_forward's
            return tx * y + x * ty

    x = L.tensor([0.5, 1.0], dtype=L.float64, requires_grad=True)
    print(L.autograd.gradcheck(Exp.apply, (x,), check_forward_ad=True,
                               check_backward_ad=False))
    with fwAD.dual_level():
        d = fwAD.make_dual(x, L.tensor([1.0, 0.0], dtype=L.float64))
        t = fwAD.unpack_dual(Mul.apply(d, L.tensor([3.0, 4.0], dtype=L.float64))).tangent
        print(t, t.grad_fn.name())  # jvp ran in grad mode: its tangent records

    class Split(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, flag):
            a, b = x * 2, x.round()
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def jvp(ctx, t, flag):
            return t * 2, (t * 0 if flag else None)

    with fwAD.dual_level():
        d = fwAD.make_dual(L.tensor([1.2, 2.6]), L.tensor([1.0, 1.0]))
        a, b = Split.apply(d, False)
        print(fwAD.unpack_dual(a).tangent, fwAD.unpack_dual(b).tangent)
        try:
            Split.apply(d, True)
        except RuntimeError as e:
            print(e)
    with fwAD.dual_level():
        d = fwAD.make_dual(L.tensor([1.0]), L.tensor([2.0]))
        print(fwAD.unpack_dual(Exp.apply(d)))
        try:
            NoJvp.apply(d)
        except NotImplementedError as e:
            print(e)
    F = L.autograd.functional
    v = L.tensor([1., -1.], dtype=L.float64)
    print(F.jvp(lambda a: a.sin().cumsum(0), x.detach(), v))
    print(F.jacobian(lambda a, b: (a * b, a @ b), (x.detach(), v.abs()), strategy="forward-mode",
                     vectorize=True))
    print(F.hvp(lambda a: (a.sin() * a.exp()).sum(), x.detach(), v))


def _forward_over_reverse(L, fwAD):
    x = L.tensor([0.3, 0.9], dtype=L.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, L.tensor([1.0, 0.0], dtype=L.float64))
        y = (d.sin() * d ** 3).sum()
        (g,) = L.autograd.grad(y, d, create_graph=True)
        print(L.round(fwAD.unpack_dual(g).tangent * 1e6))


@pytest.mark.parametrize("snippet", [_errors, _values, _by_hand, _unsupported,
                                     _in_place_and_views, _functions, _forward_over_reverse])
def test_same_as_torch(torch, snippet):
    _same(torch, snippet)


def test_tutorial_runs_unchanged(torch):
    """PyTorch's forward-mode AD tutorial (its code but torch.func's part), with ``torch``
    bound to either library (``import torch...`` inside redirected): the same results, up to
    the random draws -- shapes, dtypes, which tangents are None, the checks it asserts."""
    source = Path(__file__).with_name("forward_ad_tutorial.txt").read_text()
    source = source.replace("import torch.autograd.forward_ad as fwAD",
                            "fwAD = torch.autograd.forward_ad")
    source = source.replace("import torch.nn as nn", "nn = torch.nn")
    source = source.replace("import torch\n", "")
    seen = []
    for lib in (symgrad, torch):
        namespace = {"torch": lib, "__name__": "tutorial"}
        exec(compile(source, "forward_ad_tutorial.py", "exec"), namespace)
        jvp, primal = namespace["jvp"], namespace["primal"]
        # the last jvp is Fn's: exp(primal) * tangent
        expected = (primal.detach().exp() * namespace["tangent"]).numpy()
        assert abs(jvp.detach().numpy() - expected).max() < 1e-12
        seen.append((tuple(jvp.shape), str(jvp.dtype), type(namespace["out"]).__name__))
    assert seen[0] == seen[1]


_FUNCTIONAL_PARTS = '''
import functools
torch.manual_seed(0)
model = torch.nn.Linear(5, 5)
inp = torch.randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    jvp = fwAD.unpack_dual(model(inp)).tangent
model = torch.nn.Linear(5, 5)
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    jvp2 = fwAD.unpack_dual(torch.func.functional_call(model, dual_params, inp)).tangent
same = torch.allclose(jvp, jvp2)

def fn(x, y):
    return x ** 2 + y ** 2

x, v, y = torch.randn(10, 10), torch.randn(10, 10), torch.randn(10, 10)
primal_out, tangent_out = torch.func.jvp(functools.partial(fn, y=y), (x,), (v,))
model = torch.nn.Linear(5, 5)
params = dict(model.named_parameters())
param_tangents = {k: torch.rand_like(p) for k, p in params.items()}
model_out, jvp_out = torch.func.jvp(
    lambda p: torch.func.functional_call(model, p, (inp,)), (params,), (param_tangents,))
'''


def test_tutorial_functional_parts(torch):
    """The forward-mode tutorial's parts on the functional API: dual parameters through
    ``functional_call`` equal dual attributes of the module, and ``jvp`` of a partial and of
    a module's parameters (the tutorial's ``functorch.jvp``/``make_functional_with_buffers``,
    a separate package, written with ``torch.func``): the same values as PyTorch (the same
    seed gives the same draws and layers in both)."""
    results = []
    for lib in (symgrad, torch):
        namespace = {"torch": lib, "fwAD": lib.autograd.forward_ad}
        exec(compile(_FUNCTIONAL_PARTS, "forward_ad_functional", "exec"), namespace)
        assert namespace["same"] is True
        results.append([namespace[k].detach().numpy() for k in (
            "jvp", "jvp2", "primal_out", "tangent_out", "model_out", "jvp_out")])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # (float32)


def _primal_facts(lib) -> list:
    fw = lib.autograd.forward_ad
    x = lib.tensor([1., 2.], requires_grad=True)
    z = lib.tensor([1., 2.])
    facts = [fw.unpack_dual(x).primal is x]  # no level: the tensor itself
    with fw.dual_level():
        d = fw.make_dual(x, lib.tensor([3., 4.]))
        for source in (d, x, d * 3, z, lib.tensor([1, 2])):
            p = fw.unpack_dual(source).primal
            fn = p.grad_fn
            root = source if source._base is None else source._base
            facts.append((repr(p), p is source, p._base is root,
                          p.is_leaf, p.requires_grad, p._version,
                          None if fn is None else (fn.name(), type(fn).__name__,
                                                   repr(fn).split(" at ")[0],
                                                   [type(f).__name__ for f, _ in
                                                    fn.next_functions])))
        (fw.unpack_dual(d).primal * lib.tensor([2., 5.])).sum().backward()
        facts.append(x.grad.tolist())
    return facts


def test_unpack_dual_primal_is_pytorchs_identity_view(torch):
    """Inside a level the primal is always a new view (of a tensor with or without a
    tangent, requiring grad or not): ``grad_fn=<Identity>`` (``torch::autograd::Identity``,
    a ``CppFunction``) whose gradient passes through, as PyTorch 2.13's ``_fw_primal``."""
    assert _primal_facts(symgrad) == _primal_facts(torch)
