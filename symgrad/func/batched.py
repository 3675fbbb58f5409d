"""Reverse mode for a batch of cotangents in one pass: the engine's backward with a
*batched backend*.

The engine runs a recorded graph backwards on whatever backend it is given (the protocol
of :mod:`symgrad.ir.backends`: arithmetic, ``m.call(OP, ...)`` and a few questions).
Here every gradient is a :class:`Batch`: the gradients of ``B`` cotangents at once, an
array (or, for a pass that is itself recorded, a tensor) with the batch first.  Each step
of a gradient rule is computed for every sample exactly as the unbatched backend would:

* arithmetic and the table's point-wise ops (``op.elementwise``, or broadcasting with no
  attribute) run once, the batch dimension first and the samples' dimensions padded so
  that broadcasting lines them up;
* with ``batching`` on (forward mode's batched tangents, ``vmap(grad)``'s replay), an op
  with a batching rule (the side table :data:`~symgrad.ops.tables.BATCHING`, registered
  beside the op: views, reductions, matrix products, convolutions, pooling) runs once
  as its rule says;
* any other op runs sample by sample on the inner backend and the results are stacked
  (a loop over numpy calls, not over autograd passes);
* shapes are the samples' shapes; un-broadcasting sums over the samples' dimensions only.

The program a backward pass runs does not depend on the cotangent's values (the rules
are linear in it), so this is the same computation as one pass per cotangent.  Anything
this backend does not model (a hook, a custom ``Function``'s backward, a rule reading the
gradient's data) raises :class:`NotBatchable`, and callers fall back to one pass per
cotangent.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([1., 2.], requires_grad=True)
>>> y = x ** 2
>>> batched_grad([y], [torch.eye(2)], [x], create_graph=False)[0]
tensor([[2., 0.],
        [0., 4.]])
"""
from __future__ import annotations

import numpy as np

from ..api.core import Tensor, _make
from ..api.functional import stack
from ..api.recorded import TENSOR
from ..engine.reverse import run_backward
from ..ir.backends import NUMPY
from ..ops.linalg import fold_matmul
from ..ops.tables import BATCHING, POINTWISE

__all__ = ["Batch", "NotBatchable", "batched_grad", "pointwise", "BATCHED_NUMPY",
           "BATCHED_RECORDED", "BATCHED_RULES"]


class NotBatchable(Exception):
    """The batched pass met something it does not model: run one pass per sample."""


def pointwise(op) -> bool:
    """Each element of the result depends on the same element of each (broadcast) operand
    only: the table's element-wise ops, its broadcasting ops that take no attribute (a
    reduction or a matrix product takes one: ``reduction``, ``alpha``/``beta``) and the
    ops of the side table ``POINTWISE`` (``tanh_backward``, ...)."""
    return op.elementwise or op in POINTWISE or (op.broadcasts and not op.attrs)


def _is_tensor(a) -> bool:
    return isinstance(a, Tensor)


def _ndim(a) -> int:
    return a.ndim if hasattr(a, "ndim") else np.ndim(a)


class Batch:
    """``B`` values of one shape: ``data`` holds them with the batch dimension first."""

    __slots__ = ("data",)
    __array_ufunc__ = None  # numpy defers to our operators
    __array_priority__ = 2000

    def __init__(self, data) -> None:
        self.data = data

    @property
    def size_(self) -> int:
        return self.data.shape[0]

    @property
    def shape(self) -> tuple:
        return tuple(self.data.shape[1:])

    @property
    def ndim(self) -> int:
        return _ndim(self.data) - 1

    @property
    def dtype(self):
        return self.data.dtype

    def __array__(self, *args, **kwargs):
        raise NotBatchable("a batched gradient's values were read")

    def __len__(self) -> int:
        raise NotBatchable("a batched gradient's length was read")

    # -- arithmetic: point-wise, samples lined up ----------------------------------------
    def __add__(self, o):
        return _binary(lambda a, b: a + b, self, o)

    def __radd__(self, o):
        return _binary(lambda a, b: b + a, self, o)

    def __sub__(self, o):
        return _binary(lambda a, b: a - b, self, o)

    def __rsub__(self, o):
        return _binary(lambda a, b: b - a, self, o)

    def __mul__(self, o):
        return _binary(lambda a, b: a * b, self, o)

    def __rmul__(self, o):
        return _binary(lambda a, b: b * a, self, o)

    def __truediv__(self, o):
        return _binary(lambda a, b: a / b, self, o)

    def __rtruediv__(self, o):
        return _binary(lambda a, b: b / a, self, o)

    def __pow__(self, o):
        return _binary(lambda a, b: a ** b, self, o)

    def __rpow__(self, o):
        return _binary(lambda a, b: b ** a, self, o)

    def __neg__(self):
        return Batch(-self.data)

    def __matmul__(self, o):
        return _matmul(self, o)

    def __rmatmul__(self, o):
        return _matmul(o, self)

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) \
            else shape
        return Batch(self.data.reshape((self.size_,) + shape))


def _matmul(a, b):
    """``a @ b`` for each sample: once when the batch dimension cannot meet the other
    operand's dimensions (its samples at least matrices against at most a matrix, or both
    batched with equal ranks), else sample by sample."""
    ra = a.ndim if isinstance(a, Batch) else _ndim(a)
    rb = b.ndim if isinstance(b, Batch) else _ndim(b)
    if isinstance(a, Batch) and isinstance(b, Batch):
        once = ra == rb >= 2
    elif isinstance(a, Batch):
        once = ra >= 1 and rb <= 2
    else:
        once = rb >= 2 and ra <= 2
    if once and isinstance(a, Batch) != isinstance(b, Batch):
        data = a.data if isinstance(a, Batch) else b.data
        m = TENSOR if _is_tensor(data) else NUMPY
        return Batch(fold_matmul(m, a.data, b) if isinstance(a, Batch)
                     else fold_matmul(m, a, b.data, batched_right=True))
    if once:
        return Batch(a.data @ b.data)
    size = _size((a, b))
    outs = [(a.data[i] if isinstance(a, Batch) else a) @ (b.data[i] if isinstance(b, Batch)
                                                           else b) for i in range(size)]
    return Batch(_stack(outs))


def _size(args) -> int:
    for a in args:
        if isinstance(a, Batch):
            return a.size_
    raise NotBatchable("no batched operand")


def _physical(args, size: int) -> list:
    """The operands with each batch first and its samples' dimensions padded to the rank
    of the widest operand (so that broadcasting lines samples up as it does unbatched)."""
    rank = max(a.ndim if isinstance(a, Batch) else _ndim(a) for a in args)
    out = []
    for a in args:
        if isinstance(a, Batch):
            pad = rank - a.ndim
            d = a.data
            out.append(d.reshape((size,) + (1,) * pad + tuple(d.shape[1:])) if pad else d)
        else:
            out.append(a)
    return out


def _binary(fn, a, b):
    size = _size((a, b))
    pa, pb = _physical([a, b], size)
    return Batch(fn(pa, pb))


def _stack(items: list):
    return stack(items) if _is_tensor(items[0]) else np.stack([np.asarray(i) for i in items])


def _per_sample(inner, fn, args: tuple):
    """``fn`` sample by sample (unbatched operands as they are), stacked."""
    size = _size(args)
    outs = [fn(*[a.data[b] if isinstance(a, Batch) else a for a in args])
            for b in range(size)]
    return Batch(_stack(outs))


def _sum_to(data, size: int, shape: tuple):
    """Each sample of ``data`` summed to ``shape`` (its broadcast dimensions)."""
    sample = tuple(data.shape[1:])
    if sample == shape:
        return data
    lead = len(sample) - len(shape)
    axes = tuple(range(1, lead + 1)) + tuple(lead + 1 + i for i, n in enumerate(shape)
                                             if n == 1 and sample[lead + i] != 1)
    if axes:
        data = data.sum(axes, keepdim=True) if _is_tensor(data) else \
            np.sum(data, axis=axes, keepdims=True)
    return data.reshape((size,) + shape)


class _Batched:
    """The backend of a batched pass over ``inner`` (numpy arrays, or recorded tensors);
    with ``batching`` the ops' batching rules (:data:`~symgrad.ops.tables.BATCHING`) run
    where they apply."""

    sums_in_place = False

    def __init__(self, inner, batching: bool = False) -> None:
        self.inner = inner
        self.records = inner.records
        self.batching = batching

    # -- the engine's questions ------------------------------------------------------------
    def saved(self, s):
        return self.inner.saved(s)

    def unwrap(self, t):
        raise NotBatchable("a gradient handed back by the user")

    def conform(self, gi, meta: tuple):
        if not isinstance(gi, Batch):
            return self.inner.conform(gi, meta)
        shape, dt = meta
        data = _sum_to(gi.data, gi.size_, tuple(shape))
        if _is_tensor(data):
            return Batch(data if data.dtype is dt else data.to(dt))
        return Batch(data if data.dtype == dt.np else data.astype(dt.np))

    def accumulate(self, var, g, owned: bool = False) -> None:
        raise NotBatchable("accumulation into .grad")

    def retain(self, var, g) -> None:
        raise NotBatchable("retain_grad")

    # -- what rules call ---------------------------------------------------------------------
    def call(self, op, *args):
        if not any(isinstance(a, Batch) for a in args):
            return self.inner.call(op, *args)
        n = len(op.inputs)
        plain = not op.variadic and not any(isinstance(a, Batch) for a in args[n:])
        if plain and self.batching:
            rule = BATCHING.get(op)
            if rule is not None:
                values, batched = list(args), []
                for i in range(n):
                    a = args[i]
                    batched.append(isinstance(a, Batch))
                    if batched[i]:
                        values[i] = a.data
                got = rule(self.inner, values, batched)
                if got is not None:
                    return Batch(got)
        if plain and pointwise(op):
            size = _size(args)
            return Batch(self.inner.call(op, *_physical(list(args[:n]), size), *args[n:]))
        return _per_sample(self.inner, lambda *a: self.inner.call(op, *a), args)

    def _scalar(self, name: str, a, c):
        if isinstance(a, Batch):
            return Batch(getattr(self.inner, name)(a.data, c))
        return getattr(self.inner, name)(a, c)

    def mul_scalar(self, a, c):
        return self._scalar("mul_scalar", a, c)

    def add_scalar(self, a, c):
        return self._scalar("add_scalar", a, c)

    def sub_scalar(self, a, c):
        return self._scalar("sub_scalar", a, c)

    def div_scalar(self, a, c):
        return self._scalar("div_scalar", a, c)

    def shape(self, a) -> tuple:
        return a.shape if isinstance(a, Batch) else tuple(self.inner.shape(a))

    def zeros_like(self, a):
        if isinstance(a, Batch):
            return Batch(self.inner.zeros_like(a.data))
        return self.inner.zeros_like(a)

    def new_zeros(self, like, shape: tuple):
        return self.inner.new_zeros(like.data if isinstance(like, Batch) else like, shape)

    def sum_to(self, g, shape: tuple):
        if isinstance(g, Batch):
            return Batch(_sum_to(g.data, g.size_, tuple(shape)))
        return self.inner.sum_to(g, shape)

    def broadcast_to(self, g, shape: tuple):
        if not isinstance(g, Batch):
            return self.inner.broadcast_to(g, shape)
        size = g.size_
        data = _physical([g, np.zeros(tuple(shape))], size)[0]
        return Batch(self.inner.broadcast_to(data, (size,) + tuple(shape)))

    def reshape(self, a, shape: tuple):
        if isinstance(a, Batch):
            return Batch(self.inner.reshape(a.data, (a.size_,) + tuple(shape)))
        return self.inner.reshape(a, shape)

    def cast(self, a, d):
        if isinstance(a, Batch):
            return Batch(self.inner.cast(a.data, d))
        return self.inner.cast(a, d)

    def first_true(self, mask, dim: int):
        if isinstance(mask, Batch):
            return _per_sample(self.inner, lambda m: self.inner.first_true(m, dim), (mask,))
        return self.inner.first_true(mask, dim)

    def value_selecting_backward(self, grad, dim, indices, sizes, keepdim):
        return _per_sample(self.inner, lambda g, i: self.inner.value_selecting_backward(
            g, dim, i, sizes, keepdim), (grad, indices))

    def set_at(self, a, index, value):
        return _per_sample(self.inner, lambda x, v: self.inner.set_at(x, index, v), (a, value))


#: Reverse mode's batched passes (a batch of cotangents), on arrays and recorded.
BATCHED_NUMPY = _Batched(NUMPY)
BATCHED_RECORDED = _Batched(TENSOR)
#: Recorded, the ops' batching rules on: forward mode's batched tangents and
#: ``vmap(grad)``'s replay of a traced program on the batch.
BATCHED_RULES = _Batched(TENSOR, batching=True)


def batched_grad(outputs: list, cotangents: list, inputs: list, create_graph: bool) -> list:
    """The gradients of ``inputs`` for each of ``B`` cotangents (``cotangents[k]`` has the
    shape ``(B, *outputs[k].shape)``), one backward pass: one tensor ``(B, *input.shape)``
    per input.  With ``create_graph`` the pass is recorded (its results differentiable).
    Raises :class:`NotBatchable` where one pass per cotangent is needed instead."""
    m = BATCHED_RECORDED if create_graph else BATCHED_NUMPY
    size = cotangents[0].shape[0]
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    results: list = [None] * len(inputs)
    if pairs:
        roots = [o for o, _ in pairs]
        grads = [Batch(c if create_graph else np.asarray(c._data)) for _, c in pairs]
        results = run_backward(roots, grads, True, m, inputs=inputs, accumulate=False)
    out = []
    for r, t in zip(results, inputs):
        if r is None:
            r = np.zeros((size,) + tuple(t.shape), t.dtype.np)
        elif isinstance(r, Batch):
            r = r.data
        elif _is_tensor(r):  # the same for every sample
            r = r.expand(size, *t.shape)
        else:
            r = np.broadcast_to(np.asarray(r), (size,) + tuple(t.shape))
        if _is_tensor(r):
            out.append(r if r.dtype is t.dtype else r.to(t.dtype))
        else:
            out.append(_make(np.ascontiguousarray(r, dtype=t.dtype.np), t.dtype))
    return out

