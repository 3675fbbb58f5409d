"""In-place writes: ``add_``, ``mul_``, ``copy_``, ``fill_``, ... and ``+=``, recorded as
PyTorch records them.

An in-place op on a tensor with history replaces its ``grad_fn`` by the op's node (on a
copy of the old value) and bumps its version counter, so that saved values changed since
are caught in backward.  On a view it writes through to the base, whose history becomes
``CopySlices``.  ``t[index] = value`` (:mod:`symgrad.api.indexing`) ends here too.

Examples
--------
>>> import symgrad as torch
>>> x = torch.ones(3, requires_grad=True)
>>> y = x * 2
>>> y.mul_(3)
tensor([6., 6., 6.], grad_fn=<MulBackward0>)
>>> y[1:].add_(1)
tensor([7., 7.], grad_fn=<AsStridedBackward0>)
>>> type(y.grad_fn).__name__, y._version
('CopySlices', 2)
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import ops as O
from ..ir.node import AccumulateGrad, GRAD_MODE, Node, node_class
from ..engine.rules import input_grads
from .apply import _at_view, _refresh_view, _view_index, _view_root, apply
from .construct import _as_tensor_arg, _number
from .core import VMAP, Tensor, _make
from .creation import _rng, _source
from .draws import normal, uniform
from .dual import DUAL
from .messages import _c_name
from .shapes import Size
from .viewmeta import check_in_place, regenerated

__all__ = ["CopySlices"]

_ndarray = np.ndarray


def _leaf_in_place_error(view: bool = False):
    return RuntimeError(f"a {'view of a ' if view else ''}leaf Variable that requires grad "
                        "is being used in an in-place operation.")


def _is_view_of_leaf(t) -> bool:
    """Is ``t`` a view (through view ops only) of a leaf that requires grad?"""
    fn = t.grad_fn
    while fn is not None and fn.op is not None and fn.op.view:
        x = fn.inputs[0]
        if isinstance(x, AccumulateGrad):
            return True
        fn = x if isinstance(x, Node) else None
    return False


_OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor "
                    "refers to a single memory location. Please clone() the tensor before "
                    "performing the operation.")

#: The in-place ops PyTorch runs on memory whose elements overlap (an expanded tensor):
#: those that write one value wherever they write.  The others raise its error.
_OVERLAP_OK = frozenset((O.ZERO, O.FILL, O.MASKED_FILL, O.MASKED_FILL_SCALAR, O.INDEX_PUT_))


def _overlap_allowed(t, op, others) -> bool:
    return op in _OVERLAP_OK or (op is O.COPY and others and others[0] is t)  # (x.copy_(x))


def _internal_overlap(data) -> bool:
    """PyTorch's ``has_internal_overlap`` (answer YES): a dim of stride 0 and size > 1."""
    return data.__class__ is _ndarray and builtins.any(
        st == 0 and n > 1 for st, n in zip(data.strides, data.shape))


def _check_overlap(t, op=None, others=(), attrs=(), written=None) -> None:
    """Raise PyTorch's error where ``op`` would write into overlapping memory of ``t`` (a
    tensor that is no view: ``x.expand(3, 2).detach()``): its part ``written`` (an
    array; ``t[index] = value``: ``t[index]``; else all of it); where PyTorch writes
    anyway (``fill_``, ``zero_``, ...), ``t``'s data becomes a writeable alias of that
    memory."""
    data = t._data
    if not _internal_overlap(data):
        return
    if written is None:
        written = data[attrs[0]] if op is O.COPY_SLICES else data
    if _internal_overlap(written) and (op is None or not _overlap_allowed(t, op, others)):
        raise RuntimeError(_OVERLAP_MESSAGE)
    if not data.flags.writeable:
        t._data = _writeable_alias(data)


def _writeable_alias(data: np.ndarray) -> np.ndarray:
    """``data`` (numpy's read-only broadcast of writeable memory) as a writeable array on
    the same memory; ``data`` itself where that memory is read-only."""
    owner = data
    while getattr(owner, "base", None) is not None:  # (numpy's as_strided: a DummyArray)
        owner = owner.base
    if not (isinstance(owner, _ndarray) and owner.flags.writeable):
        return data
    start = data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return np.ndarray(data.shape, data.dtype, buffer=owner, offset=start, strides=data.strides)


def _save_original(result, source) -> None:
    """An in-place op that saves the tensor it changes saves a clone of the original, as
    PyTorch does (``z.mul_(y).grad_fn._saved_self`` has grad_fn CloneBackward0)."""
    node = result.grad_fn
    if node is None or node.op is None or not node._saved:
        return
    for k, (kind, where) in enumerate(node.op.plan):
        if kind == "input" and where == 0 and node._saved[k] is source:
            clone = apply(O.CLONE, (source,))
            node._saved = node._saved[:k] + (clone,) + node._saved[k + 1:]
            node._versions = node._versions[:k] + (clone._vc[0],) + node._versions[k + 1:]


def _in_place_on_view(v, op, others, attrs, track) -> None:
    """An in-place op on a view writes into its base: as in PyTorch the base's history
    becomes ``CopySlices`` (the op's result written at the view's positions) and the view
    is regenerated from the base."""
    base, path = _view_root(v)
    if base._data.__class__ is _ndarray and not base._data.flags.writeable:
        _check_overlap(base, op, others, written=v._data)  # (a view of an expanded tensor)
    index = _view_index(base, path)
    flat = np.ravel_multi_index(index, np.shape(base._data)) if index else np.zeros(
        np.size(v._data), dtype=np.intp)
    flat = np.reshape(flat, np.shape(v._data))
    written = flat[attrs[0]] if op is O.COPY_SLICES else flat  # (v[index] = value)
    if np.unique(written).size != np.size(written) and not _overlap_allowed(v, op, others):
        raise RuntimeError(_OVERLAP_MESSAGE)
    if track:
        source = _make(np.array(v._data, copy=True), v._dtype)
        source.grad_fn = v.grad_fn
        result = apply(op, (source,) + tuple(others), attrs)
        _save_original(result, source)
        values = result._data
    else:
        arrays = [o._data if isinstance(o, Tensor) else o for o in others]
        values = op.forward(v._data, *arrays, *attrs)
    at = index  # (where in the base the values go)
    if v._data.__class__ is not _ndarray or v._data.flags.writeable:
        v._write(values, op)  # casting checks, and the values land in v
        values = v._data
    else:  # (an expanded view, numpy's read-only broadcast: the base's write shows in it)
        values = np.broadcast_to(np.asarray(values).astype(v._data.dtype, copy=False),
                                 v._data.shape)
        if op is O.COPY_SLICES:  # (v[index] = value: only v[index]'s memory is written)
            values, at = values[attrs[0]], np.unravel_index(written, np.shape(base._data))
    if base._data.__class__ is not _ndarray:
        base._data = np.array(base._data)
    if track and result.grad_fn is not None:
        regenerated(base, _copy_slices(base, result.grad_fn, index, np.shape(v._data)))
    base._data[at] = np.asarray(values) if at else np.asarray(values).reshape(())
    v._vc[0] += 1
    if track:  # (else, as PyTorch, regenerated when next used with grad mode on)
        regenerated(v, _at_view(base, index, np.shape(v._data), v).grad_fn)
        v._view_version = v._vc[0]


class CopySlices(node_class(O.COPY_SLICES)):
    """PyTorch's CopySlices around an in-place op ``fn`` applied to a view of the base.

    Its edges are the base's history and ``fn``'s other inputs; its backward runs ``fn``'s
    rules on the view's part of the gradient and writes their first result back there.
    """

    __slots__ = ()

    def _custom_backward(self, g, m, needed) -> list:
        fn, view_shape = self._fn, self._view_shape
        index = self.attrs[0]
        if self._overlaps:  # (PyTorch copies the view's gradient into overlapping memory)
            raise RuntimeError(_OVERLAP_MESSAGE)
        first = fn.inputs[0]
        if m.records and index:
            # As PyTorch records it: the gradient copied into a new tensor (CopyBackwards),
            # the view's part of it cloned (AsStridedBackward0, CloneBackward0) for fn's
            # rules, whose first result is copied back into that part (CopySlices).
            result = _make(np.empty(g.shape, g.dtype.np), g.dtype).copy_(g)
            part = _at_view(result, index, view_shape)
            grads = input_grads(fn, part.clone(), m, lambda x: x is first or needed is None
                                or needed(x))
            if grads[0] is not None:
                part.copy_(grads[0])
            else:
                result = m.set_at(g, index, 0.0)
            return [result] + list(grads[1:])
        part = m.call(O.INDEX, g, index) if index else m.reshape(g, view_shape)
        grads = input_grads(fn, part, m, lambda x: x is first or needed is None
                            or needed(x))
        r0 = grads[0]
        if not index:
            base_grad = m.reshape(r0, ()) if r0 is not None else g * 0
        else:
            base_grad = m.set_at(g, index, 0.0 if r0 is None else r0)
        return [base_grad] + list(grads[1:])


def _copy_slices(base, fn: Node, index, view_shape) -> Node:
    """The node that records writing ``fn``'s result into ``base`` at ``index``."""
    edge = base.grad_fn if base.grad_fn is not None else base
    nrs = None
    if fn._input_nrs is not None or base._multi_output:
        nrs = (base._output_nr if base._multi_output else 0,) + tuple(
            fn._input_nrs[1:] if fn._input_nrs is not None else (0,) * (len(fn.inputs) - 1))
    meta = ((np.shape(base._data), base._dtype),) + tuple(fn._meta[1:])
    node = CopySlices((edge,) + tuple(fn.inputs[1:]), (index,),
                      (index, Size(np.shape(base._data))), (None, None), meta)
    node._fn = node._inner = fn
    node._view_shape = tuple(view_shape)
    flat = np.ravel_multi_index(index, np.shape(base._data)) if index else ()
    node._overlaps = np.unique(flat).size != np.size(flat)
    node._input_nrs = nrs
    node._plain = False
    return node


def _write(t, values, op, part) -> None:
    """``values`` into ``t``, or their ``part`` (an index) alone."""
    if part is None:
        t._write(values, op)
    else:
        t._data[part] = np.asarray(values)[part]


class _no_track:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _InPlace:
    """Tensor's in-place methods (attached by ``api.tensor``)."""

    # in-place operators: PyTorch's a += b is add_
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def _in_place(self, op, others=(), attrs=()):
        if VMAP.running:  # (PyTorch's errors for a batch written into an unbatched tensor)
            VMAP.guard("in_place", self, op, others)
        if self._view_of is not None:
            check_in_place(self, others)  # (a piece of split, unbind ...: PyTorch's error)
            if self._vc[0] != self._view_version:
                _refresh_view(self)
        if GRAD_MODE.enabled:
            if self.grad_fn is None and self._requires_grad:
                # (PyTorch's: "a view of a leaf" where the view's base is a leaf)
                raise _leaf_in_place_error(view=self._view_of is not None
                                           and _view_root(self)[0].grad_fn is None)
            if self.grad_fn is not None and _is_view_of_leaf(self):
                raise _leaf_in_place_error(view=True)
            track = self.grad_fn is not None or builtins.any(
                isinstance(o, Tensor) and o.requires_grad for o in others)
        else:
            track = False
        before = DUAL.in_place(self, op, others, attrs) if DUAL.levels else None  # tangents
        if self._view_of is not None:
            _in_place_on_view(self, op, others, attrs, track)
            return self
        part = None
        if self._data.__class__ is _ndarray and not self._data.flags.writeable:
            _check_overlap(self, op, others, attrs)  # (an expanded tensor, detached)
            if op is O.COPY_SLICES and _internal_overlap(self._data):
                part = attrs[0]  # (t[index] = value: t[index]'s memory alone is written)
        if track:
            source = _make(self._data.copy(), self._dtype)
            source.grad_fn = self.grad_fn
            if before:
                DUAL.carry(source, before)  # the value before keeps its tangent before
            if self._multi_output:
                source._output_nr, source._multi_output = self._output_nr, True
                self._output_nr, self._multi_output = 0, False
            operands = (source,) + tuple(others)
            if op is O.SCATTER_REDUCE_LEGACY_:  # (edges only for operands that require grad)
                operands, attrs = O.scattering.legacy_operands(operands, attrs)
            result = apply(op, operands, attrs)
            _save_original(result, source)
            _write(self, result._data, op, part)
            regenerated(self, result.grad_fn)
        else:
            # Through apply (nothing is recorded): the result has PyTorch's dtype, which
            # the casting check names ("result type Float can't be cast to ... Long").
            _write(self, apply(op, (self,) + tuple(others), attrs)._data, op, part)
        self._vc[0] += 1
        return self

    def add_(self, other, *, alpha=1):
        if alpha.__class__ is int and alpha == 1:
            return self._in_place(O.ADD, (_as_tensor_arg(other),))
        return self._in_place(O.ADD_ALPHA, (_as_tensor_arg(other),), (_number(alpha),))

    def sub_(self, other, *, alpha=1):
        if alpha.__class__ is int and alpha == 1:
            return self._in_place(O.SUB, (_as_tensor_arg(other),))
        return self._in_place(O.SUB_ALPHA, (_as_tensor_arg(other),), (_number(alpha),))

    def mul_(self, other):
        return self._in_place(O.MUL, (_as_tensor_arg(other),))

    def div_(self, other):
        return self._in_place(O.DIV, (_as_tensor_arg(other),))

    def zero_(self):
        return self._in_place(O.ZERO)

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value.ndim:
                raise RuntimeError("fill_ only supports 0-dimension value tensor but got "
                                   f"tensor with {value.ndim} dimensions.")
            return self._in_place(O.FILL_TENSOR, (value,))  # FillBackward3: value's edge
        return self._in_place(O.FILL, (), (value,))

    def copy_(self, src):
        return self._in_place(O.COPY, (_as_tensor_arg(src),))

    def clamp_(self, min=None, max=None):
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            return self._in_place(O.CLAMP_TENSOR, (min, max))
        if not self._dtype.is_floating_point and builtins.any(
                isinstance(b, float) for b in (min, max)):
            # (clamp's scalar kernel names the C++ type, unlike the other in-place ops)
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_c_name(self._dtype)}")
        return self._in_place(O.CLAMP, (), (min, max))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        _check_overlap(self)
        bits = _rng(generator).bit_generator
        with _no_track():  # (float tensors: PyTorch's numbers for the same seed)
            self._write(uniform(bits, self._data.shape, a, b, self._data.dtype)
                        if self._dtype.is_floating_point
                        else _rng(generator).uniform(a, b, self._data.shape), None)
        self._vc[0] += 1
        return self

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        _check_overlap(self)
        self._write(normal(_source(generator), self._data.shape, mean, std,
                           self._data.dtype) if self._dtype.is_floating_point
                    else _rng(generator).normal(mean, std, self._data.shape), None)
        self._vc[0] += 1
        return self

