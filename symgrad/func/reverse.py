"""Reverse-mode transforms of :mod:`symgrad.func`: ``grad``, ``grad_and_value``, ``vjp``,
``jacrev``, as PyTorch's ``torch.func``.

Each is built on :func:`symgrad.autograd.grad`.  The inputs to differentiate are given to
the function as fresh tensors (a view of an input that already requires grad, so an outer
transform or the user's own graph still reaches it; a detached copy otherwise), and a
transform inside another one keeps its result differentiable, so ``grad(grad(f))`` and
``jacfwd(jacrev(f))`` work to any order.  Inputs may be nested tuples, lists and dicts of
tensors (``grad`` of a loss with respect to a dict of parameters gives a dict).

Examples
--------
>>> import symgrad as torch
>>> from symgrad.func import grad, jacrev
>>> grad(lambda x: (x ** 3).sum())(torch.tensor([1., 2.]))
tensor([ 3., 12.])
>>> grad(grad(lambda x: x.sin()))(torch.tensor(0.5))
tensor(-0.4794)
>>> jacrev(lambda x: x ** 2)(torch.tensor([1., 2.]))
tensor([[2., 0.],
        [0., 4.]])
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..api.core import _make
from ..api.creation import zeros, zeros_like
from ..api.functional import cat, stack
from ..api.gradients import grad as _autograd_grad
from ..api.dual import DUAL
from ..api.tensor import Tensor
from ..autograd.forward_ad import make_dual, unpack_dual
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from . import levels
from .batched import NotBatchable, batched_grad
from .pytree import pprint, tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "argnums_of", "wrap_inputs",
           "finish"]


# --------------------------------------------------------------------------- argnums
def _argnum(argnum, n: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -n <= argnum < n:
        return argnum % n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def argnums_of(argnums, n: int):
    """``argnums`` checked and wrapped as PyTorch's ``_slice_argnums`` does."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _argnum(argnums, n)
    wrapped = tuple(_argnum(a, n) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def _chosen(args: tuple, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replace(args: tuple, argnums, new) -> tuple:
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


# --------------------------------------------------------------------------- wrapping
def wrap_inputs(tree) -> tuple[list, list, Any]:
    """``(originals, fresh, spec)``: the tensors of ``tree`` and the fresh tensors that
    stand for them while the function runs (PyTorch's error for a leaf that is not one)."""
    leaves, spec = tree_flatten(tree)
    fresh = []
    for t in leaves:
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
        fresh.append(levels.mark_wrapped(t, t.view_as(t) if t.requires_grad
                                         else _fresh_leaf(t)))
    return leaves, fresh, spec


def _fresh_leaf(t: Tensor) -> Tensor:
    """A new leaf requiring grad with ``t``'s values and the tangents ``t`` has at the open
    forward-mode levels (a dual input of ``jvp(grad(f))`` keeps its tangent)."""
    leaf = t.detach().requires_grad_(True)
    for level in DUAL.levels:
        tangent = unpack_dual(t, level=level).tangent
        if tangent is not None:
            leaf = make_dual(leaf, tangent, level=level)
    return leaf


def keeps_graph(originals) -> bool:
    """Whether results must stay differentiable: inside another transform, or when an
    input is part of the caller's own graph."""
    return is_grad_enabled() and (levels.depth() > 0 or any(
        isinstance(t, Tensor) and t.requires_grad for t in originals))


def finish(tree, keep: bool):
    """``tree`` with its tensors detached unless results stay differentiable."""
    if keep:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([t.detach() if isinstance(t, Tensor) else t for t in leaves], spec)


def _grads(outputs: list, inputs: list, cotangents: list, keep: bool) -> list:
    """d(outputs)/d(inputs) against ``cotangents``; zeros where nothing depends."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs or not inputs:
        return [zeros_like(t) for t in inputs]
    got = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                         retain_graph=True, create_graph=keep, allow_unused=True)
    return [zeros_like(t) if g is None else g for g, t in zip(got, inputs)]


def _split_aux(output, has_aux: bool, api: str):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    for leaf in tree_flatten(output[1])[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return output


# --------------------------------------------------------------------------- grad
def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of ``func`` (a scalar) with respect to the ``argnums`` inputs, and its
    value: ``(grad, value)`` or, with ``has_aux``, ``(grad, (value, aux))``.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import grad_and_value
    >>> grad_and_value(lambda x: (x * x).sum())(torch.tensor([1., 2.]))
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        where = argnums_of(argnums, len(args))
        originals, fresh, spec = wrap_inputs(_chosen(args, where))
        keep = keeps_graph(originals)
        with enable_grad(), levels.transform():
            output = func(*_replace(args, where, tree_unflatten(fresh, spec)), **kwargs)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp "
                    "or jacrev APIs instead?")
            grads = _grads([output], fresh, [_one(output)], keep)
        grads = finish(tree_unflatten(grads, spec), keep)
        value = finish(output, keep)
        return (grads, (value, finish(aux, keep))) if has_aux else (grads, value)
    wrapper.per_sample = (wrapper, func, argnums, has_aux, True)  # (vmap: symgrad.func.pergrad)
    return wrapper


def _one(t: Tensor) -> Tensor:
    return zeros_like(t) + 1


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of ``func`` (returning a scalar tensor) with respect to its
    ``argnums`` inputs, as ``torch.func.grad``.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import grad
    >>> grad(lambda x, y: x * y, argnums=(0, 1))(torch.tensor(2.), torch.tensor(3.))
    (tensor(3.), tensor(2.))
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    wrapper.per_sample = (wrapper, func, argnums, has_aux, False)
    return wrapper


# --------------------------------------------------------------------------- vjp
def _outputs(output, api: str) -> tuple[list, Any]:
    leaves, spec = tree_flatten(output)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(leaf)}")
    return leaves, spec


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` is the vector-Jacobian product
    with respect to each primal (a tuple, one entry per primal).

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import vjp
    >>> out, vjp_fn = vjp(torch.sin, torch.tensor([0., 1.]))
    >>> vjp_fn(torch.tensor([1., 1.]))
    (tensor([1.0000, 0.5403]),)
    """
    originals, fresh, spec = wrap_inputs(primals)
    keep = keeps_graph(originals)
    with enable_grad(), levels.transform():
        output = func(*tree_unflatten(fresh, spec))
        output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
        flat_out, out_spec = _outputs(output, "vjp(f, *primals)")

    def vjp_fn(cotangents, *, retain_graph: bool = True, create_graph: bool | None = None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {pprint(ct_spec)}, primal output: "
                f"{pprint(out_spec)}")
        for i, (c, o) in enumerate(zip(flat_ct, flat_out)):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                shape = c.shape if isinstance(c, Tensor) else type(c)
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{shape} and output[{i}] has a shape of {o.shape}.")
        again = keep or keeps_graph(flat_ct) if create_graph is None else create_graph
        with enable_grad(), levels.transform():
            grads = _grads(flat_out, fresh, flat_ct, again)
        return finish(tree_unflatten(grads, spec), again)

    def vmap_rule(size: int, flat_dims: list, flat_args: list, args_spec) -> tuple:
        """``vmap(vjp_fn)``: every cotangent of the batch in one backward pass."""
        if len(args_spec.children) != 1 or args_spec.children[0] != out_spec:
            raise NotBatchable("cotangents of another structure")  # the loop says so
        cts = []
        for c, d, o in zip(flat_args, flat_dims, flat_out):
            if not isinstance(c, Tensor) or c.dim() - (d is not None) != o.dim():
                raise NotBatchable("a cotangent of another shape")
            c = c.movedim(d, 0) if d is not None else c.expand(size, *c.shape)
            if tuple(c.shape[1:]) != tuple(o.shape):
                raise NotBatchable("a cotangent of another shape")
            cts.append(c)
        again = keep or keeps_graph(flat_args)
        with enable_grad(), levels.transform():
            grads = batched_grad(flat_out, cts, fresh, again)
        return finish(tree_unflatten(grads, spec), again)

    vjp_fn.vmap_rule = vmap_rule
    result = (finish(output, keep), vjp_fn)
    return result + (finish(aux, keep),) if has_aux else result


# --------------------------------------------------------------------------- jacrev
def _unit_rows(out: Tensor) -> list:
    n = out.numel()
    rows = []
    for i in range(n):
        e = zeros(n, dtype=out.dtype)
        e[i] = 1
        rows.append(e.view(out.shape))
    return rows


def _jacobian_tree(out_spec, columns: list, spec):
    """Nest per-output Jacobians as PyTorch does: the output's structure outside, the
    ``argnums`` inputs' structure inside."""
    return tree_unflatten([tree_unflatten(blocks, spec) for blocks in columns], out_spec)


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` with respect to its ``argnums`` inputs by reverse mode:
    one backward pass per output element, ``out.shape + input.shape`` each.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import jacrev
    >>> jacrev(lambda x, y: x * y, argnums=1)(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        where = argnums_of(argnums, len(args))
        originals, fresh, spec = wrap_inputs(_chosen(args, where))
        keep = keeps_graph(originals)
        with enable_grad(), levels.transform():
            output = func(*_replace(args, where, tree_unflatten(fresh, spec)), **kwargs)
            output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
            flat_out, out_spec = _outputs(output, "vjp(f, *primals)")
            columns = [_jacobian_of(o, fresh, keep, chunk_size) for o in flat_out]
        jac = finish(_jacobian_tree(out_spec, columns, spec), keep)
        return (jac, finish(aux, keep)) if has_aux else jac
    wrapper.per_sample = (wrapper, func, argnums, has_aux, "jacrev")  # (symgrad.func.pergrad)
    return wrapper


#: Rows of a batched pass at a time: a batch of gradients holds about this many numbers
#: per tensor of the output's and the inputs' sizes (2^25: 128 MB of float32).
BATCH_ELEMENTS = 2 ** 25


def _basis_rows(n: int, start: int, stop: int, out: Tensor) -> Tensor:
    """Rows ``start:stop`` of the identity of size ``n``, each shaped as ``out``: one chunk
    of cotangents (the whole identity is never built: for the 16,384 outputs of a
    32x512 Jacobian it would be 1 GB)."""
    rows = np.zeros((stop - start, n), out.dtype.np)
    rows[np.arange(stop - start), np.arange(start, stop)] = 1
    return _make(rows.reshape((stop - start,) + tuple(out.shape)), out.dtype)


def _jacobian_of(out: Tensor, inputs: list, keep: bool, chunk_size: int | None) -> list:
    """d out / d each input, shaped ``out.shape + input.shape``: batched backward passes,
    ``chunk_size`` rows each (by default as many as :data:`BATCH_ELEMENTS` allows; all of
    them for a small Jacobian), else one pass per row."""
    if out.numel() == 0 or not out.requires_grad:
        return [zeros(*out.shape, *t.shape, dtype=t.dtype) for t in inputs]
    n = out.numel()
    width = n + sum(t.numel() for t in inputs)
    chunk = chunk_size or max(1, BATCH_ELEMENTS // width)
    try:
        parts = [batched_grad([out], [_basis_rows(n, i, min(n, i + chunk), out)], inputs,
                              keep) for i in range(0, n, chunk)]
    except Exception:  # noqa: BLE001 - anything the batched pass does not model
        parts = None
    if parts is not None:
        rows = parts[0] if len(parts) == 1 else [cat([p[k] for p in parts])
                                                 for k in range(len(inputs))]
        return [r.view(*out.shape, *t.shape) for r, t in zip(rows, inputs)]
    rows = [_grads([out], inputs, [e], keep) for e in _unit_rows(out)]
    return [stack([r[k] for r in rows]).view(*out.shape, *t.shape)
            for k, t in enumerate(inputs)]
