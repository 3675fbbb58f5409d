"""``symgrad.autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp.

All are built from :func:`symgrad.autograd.grad`; with ``create_graph=True`` the results
stay differentiable.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..graph import GRAD_MODE
from ..tensor import Tensor, _make

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _tuple(x):
    return (x, False) if isinstance(x, tuple) else ((x,), True)


def _prepare(inputs, create_graph):
    out = []
    for x in inputs:
        if not isinstance(x, Tensor):
            raise TypeError("The inputs given to the function must be either a Tensor or a "
                            "tuple of Tensors but the given argument has type "
                            f"{type(x).__name__}.")
        x = x if create_graph and x.requires_grad else x.detach()
        out.append(x.requires_grad_(True) if not x.requires_grad else x)
    return tuple(out)


def _grad(outputs, inputs, grad_outputs, create_graph):
    from . import grad
    if not outputs.requires_grad:
        return tuple(None for _ in inputs)
    return grad(outputs, inputs, grad_outputs, retain_graph=True,
                create_graph=create_graph, allow_unused=True)


def _zeros_if_none(g, x, create_graph):
    if g is None:
        return _make(np.zeros(x._data.shape, x.dtype.np), x.dtype)
    return g if create_graph else g.detach()


def _enabled():
    class _on:
        def __enter__(self):
            self.prev = GRAD_MODE.enabled
            GRAD_MODE.enabled = True

        def __exit__(self, *exc):
            GRAD_MODE.enabled = self.prev
            return False
    return _on()


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), vᵀ J)``."""
    inputs, single = _tuple(inputs)
    with _enabled():
        xs = _prepare(inputs, create_graph)
        out = func(*xs)
        outs, single_out = _tuple(out)
        vs = _tuple(v)[0] if v is not None else (None,) * len(outs)
        grads = [None] * len(xs)
        for o, vv in zip(outs, vs):
            for i, g in enumerate(_grad(o, xs, vv, create_graph)):
                if g is not None:
                    grads[i] = g if grads[i] is None else grads[i] + g
    grads = tuple(_zeros_if_none(g, x, create_graph) for g, x in zip(grads, xs))
    out = tuple(o if create_graph else o.detach() for o in outs)
    return (out[0] if single_out else out), (grads[0] if single else grads)


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: shape ``out.shape + in.shape``.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    from ..functional import stack
    inputs, single = _tuple(inputs)
    with _enabled():
        xs = _prepare(inputs, create_graph)
        outs, single_out = _tuple(func(*xs))
        result = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [[] for _ in xs]
            for k in range(flat.shape[0]):
                gs = _grad(flat[k], xs, None, create_graph)
                for i, (g, x) in enumerate(zip(gs, xs)):
                    rows[i].append(_zeros_if_none(g, x, create_graph))
            per_input = []
            for i, x in enumerate(xs):
                if rows[i]:
                    j = stack(rows[i]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    j = _make(np.zeros(tuple(o.shape) + tuple(x.shape), x.dtype.np), x.dtype)
                per_input.append(j if create_graph else j.detach())
            result.append(per_input[0] if single else tuple(per_input))
    return result[0] if single_out else tuple(result)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``."""
    inputs_t, single = _tuple(inputs)

    def gradient(*xs):
        from . import grad
        out = func(*xs)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        gs = tuple(_zeros_if_none(g, x, True) for g, x in zip(gs, xs))
        return gs[0] if single else gs

    return jacobian(gradient, inputs, create_graph=create_graph)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)`` by the double-vjp trick."""
    inputs_t, single = _tuple(inputs)
    j = jacobian(func, inputs, create_graph=create_graph)
    with _enabled():
        out = func(*_prepare(inputs_t, False))
    outs, single_out = _tuple(out)
    vs = _tuple(v)[0] if v is not None else tuple(
        _make(np.ones(x._data.shape, x.dtype.np), x.dtype) for x in inputs_t)
    js = (j,) if single_out else j
    res = []
    for o, jo in zip(outs, js):
        jo = (jo,) if single else jo
        total = None
        for ji, vi, x in zip(jo, vs, inputs_t):
            flat = ji.reshape(o.numel(), x.numel()) @ vi.reshape(-1)
            total = flat if total is None else total + flat
        res.append(total.reshape(o.shape))
    out = tuple(o.detach() for o in outs)
    return (out[0] if single_out else out), (res[0] if single_out else tuple(res))


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), vᵀ H)``."""
    inputs_t, single = _tuple(inputs)
    with _enabled():
        xs = _prepare(inputs_t, True)
        out = func(*xs)
        from . import grad
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        vs = _tuple(v)[0]
        total = None
        for g, vi in zip(gs, vs):
            if g is not None:
                term = (g * vi).sum()
                total = term if total is None else total + term
        res = _grad(total, xs, None, create_graph) if total is not None else (None,) * len(xs)
    res = tuple(_zeros_if_none(r, x, create_graph) for r, x in zip(res, xs))
    return out.detach(), (res[0] if single else res)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)``; the Hessian is symmetric, so this is ``vhp``."""
    return vhp(func, inputs, v, create_graph, strict)
