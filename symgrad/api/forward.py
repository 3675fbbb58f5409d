"""Forward mode's propagation: the tangent of every op's result, from its record.

:func:`~symgrad.api.apply.apply` asks :data:`~symgrad.api.dual.DUAL` one question (is a
level open?) and, when one is, hands its result to :func:`propagate`, which runs the op's
JVP (:func:`symgrad.ops.jvp.jvp_of`) on recorded tensors (:data:`~.recorded.TENSOR`):
tangents are tensors with histories of their own, so a ``create_graph`` backward through
them (forward-over-reverse) and tangents of tangents (nested levels) work as any other
graph does.  In-place writes run :func:`in_place` (the tangent is changed in place, so
views of it see the change).

An op whose record has no JVP of its own (``jvp_of(op) is None``) gets the transpose of its
gradient rule: ``J t = d/du <Jᵀ u, t>`` computed by a recorded backward pass in ``u``
(:func:`transposed`), correct wherever the gradient rule is, at the cost of a backward pass.
"""
from __future__ import annotations

import numpy as np

from ..ir.node import GRAD_MODE
from ..ops.jvp import jvp_of
from .apply import _view_root, apply, saved_values
from .core import Tensor, _make
from .dual import DUAL, set_tangent, tangent
from .gradients import grad as _grad
from .recorded import TENSOR

__all__ = ["propagate", "in_place", "carry", "transposed", "result_tangent"]


def result_tangent(op, args, attrs, out, tangents):
    """The tangent of ``out = op(*args, *attrs)`` given the operands' ``tangents`` (the
    level being computed must be masked by the caller)."""
    saved = tuple(saved_values(op, args, attrs, out))
    rule = jvp_of(op)
    if rule is None:
        return transposed(op, args, attrs, out, tangents, saved)
    return rule(TENSOR, tangents, args, attrs, out, saved)


def transposed(op, args, attrs, out, tangents, saved):
    """``J t`` as the gradient of ``<Jᵀ u, t>`` in ``u`` (the gradient rule is linear in
    ``u``): for ops with no JVP of their own."""
    enabled = GRAD_MODE.enabled
    GRAD_MODE.enabled = True
    try:
        u = _make(np.zeros(np.shape(out._data), out.dtype.np), out.dtype, True)
        total = None
        for i, t in enumerate(tangents):
            rule = op.grads[0] if op.variadic else op.grads[i]
            if t is None or rule is None:
                continue
            g = rule(TENSOR, u, *saved, i) if op.variadic else rule(TENSOR, u, *saved)
            if g is None:
                continue
            g = TENSOR.conform(g, (tuple(args[i].shape), g.dtype))
            term = (g * t).sum()
            total = term if total is None else total + term
        if total is None:
            return None
        if not total.requires_grad:
            return _make(np.zeros(np.shape(out._data), out.dtype.np), out.dtype)
        (jt,) = _grad(total, u, create_graph=enabled, allow_unused=True)
    finally:
        GRAD_MODE.enabled = enabled
    if jt is None:
        return _make(np.zeros(np.shape(out._data), out.dtype.np), out.dtype)
    return jt if enabled else jt.detach()


def _fit(t, out):
    """A tangent as the result's: a tensor of its shape."""
    if not isinstance(t, Tensor):
        return _make(np.full(np.shape(out._data), t, out.dtype.np), out.dtype)
    if t.shape != out.shape:
        t = t.expand(tuple(out.shape)).clone()
    return t


def _masked(level, compute, *args):
    DUAL.masked.append(level)
    try:
        return compute(*args)
    finally:
        DUAL.masked.remove(level)


def propagate(op, args, attrs, out):
    """Give ``out`` (the result of ``op``) its tangent at each active level where an
    operand has one; returns ``out``."""
    if op.grads is None or not out._dtype.is_floating_point:
        return out
    for level in DUAL.active():
        tangents = tuple(tangent(a, level) if isinstance(a, Tensor) else None for a in args)
        if all(t is None for t in tangents):
            continue
        batched = DUAL.batched.get(level)
        if batched is not None:  # (a leading dimension of basis tangents: symgrad.func)
            t = _masked(level, batched.propagate, op, args, attrs, out, tangents)
            if t is not None:
                set_tangent(out, level, t)
            continue
        t = _masked(level, result_tangent, op, args, attrs, out, tangents)
        if t is not None:
            t = _fit(t, out)
            if not op.view and any(tt is not None and np.may_share_memory(t._data, tt._data)
                                   for tt in tangents):
                # (x + 1's tangent is x's: an in-place change of x must not reach it)
                t = _masked(level, t.clone)
            if t.dtype is not out.dtype and all(
                    tt is None or tt.dtype is a.dtype for a, tt in zip(args, tangents)):
                # tangents of their primals' dtypes: the result's is its primal's (as
                # PyTorch's formulas promote: a 0-d operand's tangent does not widen it)
                t = _masked(level, t.to, out.dtype)
            set_tangent(out, level, t)
    return out


def in_place(t, op, others, attrs) -> dict:
    """Before ``t.<op>_(*others)`` writes its values: write the new tangent into ``t``'s
    tangent, in place (a view of it sees the change; ``t`` gets one if it had none).
    Returns ``{level: copy of the tangent before}``, for the original value the op's node
    saves (forward-over-reverse through an in-place op)."""
    levels = DUAL.active()
    operands = (t,) + tuple(others)
    if not any(tangent(x, lv) is not None for lv in levels for x in operands
               if isinstance(x, Tensor)):
        return {}
    for level in levels:
        if level in DUAL.batched:
            DUAL.batched[level].refuse(f"the in-place {op.name}")
    try:
        result = apply(op, operands, attrs)
    except NotImplementedError:
        raise  # (no forward mode for the op)
    except Exception:  # noqa: BLE001 - the write itself fails next, with its own message
        return {}
    before = {}
    for level in levels:
        new, old = tangent(result, level), tangent(t, level)
        if old is not None:
            before[level] = _masked(level, old.clone)
        if new is None and old is None:
            continue
        if old is None and t._view_of is not None:
            root = t
            while root._view_of is not None:
                root = root._view_of[0]
            if tangent(root, level) is None:
                set_tangent(root, level, _make(np.zeros(np.shape(root._data), root.dtype.np),
                                               root.dtype))
            old = tangent(t, level)
        if old is None:
            set_tangent(t, level, _fit(new, t).to(t.dtype) if new is not None else None)
            continue
        values = np.zeros(np.shape(old._data)) if new is None else new._data
        if new is not None and new.requires_grad and old._view_of is None \
                and old.grad_fn is None and not old._requires_grad:
            set_tangent(t, level, _fit(new, t))  # keeps the new tangent's history
            continue
        old._write(values, op)
        old._vc[0] += 1
    return before


def carry(source, before: dict) -> None:
    """Give ``source`` (an in-place op's copy of the value before) the tangents before."""
    for level, t in before.items():
        set_tangent(source, level, t)


def view_tangent(view, root, level):
    """The tangent of ``view`` (a view of ``root``, which has a tangent at ``level``): the
    same view of the root's tangent."""
    _, path = _view_root(view)
    t = tangent(root, level)
    batched = DUAL.batched.get(level)

    def walk(t):
        for op, attrs in path:
            t = apply(op, (t,), attrs) if batched is None else batched.view(op, t, attrs)
        return t
    return _masked(level, walk, t)


DUAL.propagate = propagate
DUAL.in_place = in_place
DUAL.carry = carry
DUAL.view_tangent = view_tangent
