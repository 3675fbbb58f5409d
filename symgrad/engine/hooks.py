"""The user's hooks during a backward pass, called in PyTorch's order and checked as
PyTorch checks what they return.

Hooks see gradients as tensors (:func:`wrap`); what a hook hands back is carried on as
the pass's backend carries gradients (``m.unwrap``: an array on
:data:`~symgrad.ir.backends.NUMPY`, the tensor itself when the pass is recorded).
"""
from __future__ import annotations

import numpy as np

from ..ops.dtypes import from_numpy
from ..ir.injected import INJECTED
from ..ir.node import AccumulateGrad, Node

__all__ = ["wrap", "call_hooks", "call_pre_hooks", "call_post_hooks", "tensor_hooks",
           "root_tensor_hooks", "run_leaf"]


def wrap(g):
    """A gradient as users see it in hooks: a tensor (or None)."""
    if g is None or isinstance(g, INJECTED.Tensor):
        return g
    g = np.asarray(g)
    return INJECTED.make(g, from_numpy(g.dtype))


def _hook_name(h) -> str:
    return getattr(h, "__name__", type(h).__name__)


def call_hooks(hooks: list, g, m):
    """Tensor hooks: ``hook(grad)``; a returned tensor replaces the gradient."""
    for h in list(hooks):
        old = wrap(g)
        r = h(old)
        if r is not None:
            _check_replacement(old, r)
            if old is not None:
                if r.shape != old.shape:
                    raise RuntimeError(f"hook '{_hook_name(h)}' has changed the size of "
                                       "value")
                if r.dtype is not old.dtype:
                    names = INJECTED.legacy_names
                    raise RuntimeError(
                        f"hook '{_hook_name(h)}' has changed the type of value (was "
                        f"torch.{names[old.dtype.name]} got torch.{names[r.dtype.name]})")
            g = m.unwrap(r)
    return g


def _check_replacement(old, new) -> None:
    if new is not None and not isinstance(new, INJECTED.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if old is None and new is not None:
        raise RuntimeError("can't replace a None gradient with a non-None value")


def _hook_result(h, r, expected: int) -> tuple:
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != expected:
        raise RuntimeError(f"hook '{_hook_name(h)}' has returned an incorrect number of "
                           f"values (got {len(r)}, but expected {expected})")
    return r


def call_pre_hooks(node: Node, g, m):
    """Node pre-hooks: ``hook(grad_outputs)``; a returned tuple replaces them."""
    multi = node._n_outputs != 1
    gs = list(g) if multi else [g]
    for h in list(node._pre_hooks):
        r = h(tuple(wrap(x) for x in gs))
        if r is not None:
            r = _hook_result(h, r, len(gs))
            for old, new in zip(gs, r):
                _check_replacement(old, new)
            gs = [m.unwrap(x) for x in r]
    return gs if multi else gs[0]


def call_post_hooks(node: Node, grads, g, m):
    """Node hooks: ``hook(grad_inputs, grad_outputs)``; a returned tuple replaces inputs."""
    for h in list(node._hooks):
        outs = g if node._n_outputs != 1 else (g,)
        r = h(tuple(wrap(x) for x in grads), tuple(wrap(x) for x in outs))
        if r is not None:
            r = _hook_result(h, r, len(grads))
            for old, new in zip(grads, r):
                _check_replacement(old, new)
            grads = [m.unwrap(x) for x in r]
    return grads


def tensor_hooks(node: Node, g, m):
    """The gradient of a node's output(s) after the tensors' hooks, retained if asked."""
    if node._n_outputs != 1:
        return _output_tensor_hooks(node, g, m)
    if node._tensor_pre_hooks:
        g = call_hooks(node._tensor_pre_hooks, g, m)
    if node._retain is not None:
        t = node._retain()
        if t is not None and g is not None:
            m.retain(t, g)
    return g


def _output_tensor_hooks(node: Node, gs: list, m) -> list:
    """Tensor hooks, then retain_grad, of each output of a multi-output node."""
    gs = list(gs)
    hooks = node.__dict__.get("_output_hooks", {})
    retains = node.__dict__.get("_retains", {})
    for nr in range(node._n_outputs):
        if hooks.get(nr):
            gs[nr] = call_hooks(hooks[nr], gs[nr], m)
        ref = retains.get(nr)
        t = ref() if ref is not None else None
        if t is not None and gs[nr] is not None:
            m.retain(t, gs[nr])
    return gs


def root_tensor_hooks(node: Node, g, m) -> None:
    """Tensor hooks and retain_grad of a root that leads to no input (PyTorch runs them)."""
    if node._n_outputs != 1 and g is None:
        g = [None] * node._n_outputs
    tensor_hooks(node, g, m)


def run_leaf(node: AccumulateGrad, g, g_owned: bool, m) -> None:
    """An AccumulateGrad node, in PyTorch's order: tensor hooks, node pre-hooks,
    accumulation into ``.grad``, post-accumulate hooks, node hooks.  ``g_owned``: the pass
    made ``g`` and nobody else holds it."""
    if node._tensor_pre_hooks:
        g = call_hooks(node._tensor_pre_hooks, g, m)
        g_owned = False  # a hook may keep the gradient it was given
    if node._pre_hooks:
        g = call_pre_hooks(node, g, m)
        g_owned = False
    if g is not None:
        m.accumulate(node.variable, g, g_owned)
        post = node.variable._post_accumulate_hooks
        if post:
            for h in list(post):
                r = h(node.variable)
                if r is not None:
                    raise TypeError("expected Variable, but hook returned "
                                    f"'{type(r).__name__}'")
    if node._hooks:
        call_post_hooks(node, (), g, m)
