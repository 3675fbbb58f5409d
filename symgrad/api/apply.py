"""The one door: :func:`apply` runs an op of the table and records it for autograd.

Every tensor operation ends here: the result's dtype (the op's dtype rule), the numpy
forward, the result tensor, and, when gradients are wanted, one IR node with its saved
values.  A view whose base changed in place is brought up to date here before it is used.

This module is plain Python; ``pip install`` compiles it with Cython where a C compiler
is available (see :mod:`symgrad.api.compiled`): the same source either way.
"""
from __future__ import annotations

import builtins
import re
from typing import Callable, Sequence

import numpy as np

from .. import ops as O
from ..ops import dtypes as _dt
from ..ops.dtypes import dtype as _dtype
from ..ops.record import pack_order
from ..ir.cores import new_node, new_tensor
from ..ir.node import _META0, _NUMBER_META, GRAD_MODE, UNUSUAL, Node, Packed
from . import viewmeta as _viewmeta
from .core import PROTO, VMAP, Tensor
from .dual import DUAL
from .shapes import Size

__all__ = ["apply", "saved_values"]

_ndarray = np.ndarray
# Operands that keep their dtype in a floating op: where's condition, a loss's class indices.
_KEEP_DTYPE = ("condition", "target", "indices")


# --------------------------------------------------------------------------- dtypes
def _refuse(op, first, dt) -> None:
    """PyTorch's error for a result dtype (or first operand's, key ``"self:bool"``) that
    it has no kernel for (``op.refuse``)."""
    hit = op.refuse.get(dt.name)
    if hit is None and isinstance(first, Tensor):
        hit = op.refuse.get("self:" + first._dtype.name)
    if hit is not None:
        raise hit[0](hit[1])


_DERIVED: dict[str, Callable] = {
    "self_sym_sizes": lambda arrays, attrs: Size(np.shape(arrays[0])),
    "self_sym_numel": lambda arrays, attrs: int(np.size(arrays[0])),
    "self_dtype": lambda arrays, attrs: _dt.from_numpy(arrays[0].dtype),
    "sizes": lambda arrays, attrs: tuple(np.shape(a)[attrs[0]] for a in arrays),
}

def saved_values(op: O.Op, args: Sequence, attrs: tuple, out, arrays=None,
                 outputs=None) -> list:
    """The values ``op``'s node saves (its plan: operands, attributes, its outputs, derived
    sizes), as its rules take them; ``arrays`` are the operands' data if already at hand,
    ``outputs`` the op's several outputs (an output ``k > 0`` not at hand is derived)."""
    saved = []
    for kind, where in op.plan:
        if kind == "input":
            s = args[where]
        elif kind == "attr":
            s = attrs[where]
        elif kind == "result" and (not where or outputs is not None):
            s = outputs[where] if where else out
        else:
            if arrays is None:
                arrays = [a._data if isinstance(a, Tensor) else a for a in args]
            s = (op.derive.get(where) or _DERIVED[where])(arrays, attrs)
        saved.append(s)
    return saved


# --------------------------------------------------------------------------- apply
def apply(op: O.Op, args: Sequence, attrs: tuple = ()) -> "Tensor":
    """Run ``op`` on ``args`` (tensors or Python numbers) and record it for autograd.

    This is the one door through which every operation passes.

    Examples
    --------
    >>> import symgrad
    >>> from symgrad import ops
    >>> x = symgrad.tensor([1., 2.], requires_grad=True)
    >>> apply(ops.MUL, (x, 3.0))
    tensor([3., 6.], grad_fn=<MulBackward0>)
    """
    if op.simple is not None:
        out = _scalar_case(op, args)
        if out is not None:
            return out
    # One pass over the operands: numpy values (0-d tensors as numpy scalars, whose
    # arithmetic is ten times cheaper than 0-d arrays') and whether a graph is needed.
    arrays = []
    record = False
    for x in args:
        if isinstance(x, Tensor):
            t = x
            if t._view_of is not None and t._vc[0] != t._view_version:
                _refresh_view(x)  # its base changed in place since
            d = t._data
            arrays.append(d if d.ndim else d[()])
            if not record and (t.grad_fn is not None or t._requires_grad):
                record = True
        else:
            arrays.append(x)
    rule = op.dtype
    dt = args[0]._dtype if type(args[0]) is Tensor else None
    if (not rule.fast or dt is None or not dt.is_floating_point or (
            len(args) > 1 and (len(args) > 2 or isinstance(args[1], Tensor)
                               and args[1]._dtype is not dt))):
        dt = rule(args, attrs)
        if op.refuse:
            _refuse(op, args[0], dt)
        if dt.is_floating_point:
            # PyTorch computes in the result dtype: integer and bool operands are converted
            # first (numpy would compute exp(bool) in float16, int * float32 in float64).
            names = op.inputs
            for i, a in enumerate(args):
                if (type(a) is Tensor and not a._dtype.is_floating_point
                        and (op.variadic or names[i] not in _KEEP_DTYPE)):
                    arrays[i] = np.asarray(arrays[i]).astype(dt.np)
    try:
        data = op.forward(*arrays, *attrs)
    except ValueError as e:
        raise _shape_error(op, arrays, attrs, e) from None
    several = None
    if type(data) is tuple:  # every output computed (None: not asked for): one node
        several = data
        for data in several:  # (the first output computed)
            if data is not None:
                break
    # 0-d results may stay numpy scalars; anything else must be an array.
    npdt = dt.np
    if data.dtype is not npdt and data.dtype != npdt:
        data = data.astype(npdt)
    if op.view:
        # A view shares its base's version counter and remembers how it was taken, so
        # that in-place changes through it (or its base) are recorded as PyTorch does.
        a0 = args[0]
        out = new_tensor(PROTO, data, dt, a0._vc)
        out._view_of = (a0, op, attrs)
        out._view_version = a0._vc[0]
        if not data.ndim or not a0._data.ndim:  # (numpy's result is no view of the base)
            out._data = _viewmeta.shared(a0, op, attrs, data)
        if not GRAD_MODE.enabled:
            _viewmeta.made_without_grad(out, a0)  # (PyTorch refuses some in-place changes)
    else:
        out = new_tensor(PROTO, data, dt, [0])
    if VMAP.running:
        VMAP.propagate(args, out)  # marks of vmap's samples
    if not record or op.grads is None or not GRAD_MODE.enabled or not dt.is_floating_point:
        if several is not None:
            return _outputs(out, _made(out, several, data), op, args, attrs)
        return out if not DUAL.levels else DUAL.propagate(op, args, attrs, out)  # tangents
    inputs = []
    meta = []
    nrs = None
    for x in args:
        if isinstance(x, Tensor):
            t = x
            fn = t.grad_fn
            if fn is None and t._requires_grad:
                fn = t._accum or x._accumulator()
            elif fn is not None and t._multi_output:
                # An output of a multi-output node (a custom Function): the edge says which.
                nrs = nrs or [0] * len(args)
                nrs[len(inputs)] = t._output_nr
            inputs.append(x if fn is None else fn)
            shape = t._data.shape
            # 0-d operands share their metadata (the engine knows them by identity)
            meta.append((shape, t._dtype) if shape else _META0.get(t._dtype) or ((), t._dtype))
        else:
            inputs.append(x)
            meta.append(_NUMBER_META)
    made = None if several is None else _made(out, several, data)  # (the node may save them)
    saved = saved_values(op, args, attrs, out, arrays, made)
    versions = [s._vc[0] if isinstance(s, Tensor) else None for s in saved]
    for k, readers in op.optional:
        for i in readers:
            if isinstance(inputs[i], Node):
                break
        else:
            # no input that reads it requires grad: None for a tensor, () for sizes
            saved[k] = None if op.plan[k][0] != "derived" else ()
            versions[k] = None
    out.grad_fn = op.node_class(tuple(inputs), attrs, tuple(saved), tuple(versions),
                                tuple(meta))
    if made is not None:  # (a saved output has its grad_fn when packed, as in PyTorch)
        _number(out, made)
    if GRAD_MODE.saved_hooks:
        _pack(out.grad_fn, saved, versions)
    if nrs is not None:
        out.grad_fn._input_nrs = tuple(nrs)
        out.grad_fn._plain = False
    if several is not None:
        return _outputs(out, made, op, args, attrs)
    if op.outputs:  # the output computed is the last of the node's (op.outputs)
        out._output_nr, out._multi_output = len(op.outputs) - 1, True
    return out if not DUAL.levels else DUAL.propagate(op, args, attrs, out)  # tangents


def _made(out: Tensor, several: tuple, data) -> list:
    """The tensors of an op whose forward computed several outputs (``out`` holds
    ``data``), None where not computed."""
    made = []
    for d in several:
        if d is None or d is data:
            made.append(None if d is None else out)
        else:
            made.append(new_tensor(PROTO, _conform_data(d, out._dtype), out._dtype, [0]))
    return made


def _number(out: Tensor, made: list) -> None:
    """Each output made its output number of ``out``'s node."""
    for k, t in enumerate(made):
        if t is not None:
            t.grad_fn = out.grad_fn
            if t.grad_fn is not None:
                t._output_nr, t._multi_output = k, True


def _outputs(out: Tensor, made: list, op, args, attrs) -> tuple:
    """The outputs of an op whose forward computed several (:func:`_made`), each its
    output number of one node.  Forward mode gives output ``k`` the tangent of the op
    with the output mask (its last attribute) asking for ``k`` alone."""
    _number(out, made)
    for k, t in enumerate(made):
        if t is not None and DUAL.levels:
            DUAL.propagate(op, args, attrs[:-1] + (tuple(i == k for i in range(len(made))),),
                           t)
    return tuple(made)


# The shared input metadata of a node on 0-d operands of a floating dtype: (t,), (t, t),
# (t, number).
_SCALAR_META = {d: ((m,), (m, m), (m, _NUMBER_META)) for d, m in _META0.items()
                if d.is_floating_point}


def _scalar_case(op: O.Op, args: Sequence):
    """:func:`apply` for the case that dominates scalar code (micrograd-style programs),
    with less bookkeeping, or None for any other case: an op whose record has a simple
    saving plan (``op.simple``: at most two operands, no attributes, its floating dtype
    follows its operands, saves inputs or its result) on plain 0-d tensors (not views,
    not one output of several) of one floating dtype and Python numbers, no saved-tensor
    hooks, no forward-mode level open, no vmap running.  The result is what the general
    path gives."""
    first = args[0]
    if type(first) is not Tensor or op.outputs:
        return None
    a = first
    dt = a._dtype
    scalar_meta = _SCALAR_META
    metas = scalar_meta.get(dt)
    if metas is None or a._view_of is not None or a._multi_output:
        return None
    d0 = a._data
    if type(d0) is _ndarray:
        if d0.ndim:
            return None
        d0 = d0[()]
    enabled = True
    if UNUSUAL[0]:  # some thread records nothing or has saved-tensor hooks: this one?
        mode = GRAD_MODE.__dict__  # (this thread's modes: one lookup of the thread-local)
        if mode["saved_hooks"]:
            return None  # (saved-tensor hooks: the general path)
        enabled = mode["enabled"]
    if DUAL.levels or VMAP.running:
        return None  # (forward-mode tangents, vmap's marks: the general path)
    n = len(args)
    second = None
    b = None
    if n == 1:
        try:
            data = op.forward(d0)
        except ValueError:
            return None  # (the general path words the error)
        kind = 0
    elif n == 2:
        second = args[1]
        cls = type(second)
        if cls is Tensor:
            b = second
            if b._dtype is not dt or b._view_of is not None or b._multi_output:
                return None
            d1 = b._data
            if type(d1) is _ndarray:
                if d1.ndim:
                    return None
                d1 = d1[()]
            kind = 1
        elif cls is float or cls is int:
            d1 = second
            kind = 2
        else:
            return None
        try:
            data = op.forward(d0, d1)
        except ValueError:
            return None
    else:
        return None
    if type(data) is not type(d0):
        npdt = dt.np
        if data.dtype is not npdt and data.dtype != npdt:
            data = data.astype(npdt)
    out = new_tensor(PROTO, data, dt, [0])
    if not enabled:
        return out
    mask = 0
    e0 = a.grad_fn
    if e0 is not None:
        mask = 1
    elif a._requires_grad:
        e0 = a._accum
        if e0 is None:
            e0 = a._accumulator()
        mask = 1
    else:
        e0 = a
    if kind == 0:
        if not mask:
            return out
        inputs = (e0,)
        versions = (a._vc[0], None, 0, None)
    else:
        e1 = second
        bv = None
        if kind == 1:
            bv = b._vc[0]
            if b.grad_fn is not None:
                e1 = b.grad_fn
                mask |= 2
            elif b._requires_grad:
                e1 = b._accum
                if e1 is None:
                    e1 = b._accumulator()
                mask |= 2
        if not mask:
            return out
        inputs = (e0, e1)
        versions = (a._vc[0], bv, 0, None)
    index = op.simple[mask]
    values = (first, second, out, None)
    if not index:
        saved = versions = ()
    elif len(index) == 1:
        i = index[0]
        saved = (values[i],)
        versions = (versions[i],)
    elif len(index) == 2:
        i = index[0]
        j = index[1]
        saved = (values[i], values[j])
        versions = (versions[i], versions[j])
    else:
        saved = tuple([values[i] for i in index])
        versions = tuple([versions[i] for i in index])
    out.grad_fn = new_node(op, inputs, (), saved, versions, metas[kind])
    return out


def _pack(node: Node, saved: list, versions: list) -> None:
    """saved_tensors_hooks: the innermost pack hook gets each saved tensor (once the
    node is made, as in PyTorch: a saved output already has its ``grad_fn``) and the
    node keeps what it returns."""
    hooks = GRAD_MODE.saved_hooks
    pack, unpack = hooks[-1]
    GRAD_MODE.saved_hooks = []  # (ops inside a pack hook save their tensors as they are)
    try:
        for k in pack_order(node.op):
            s = saved[k]
            if isinstance(s, Tensor):
                saved[k], versions[k] = Packed(pack(s), unpack), None
    finally:
        GRAD_MODE.saved_hooks = hooks
    node._saved, node._versions = tuple(saved), tuple(versions)
    node._plain = False  # (the engine looks for packed values off the plain path only)


def _conform_data(data, dt: _dtype):
    """A forward result stored in ``dt`` (numpy may widen a type or give a 0-d array)."""
    npdt = dt.np
    if type(data) is not npdt.type and data.dtype is not npdt and data.dtype != npdt:
        data = data.astype(npdt)
    return data


def _shape_error(op, arrays, attrs, err):
    shapes = [np.shape(a) for a in arrays]
    if op.broadcasts and len(shapes) >= 2:
        # PyTorch broadcasts the operands in turn: the first clash is reported.
        a = shapes[0]
        for b in shapes[1:]:
            for i in range(1, max(len(a), len(b)) + 1):
                x = a[-i] if i <= len(a) else 1
                y = b[-i] if i <= len(b) else 1
                if x != y and x != 1 and y != 1:
                    return RuntimeError(f"The size of tensor a ({x}) must match the size of "
                                        f"tensor b ({y}) at non-singleton dimension "
                                        f"{max(len(a), len(b)) - i}")
            a = np.broadcast_shapes(a, b)
    found = re.search(r"maximum supported dimension .* found (\d+)", str(err))
    if found:  # numpy's limit, named as symgrad's
        return RuntimeError(f"{op.name}: symgrad tensors have at most 64 dimensions (numpy's "
                            f"limit; PyTorch allows more), got {found.group(1)}")
    return RuntimeError(f"{op.name}: {err}")


# --------------------------------------------------------------------------- stale views
def _view_root(t) -> tuple:
    """The tensor ``t`` is a view of, and the view ops (with attrs) that lead to ``t``."""
    path = []
    while t._view_of is not None:
        parent, op, attrs = t._view_of
        path.append((op, attrs))
        t = parent
    path.reverse()
    return t, path


def _view_index(base, path) -> tuple:
    """The positions in ``base`` of the elements of the view ``path`` leads to."""
    shape = np.shape(base._data)
    if not shape:
        return ()  # a 0-d base: the view is its one element, reshaped
    flat = np.arange(base._data.size).reshape(shape)
    for op, attrs in path:
        flat = op.forward(flat, *attrs)
    return np.unravel_index(np.asarray(flat), shape)


def _at_view(t, index, shape, view=None):
    """The elements of ``t`` (a tensor) at ``index``, recorded, shaped as the view."""
    return apply(O.AS_STRIDED, (t,), (index, tuple(shape)) + _geometry(t, index, view))


def _geometry(base, index, view) -> tuple:
    """PyTorch's stride and storage offset of ``view`` (elements of ``base`` at ``index``),
    which AsStridedBackward0 shows: from the memory it shares with the base."""
    d, b = getattr(view, "_data", None), base._data
    if d.__class__ is _ndarray and b.__class__ is _ndarray and d.size \
            and np.may_share_memory(d, b):
        start = d.__array_interface__["data"][0] - b.__array_interface__["data"][0]
        return tuple(st // d.itemsize for st in d.strides), start // d.itemsize
    flat = np.ravel_multi_index(index, np.shape(b)) if index else np.zeros((), np.intp)
    shape = np.shape(d) if view is not None else np.shape(flat)
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * builtins.max(shape[k + 1], 1)
    return tuple(strides), int(np.ravel(flat)[0]) if np.size(flat) else 0


def _refresh_view(v) -> None:
    """A view whose base changed in place: PyTorch regenerates its ``grad_fn`` (an
    ``AsStridedBackward0`` of the base's current history) and its values are the base's."""
    base, path = _view_root(v)
    index = _view_index(base, path)
    data = v._data
    if not (data.__class__ is _ndarray and np.may_share_memory(data, base._data)):
        # A copy (a 0-d view holds a numpy scalar): take the values again.
        v._data = np.array(np.asarray(base._data)[index]).reshape(np.shape(data))
    if base.requires_grad:
        if not GRAD_MODE.enabled:
            return  # regenerated when it is next used with grad mode on
        _viewmeta.check_rebased(v)  # (a piece of split, unbind ...: PyTorch's error)
        _viewmeta.regenerated(v, _at_view(base, index, np.shape(data), v).grad_fn)
    v._view_version = v._vc[0]

