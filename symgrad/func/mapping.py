"""``vmap``: a function of one sample, run over a batch, as ``torch.func.vmap``.

How it runs
-----------
* **Generic path (a loop).**  The batched inputs are sliced sample by sample (views, so an
  in-place change inside the function reaches the input as in PyTorch), the function runs
  once per sample, and each output is stacked at its ``out_dims``.  This is exact for every
  op, nested transforms (``vmap(grad(f))``, ``vmap(vmap(f))``, ``vmap(jacrev(f))``) and
  autograd through the result (``stack`` is differentiable).  The samples are marked, and
  so is every result computed from them while the function runs: as PyTorch's
  BatchedTensor, a marked tensor refuses ``.item()``, ``bool``, ``int``, ``float``,
  ``.tolist()`` and ``.numpy()`` in the user's code (:mod:`symgrad.func.levels`).
* **No loop for per-sample gradients**: ``vmap(grad(f))`` (``grad_and_value``, ``jacrev``)
  traces ``f`` once and runs its program on the whole batch, one backward pass for every
  sample's gradient (:mod:`symgrad.func.pergrad`; the loop where it cannot).
* **No loop** when the function *is* one element-wise op of the table (``torch.sin``,
  ``torch.add``, ``Tensor.mul``, ``torch.where``, ...) on tensors of one dtype: the batch
  dimensions are moved to the front and padded so that broadcasting lines the samples up,
  and the op runs once.  This is sound because the op is known: running a function of
  unknown body on the whole batch is not (it may read shapes, reduce over a dimension,
  index, branch on values), so that is never attempted.

``randomness``: ``'error'`` raises PyTorch's error as soon as a random op is called inside
the function; ``'different'`` draws afresh for every sample; ``'same'`` gives every sample
the same draws (the generator is rewound before each sample, and left as after one).

Examples
--------
>>> import symgrad as torch
>>> from symgrad.func import vmap
>>> vmap(torch.dot)(torch.ones(2, 3), torch.tensor([[1., 2., 3.], [4., 5., 6.]]))
tensor([ 6., 15.])
>>> vmap(lambda x, y: x * y, in_dims=(0, None))(torch.tensor([1., 2.]), torch.tensor(3.))
tensor([3., 6.])
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..api import creation
from ..api import functional as _functions
from ..api.creation import zeros
from ..api.functional import equal, stack
from ..api.tensor import Tensor
from ..ops import OPS
from ..ops.dtypes import bool as _bool
from . import levels
from .batched import NotBatchable, pointwise
from .pergrad import vmap_grad
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap", "elementwise_op_of"]

creation.RANDOM_DRAW_HOOKS.append(levels.check_random)


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


# --------------------------------------------------------------------------- checks
def _check_out_dims(out_dims, func) -> None:
    for d in tree_flatten(out_dims)[0] if not isinstance(out_dims, int) else ():
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                "None or a python collection of ints representing where in the outputs the "
                "vmapped dimension should appear.")


def _batched_inputs(func, in_dims, args: tuple) -> tuple[int, list, list, Any]:
    """``(batch size, flat in_dims, flat args, args spec)``, with PyTorch's errors."""
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) "
                         "tuple matching the structure of inputs, got: "
                         f"{type(in_dims)}.")
    if not args:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, "
            "or you are trying to vmap over a function with no inputs. The latter is "
            "unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"{head}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims)):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"{head}: Got in_dim={d} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(
                f"{head}: Got in_dim={d} for an input but the input is of type {type(arg)}. "
                "We cannot vmap over non-Tensor arguments, please use None as the "
                "respective in_dim")
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(
                f"{head}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {arg.dim()} so expected in_dim to satisfy "
                f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_dims[i] = d % arg.dim()
    sizes = [a.size(d) for a, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _flat_out_dims(func, out_dims, output) -> tuple[list, Any]:
    flat, spec = tree_flatten(output)
    if isinstance(output, Tensor):
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims), spec
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims], spec
        dims = None
    else:
        dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            "compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")
    return dims, spec


# --------------------------------------------------------------------------- no loop
def elementwise_op_of(func):
    """The element-wise (or broadcasting, attribute-free) op of the table that ``func`` is
    the function or method of, or ``None``."""
    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        return None
    for op in OPS.values():
        if pointwise(op) and (name == op.function or name in op.methods) and (
                getattr(Tensor, name, None) is func or _is_function(name, func)):
            return op
    return None


def _is_function(name: str, func) -> bool:
    return getattr(_functions, name, None) is func


def _run_elementwise(func, flat_dims, flat_args, spec, size: int, kwargs):
    """The op once on the whole batch: batch dimension first, padded so that each
    sample's dimensions line up with the unbatched operands' as broadcasting does."""
    rank = max(a.dim() - (d is not None) for a, d in zip(flat_args, flat_dims)
               if isinstance(a, Tensor))
    moved = []
    for a, d in zip(flat_args, flat_dims):
        if d is None:
            moved.append(a)
            continue
        a = a.movedim(d, 0)
        moved.append(a.reshape(size, *([1] * (rank - a.dim() + 1)), *a.shape[1:]))
    return func(*tree_unflatten(moved, spec), **kwargs)


def _fast(func, flat_dims, flat_args) -> bool:
    tensors = [a for a in flat_args if isinstance(a, Tensor)]
    op = elementwise_op_of(func)
    return (op is not None and len(flat_args) >= len(op.inputs)
            and len({t.dtype for t in tensors if t.dtype is not _bool}) <= 1
            and all(isinstance(a, (Tensor, int, float, bool)) for a in flat_args))


# --------------------------------------------------------------------------- the loop
def _sample(arg, d, b: int):
    if d is not None and arg.shape[d] == 0:  # an empty batch: a sample of zeros, for shapes
        return zeros(*(n for i, n in enumerate(arg.shape) if i != d), dtype=arg.dtype)
    return arg if d is None else arg[(slice(None),) * d + (b,)]


def _run_loop(func, flat_dims, flat_args, spec, samples, randomness: str, kwargs,
              token: int = 0) -> list:
    outputs = []
    state = creation.default_generator.get_state() if randomness == "same" else None
    for b in samples:
        if state is not None:
            creation.default_generator.set_state(state)
        args = tree_unflatten([levels.mark_sample(_sample(a, d, b), token) if d is not None
                               else a for a, d in zip(flat_args, flat_dims)], spec)
        outputs.append(func(*args, **kwargs))
    return outputs


def _gather(func, out_dims, outputs: list, empty: bool = False):
    """One output of the loop's per-sample outputs, stacked at ``out_dims``."""
    dims, spec = _flat_out_dims(func, out_dims, outputs[0])
    per_sample = [tree_flatten(o)[0] for o in outputs]
    name = _name(func)
    result = []
    for k, d in enumerate(dims):
        column = [leaves[k] for leaves in per_sample]
        first = column[0]
        if d is None:
            if isinstance(first, Tensor) and not all(
                    c is first or (isinstance(c, Tensor) and c.shape == first.shape
                                   and equal(c, first)) for c in column):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a "
                                 "BatchedTensor when out_dim is None")
            result.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                f"{type(first)}. Did you mean to set out_dims= to None for output?")
        stacked = stack(column, d)
        if empty:  # the batch had no sample: the one run on zeros gave the shapes only
            stacked = stacked[(slice(None),) * (d % stacked.dim()) + (slice(0, 0),)]
        result.append(stacked)
    return tree_unflatten(result, spec)


def _moved(func, out_dims, output):
    """A batched output (batch first everywhere) with each batch moved to its out_dim."""
    dims, spec = _flat_out_dims(func, out_dims, output)
    leaves = tree_flatten(output)[0]
    moved = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                             "BatchedTensor when out_dim is None")
        moved.append(leaf.movedim(0, d))
    return tree_unflatten(moved, spec)


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over a dimension of its inputs (``in_dims``, a number or a pytree
    of numbers and ``None``), its outputs stacked at ``out_dims``.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import vmap
    >>> x = torch.tensor([[1., 2.], [3., 4.]])
    >>> vmap(lambda r: r.sum())(x)
    tensor([3., 7.])
    >>> vmap(lambda c: c * 10, in_dims=1, out_dims=1)(x)
    tensor([[10., 20.],
            [30., 40.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        size, flat_dims, flat_args, spec = _batched_inputs(func, in_dims, args)
        with levels.vmapping(randomness, size) as token:
            if _fast(func, flat_dims, flat_args):
                out = _run_elementwise(func, flat_dims, flat_args, spec, size, kwargs)
                dims, _ = _flat_out_dims(func, out_dims, out)
                if dims[0] is None:
                    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not "
                                     "return a BatchedTensor when out_dim is None")
                return out.movedim(0, dims[0])
            per_sample = getattr(func, "per_sample", None)
            if per_sample is not None and per_sample[0] is func and not kwargs:
                try:
                    return _moved(func, out_dims, vmap_grad(
                        per_sample, size, flat_dims, flat_args, spec, randomness, token))
                except NotBatchable:
                    pass
            rule = getattr(func, "vmap_rule", None)
            if rule is not None and not kwargs:
                try:
                    return _moved(func, out_dims, rule(size, flat_dims, flat_args, spec))
                except NotBatchable:
                    pass
            outputs = _run_loop(func, flat_dims, flat_args, spec, range(max(size, 1)),
                                randomness, kwargs, token)
        return _gather(func, out_dims, outputs, empty=size == 0)
    return wrapped
