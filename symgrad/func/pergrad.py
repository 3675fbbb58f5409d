"""``vmap(grad(f))`` and ``vmap(jacrev(f))`` without a loop over the samples: the function
traced once, its program run once on the whole batch, one backward pass for every sample's
gradient (for ``jacrev``: one batched pass over the unit cotangents, every sample's
Jacobian).

How it runs
-----------
1. **Trace.**  ``grad(f)`` runs on the first sample as the loop would run it, while every
   op that :func:`~symgrad.api.apply.apply` runs is written down (``op``, operands,
   attributes, result).  Under ``vmap`` the program cannot depend on a sample's values
   (``.item()``, ``bool``, data-dependent shapes are refused as PyTorch refuses them), so
   it is the program of every sample.
2. **Replay on the batch.**  The samples' inputs are the whole batch (batch first), each
   differentiated input that is not batched (the parameters of per-sample gradients) is
   expanded to one copy per sample, and the program runs once on these
   :class:`~.batched.Batch` values: the point-wise ops and those with a batching rule
   (the side table :data:`~symgrad.ops.tables.BATCHING`, registered beside each op:
   views, reductions, matrix products, convolutions, pooling) run once on all samples,
   any other op sample by sample (numpy calls, stacked).  All of it is recorded by
   autograd.
3. **One backward.**  No sample's result depends on another sample's inputs or copies of
   the parameters, so the gradient of the sum of the per-sample results with respect to
   the batched inputs and the expanded parameters is, row by row, each sample's gradient.
4. **Checked.**  The batched gradients of the first and the last sample are compared
   with the loop's (the trace's own pass, and one more sample run as the loop runs it).

The trace hooks :data:`~symgrad.api.dual.DUAL` (process-wide, as forward-mode levels are):
ops another thread runs meanwhile are recorded too, as constants of the program.

Anything the replay does not model raises :class:`~.batched.NotBatchable`, and ``vmap``
runs its loop: an in-place op on a value of the sample, an operand that depends on the
sample but was not computed by a recorded op, an attribute that holds an array, random
draws with ``randomness='different'``, a transform around the ``vmap`` or
inputs that require grad (results that must stay differentiable), a check that fails.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.func import grad, vmap
>>> w = torch.tensor([1., 2.])
>>> vmap(grad(lambda w, x: (w * x).sin().sum()), in_dims=(None, 0))(w, torch.eye(2))
tensor([[ 0.5403,  0.0000],
        [ 0.0000, -0.4161]])
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..api import creation
from ..api.dual import DUAL
from ..api.core import _make
from ..api.functional import cat
from ..api.tensor import Tensor
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..engine.reverse import run_backward
from ..ir.backends import NUMPY
from . import levels
from .batched import BATCHED_RULES, Batch, NotBatchable, batched_grad
from .pytree import tree_flatten, tree_unflatten
from .reverse import (BATCH_ELEMENTS, _chosen, _grads, _jacobian_of, _one, _replace,
                      argnums_of, wrap_inputs)

__all__ = ["vmap_grad", "STATS"]

#: How often the batched path ran and fell back (``{"batched": n, "loop": m}``).
STATS = {"batched": 0, "loop": 0}

_LEVEL = -24  # (the level the trace opens: no tensor ever has a tangent there)
JACOBIAN = "jacrev"  # (the last entry of a jacrev's spec: every sample's Jacobian)
HESSIAN = "hessian"  # (hessian's: every sample's Jacobian of the inner jacrev)
HESSIAN_ROWS = 2 ** 13  # (at most this many rows of a batched Hessian pass, else the loop)


# The replay's backend: the batching rules of the ops (the side table ``BATCHING``,
# registered beside each op in symgrad/ops) on recorded tensors, any other op sample by
# sample.
REPLAY = BATCHED_RULES


# --------------------------------------------------------------------------- trace
class _Trace:
    """The ops run while the trace is open, and whether something was not modelled."""

    def __init__(self) -> None:
        self.records: list = []
        self.refused: str | None = None
        self.drawn = False


@contextlib.contextmanager
def _tracing(trace: _Trace):
    """Record every op :func:`~symgrad.api.apply.apply` runs (through the forward-mode
    hook, with a level open that no tangent lives at), refuse in-place ops."""
    propagate, in_place = DUAL.propagate, DUAL.in_place

    def record(op, args, attrs, out):
        trace.records.append((op, args, attrs, out))
        return propagate(op, args, attrs, out)

    def write(t, op, others, attrs):
        trace.refused = trace.refused or f"the in-place {op.name}"
        return in_place(t, op, others, attrs)

    def drawn():
        trace.drawn = True

    DUAL.propagate, DUAL.in_place = record, write
    DUAL.levels.append(_LEVEL)
    creation.RANDOM_DRAW_HOOKS.append(drawn)
    try:
        yield trace
    finally:
        creation.RANDOM_DRAW_HOOKS.remove(drawn)
        DUAL.levels.remove(_LEVEL)
        DUAL.propagate, DUAL.in_place = propagate, in_place


def _array_in(attrs) -> bool:
    for a in attrs:
        if isinstance(a, (np.ndarray, Tensor)) or (
                isinstance(a, (tuple, list)) and _array_in(a)):
            return True
    return False


def _replay(records: list, env: dict, size: int, token: int) -> None:
    """Run the traced program on the batch: ``env`` maps the traced tensors (by id) to
    their batched values."""
    for op, args, attrs, out in records:
        values, batched = [], False
        for a in args:
            v = env.get(id(a)) if isinstance(a, Tensor) else None
            if v is None and isinstance(a, Tensor) and a._vmap and token in a._vmap:
                raise NotBatchable("a value of the sample not computed by a recorded op")
            batched = batched or v is not None
            values.append(a if v is None else v)
        if not batched:
            continue  # (a constant of the program)
        if _array_in(attrs):
            raise NotBatchable("an attribute holding an array")
        got = REPLAY.call(op, *values, *attrs)
        if not isinstance(got, Batch) or tuple(got.data.shape) != (size,) + tuple(out.shape):
            raise NotBatchable(f"{op.name}: the batched result has another shape")
        data = got.data
        env[id(out)] = Batch(data if data.dtype is out.dtype else data.to(out.dtype))


# --------------------------------------------------------------------------- the rule
def _sample(arg, d: int, b: int):
    return arg[(slice(None),) * d + (b,)]


def _close(batched, ref) -> bool:
    """Whether a batched row equals the loop's up to rounding (a product of many rows
    rounds otherwise than one row's: float32's saturated ``tanh`` shows it above 1e-5)."""
    a = np.asarray(batched.detach()._data, dtype=np.float64)
    r = np.asarray(ref.detach()._data, dtype=np.float64)
    scale = max(1.0, float(np.abs(r).max()) if r.size else 0.0)
    rtol = 1e-7 if ref.dtype.itemsize >= 8 else 1e-3
    return a.shape == r.shape and bool(np.allclose(a, r, rtol=rtol, atol=rtol * 1e-2 * scale))


def vmap_grad(spec: tuple, size: int, flat_dims: list, flat_args: list, args_spec,
              randomness: str, token: int):
    """``vmap(grad(f))`` (or ``grad_and_value``, ``jacrev``: ``spec`` is the transform's
    ``per_sample`` attribute) of the samples in one batched pass;
    raises :class:`~.batched.NotBatchable` where the loop must run."""
    wrapper, func, argnums, has_aux, with_value = spec
    try:
        result = _batched(wrapper, func, argnums, has_aux, with_value, size, flat_dims,
                          flat_args, args_spec, randomness, token)
    except NotBatchable:
        STATS["loop"] += 1
        raise
    STATS["batched"] += 1
    return result


def _batched(wrapper, func, argnums, has_aux, with_value, size, flat_dims, flat_args,
             args_spec, randomness, token):
    if ((has_aux and with_value not in (True, False)) or size < 2 or levels.depth()
            or levels.vmaps() != 1 or DUAL.levels or not is_grad_enabled()):
        raise NotBatchable("not the plain case")
    tensors = [a for a in flat_args if isinstance(a, Tensor)]
    if any(t.requires_grad for t in tensors) or len({id(t) for t in tensors}) != len(tensors):
        raise NotBatchable("inputs requiring grad or given twice")
    state = creation.default_generator.get_state() if randomness != "error" else None
    try:
        return _run(wrapper, func, argnums, (has_aux, with_value), size, flat_dims, flat_args,
                    args_spec, randomness, token, state)
    except NotBatchable:
        if state is not None:  # (the loop draws as if the trace had not run)
            creation.default_generator.set_state(state)
        raise


def _run(wrapper, func, argnums, kind, size, flat_dims, flat_args, args_spec, randomness,
         token, state):
    has_aux, with_value = kind
    first = [levels.mark_sample(_sample(a, d, 0), token) if d is not None else a
             for a, d in zip(flat_args, flat_dims)]
    args = tree_unflatten(first, args_spec)
    where = argnums_of(argnums, len(args))
    originals, fresh, spec = wrap_inputs(_chosen(args, where))
    position = {id(x): i for i, x in enumerate(first)}
    trace = _Trace()
    try:
        with enable_grad(), levels.transform(), _tracing(trace):
            output = func(*_replace(args, where, tree_unflatten(fresh, spec)))
        aux = aux_spec = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise NotBatchable("no (output, aux) pair")  # (the loop raises the error)
            output, aux = output
            aux, aux_spec = tree_flatten(aux)
            if not all(isinstance(a, Tensor) for a in aux):
                raise NotBatchable("an aux that is not tensors")
        if not isinstance(output, Tensor) or (output.dim() != 0
                                              and with_value not in (JACOBIAN, HESSIAN)):
            raise NotBatchable("not a scalar")  # (the loop raises PyTorch's error)
        width = sum(t.numel() for t in fresh)
        if with_value == HESSIAN and output.numel() * size > HESSIAN_ROWS:
            # (reverse over reverse: a row per element of the inner Jacobian and sample,
            # where the loop's forward over reverse carries the tangents batched; measured:
            # 64 samples of 5 -> 4 outputs 15x faster than the loop, of 31 -> 33 2x slower)
            raise NotBatchable("a Hessian of a function of many outputs")
        if with_value == HESSIAN:
            with_value = JACOBIAN
        if with_value == JACOBIAN and (not output.dtype.is_floating_point or size * (
                output.numel() + width) > BATCH_ELEMENTS):
            raise NotBatchable("a Jacobian too large for one batched pass")
        with enable_grad(), levels.transform():
            grads0 = (_jacobian_of(output, fresh, False, None) if with_value == JACOBIAN
                      else _grads([output], fresh, [_one(output)], False))
    except NotBatchable:
        raise
    except Exception as e:  # noqa: BLE001 - the loop raises it again, as it does
        raise NotBatchable(f"the trace raised {type(e).__name__}") from None
    if trace.refused or (trace.drawn and randomness == "different"):
        raise NotBatchable(trace.refused or "random draws that differ per sample")
    env: dict = {}
    leaves = []
    for orig, leaf in zip(originals, fresh):
        i = position.get(id(orig))
        if i is None:
            raise NotBatchable("a differentiated input not among the arguments")
        a, d = flat_args[i], flat_dims[i]
        rows = (a.detach().unsqueeze(0).expand(size, *a.shape) if d is None
                else a.detach().movedim(d, 0))
        rows.requires_grad_(True)
        leaves.append(rows)
        env[id(leaf)] = Batch(rows)
    chosen = {id(o) for o in originals}
    for x, a, d in zip(first, flat_args, flat_dims):
        if d is not None and id(x) not in chosen:
            env[id(x)] = Batch(a.movedim(d, 0))
    try:
        with enable_grad():
            _replay(trace.records, env, size, token)
            value = env.get(id(output))
            if value is None:  # (the result does not depend on any input)
                raise NotBatchable("a constant result")
            losses = value.data
            if with_value == JACOBIAN:
                got = _jacobians(losses, output, leaves)
            else:
                got = run_backward([losses], [np.ones(size, losses.dtype.np)], False, NUMPY,
                                   inputs=leaves, accumulate=False)
    except NotBatchable:
        raise
    except Exception as e:  # noqa: BLE001 - what the replay does not model: the loop
        raise NotBatchable(f"the replay raised {type(e).__name__}") from None
    grads = got if with_value == JACOBIAN else _owned(got, leaves)
    auxes = None if aux is None else [_batched_aux(a, env, size, token) for a in aux]
    if state is not None:  # ('same': the last sample draws what the first drew)
        creation.default_generator.set_state(state)
    _check(wrapper, grads, losses, grads0, output, size, flat_args, flat_dims, args_spec,
           token, with_value, (aux, auxes))
    tree = tree_unflatten(grads, spec)
    if aux is not None:
        aux_tree = tree_unflatten(auxes, aux_spec)
        return (tree, (losses.detach(), aux_tree)) if with_value is True else (tree, aux_tree)
    return (tree, losses.detach()) if with_value is True else tree


def _batched_aux(a: Tensor, env: dict, size: int, token: int) -> Tensor:
    """An aux output's values for every sample (one that does not depend on the sample is
    the same for each)."""
    value = env.get(id(a))
    if value is not None:
        return value.data.detach()
    if a._vmap and token in a._vmap:
        raise NotBatchable("an aux of the sample not computed by a recorded op")
    return a.detach().expand(size, *a.shape)


def _jacobians(outputs: Tensor, output: Tensor, leaves: list) -> list:
    """Each sample's Jacobian of ``outputs`` (the batch's results, ``(B, *out)``) with
    respect to its rows of ``leaves``: one batched backward pass over the unit
    cotangents, ``(B, *out, *input)`` each."""
    n, size = output.numel(), outputs.shape[0]
    chunk = max(1, BATCH_ELEMENTS // (size * (n + sum(leaf[0].numel() for leaf in leaves))))
    parts = []
    for start in range(0, n, chunk):  # (a chunk of unit cotangents, each for every sample)
        stop = min(n, start + chunk)
        units = np.zeros((stop - start, n), outputs.dtype.np)
        units[np.arange(stop - start), np.arange(start, stop)] = 1
        units = np.broadcast_to(units.reshape((stop - start, 1) + tuple(output.shape)),
                                (stop - start, size) + tuple(output.shape))
        parts.append(batched_grad([outputs], [_make(np.ascontiguousarray(units),
                                                    outputs.dtype)], leaves, False))
    rows = [p[0] if len(parts) == 1 else cat(p) for p in zip(*parts)]
    return [r.movedim(0, 1).reshape(size, *output.shape, *leaf.shape[1:])
            for r, leaf in zip(rows, leaves)]


def _owned(got: list, leaves: list) -> list:
    """The pass's gradients as tensors (no copy, unless an array is shared)."""
    grads, seen = [], set()
    for g, rows in zip(got, leaves):
        if g is None:
            grads.append(rows.new_zeros(rows.shape))
            continue
        g = np.asarray(g)
        root = g
        while isinstance(root.base, np.ndarray):
            root = root.base
        g = np.array(g, rows.dtype.np) if id(root) in seen or not g.flags.writeable else \
            np.asarray(g, rows.dtype.np)
        seen.add(id(root))
        grads.append(_make(g.reshape(tuple(rows.shape)), rows.dtype))
    return grads


def _check(wrapper, grads, losses, grads0, output, size, flat_args, flat_dims, args_spec,
           token, with_value, auxes) -> None:
    """The first and the last sample's batched results against the loop's."""
    last = tree_unflatten([levels.mark_sample(_sample(a, d, size - 1), token)
                           if d is not None else a for a, d in zip(flat_args, flat_dims)],
                          args_spec)
    ref = wrapper(*last)
    aux, batched_aux = auxes
    if aux is not None:  # ((grads, (value, aux)) or (grads, aux): the aux taken apart)
        ref, ref_aux = ((ref[0], ref[1][0]), ref[1][1]) if with_value is True else ref
        if not all(_close(b[0], a) for b, a in zip(batched_aux, aux)) or not all(
                _close(b[size - 1], r) for b, r in zip(batched_aux, tree_flatten(ref_aux)[0])):
            raise NotBatchable("the batched aux differs from the loop's")
    ref_grads, ref_value = ref if with_value is True else (ref, None)
    from_loop = tree_flatten(ref_grads)[0]
    ok = all(_close(g[0], g0) for g, g0 in zip(grads, grads0)) and all(
        _close(g[size - 1], r) for g, r in zip(grads, from_loop)) and _close(
        losses[0], output)
    if ref_value is not None:
        ok = ok and _close(losses[size - 1], ref_value)
    if not ok:
        raise NotBatchable("the batched gradients differ from the loop's")

