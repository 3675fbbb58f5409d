"""Subclasses of Tensor (``class P(torch.Tensor)``) against PyTorch 2.13: results of
methods, operators and functions are ``P`` (the default ``__torch_function__``; an
``AliasBackward0`` on top where it records), ``__torch_function__`` overrides see PyTorch's
function names, ``NotImplemented`` everywhere gives Python's operator error,
``nn.Parameter`` opts out.  Each snippet runs on both and prints the same text."""
from __future__ import annotations

import pytest

import symgrad
from conftest import printed

torch = pytest.importorskip("torch")

_run = printed


_CALLS = {
    "p * 2": "p * 2", "2 * p": "2 * p", "1 - p": "1 - p", "1 / p": "1 / p", "p ** 2": "p ** 2",
    "2 ** p": "2 ** p", "-p": "-p", "abs(p)": "abs(p)", "p @ p": "p @ p", "p % 2": "p % 2",
    "p > 2": "p > 2", "p == p": "p == p", "p.sum()": "p.sum()", "p.sum(1)": "p.sum(1)",
    "p.mean()": "p.mean()", "p[0]": "p[0]", "p[:, 1:]": "p[:, 1:]", "p[p > 2]": "p[p > 2]",
    "p.T": "p.T", "p.view(4)": "p.view(4)", "p.reshape(-1)": "p.reshape(-1)",
    "p.exp()": "p.exp()", "p.clamp(0, 2)": "p.clamp(0, 2)", "p.float()": "p.float()",
    "p.long()": "p.long()", "p.to(float64)": "p.to(torch.float64)", "p.detach()": "p.detach()",
    "p.clone()": "p.clone()", "p.data": "p.data", "p.new_zeros(2)": "p.new_zeros(2)",
    "torch.add(p, 1)": "torch.add(p, 1)", "torch.ones(2, 2) + p": "torch.ones(2, 2) + p",
    "torch.exp(p)": "torch.exp(p)", "torch.stack([p, p])": "torch.stack([p, p])",
    "torch.cat": "torch.cat((p, torch.ones(1, 2)))", "torch.zeros_like(p)": "torch.zeros_like(p)",
    "torch.where": "torch.where(p > 2, p, torch.zeros(2, 2))",
    "F.softmax": "torch.nn.functional.softmax(p, dim=1)",
    "F.mse_loss": "torch.nn.functional.mse_loss(p, torch.zeros(2, 2))",
    "F.linear": "torch.nn.functional.linear(p, torch.ones(3, 2))",
    "linalg.norm": "torch.linalg.norm(p)", "p.unbind()": "p.unbind()", "list(p)": "list(p)",
    "p.split(1)": "p.split(1)", "p.max(0)": "p.max(0)", "torch.max(p, 0)": "torch.max(p, 0)",
    "p.sort()": "p.sort()", "p.shape": "p.shape", "p.dtype": "p.dtype", "p.tolist()": "p.tolist()",
    "p.numel()": "p.numel()", "p[0, 0].item()": "p[0, 0].item()", "len(p)": "len(p)",
    "torch.allclose": "torch.allclose(p, p)", "format 0-d": "f'{p[0, 0]:.2f}'",
    "repr": "repr(p)", "no_grad": "_no_grad(lambda: p * 2)",
}
_SETUP = """
class P(torch.Tensor):
    pass
p = P([[1., 2.], [3., 4.]])
def _no_grad(f):
    with torch.no_grad():
        return f()
def kinds(r):
    return [type(x).__name__ for x in r] if isinstance(r, (tuple, list)) else type(r).__name__
"""
CALLS = {name: _SETUP + f"""
r = {call}
show(kinds(r), r)
""" for name, call in _CALLS.items()}

SNIPPETS = {
    "autograd through a subclass": _SETUP + """
a = P([1., 2.]).requires_grad_()
b = a * 3
show(type(b).__name__, b, b.grad_fn, b.grad_fn.next_functions)
loss = (b * a).sum()
loss.backward()
show(type(loss).__name__, loss, type(a.grad).__name__, a.grad)
show(a, a[0], a.detach(), a.clone(), type(a.data).__name__)
""",
    "an override sees PyTorch's names, and its result is what it returns": """
names = []
class Q(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        names.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs or {})
q = Q([1., 2.])
for r in (q + 1, 1 + q, q - 1, q * 2, q / 2, q ** 2, -q, q % 2, q[0], q.sum(), torch.mul(q, 2),
          torch.ones(2) + q, q == q, q < 1, q.shape, q.dtype, q.ndim):
    show(type(r).__name__, names)
    names.clear()
class H(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return "hi"
h = H([1.])
show(h + 1, torch.add(h, 1), h.sum(), torch.ones(1) + h, h[0], h.shape)
""",
    "NotImplemented everywhere": """
class R(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented
r = R([1.])
try:
    r + 1
except TypeError as e:
    show(e)
""",
    "Parameter opts out, a subclass of a subclass wins": """
show(type(torch.nn.Parameter(torch.ones(2)) * 2).__name__)
class M(torch.nn.Parameter):
    pass
show(type(M(torch.ones(2)) * 2).__name__)
class P(torch.Tensor):
    pass
class P2(P):
    pass
show(type(P2([1.]) + P([2.])).__name__, type(P([2.]) + P2([1.])).__name__)
show(isinstance(P([1.]), torch.Tensor), torch.Tensor.__torch_function__)
""",
    "a subclass with slots, one with attributes of its own": """
class S(torch.Tensor):
    __slots__ = ("tag",)
a = S([1., 2.]).requires_grad_()
b = a * 2
show(type(b).__name__, b, b.grad_fn.next_functions)
b.sum().backward()
show(a.grad)
class N(torch.Tensor):
    def __new__(cls, data, tag=None):
        t = super().__new__(cls, data)
        t.tag = tag
        return t
n = N([1.], tag="a")
show(type(n + 1).__name__, n.tag, getattr(n + 1, "tag", "none"))
""",
    "as_subclass": """
class P(torch.Tensor):
    pass
x = torch.tensor([1., 2.], requires_grad=True)
y = x.as_subclass(P)
show(type(y).__name__, y, y.grad_fn, y.grad_fn.next_functions)
z = torch.tensor([1., 2.]).as_subclass(P)
z.add_(1)
show(z, z._version)
""",
}


@pytest.mark.parametrize("code", list(CALLS.values()), ids=list(CALLS))
def test_results_are_the_subclass(code):
    assert _run(code, symgrad) == _run(code, torch)


@pytest.mark.parametrize("code", list(SNIPPETS.values()), ids=list(SNIPPETS))
def test_subclass_snippets(code):
    assert _run(code, symgrad) == _run(code, torch)


def test_a_subclass_result_is_not_vacuous():
    lines = _run(CALLS["p * 2"], symgrad)
    assert lines == ["P P([[2., 4.],\n   [6., 8.]])"]


def test_a_dispatching_subclass_leaves_symgrad_s_own_tools_alone():
    # (draw reads its caller's names: a dispatching wrapper around it hid them, and the
    # leaves were drawn as "leaf" for the rest of the process)
    class Tagged(symgrad.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    X = symgrad.tensor([1., 2., 3.], requires_grad=True)
    Y = symgrad.tensor([5., 6., 7.], requires_grad=True)
    d = symgrad.draw(symgrad.sin(symgrad.dot(X, Y)), show_local=True)
    assert "cos(⟨X, Y⟩)" in d.source
    assert not hasattr(symgrad.draw, "_dispatches") and hasattr(symgrad.dot, "_dispatches")
