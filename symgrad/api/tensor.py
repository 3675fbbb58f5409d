"""The tensor front end: a thin, PyTorch-compatible face over the op table.

Every operation goes through :func:`apply`, which runs the op's numpy forward and, when
gradients are wanted, records one IR node.  No maths lives here: methods only choose an
op and its attributes.
"""
from __future__ import annotations

import builtins
import numbers
import warnings
from typing import Callable, Sequence

import numpy as np

from ..ops import dtypes as _dt
from .. import ops as O
from ..ops.dtypes import dtype as _dtype
from ..ops.dtype_rules import c_name as _c_name
from ..ir.node import GRAD_MODE, AccumulateGrad, Node, RemovableHandle, node_class
from ..ir.node import _sequence

__all__ = ["Tensor", "Size", "apply", "tensor", "as_tensor", "from_numpy"]

_ndarray = np.ndarray
_Number = (int, float, bool)


class _SizeMeta(type):
    def __repr__(cls) -> str:
        return "<class 'torch.Size'>"


class Size(tuple, metaclass=_SizeMeta):
    """A shape, printed as PyTorch prints it: ``torch.Size([2, 3])``.

    Slices, sums and repeats of a Size are Sizes, as in PyTorch.

    Examples
    --------
    >>> s = Size([2, 3])
    >>> s[1:], s + (4,), (1,) + s
    (torch.Size([3]), torch.Size([2, 3, 4]), torch.Size([1, 2, 3]))
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        r = tuple.__getitem__(self, index)
        return Size(r) if index.__class__ is slice else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to "
                            "torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


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
    simple = op.simple
    if simple is not None and len(args) <= 2:
        # The common case, without the general bookkeeping below: one or two operands,
        # plain tensors of one floating dtype (not views, not outputs of multi-output
        # nodes) or Python numbers.  It does exactly what the general path would.
        a = args[0]
        if a.__class__ is Tensor and a._view_of is None and not a._multi_output:
            dt = a._dtype
            d0 = a._data
            if d0.__class__ is _ndarray and not d0.ndim:
                d0 = d0[()]  # 0-d: numpy scalars, whose arithmetic is much cheaper
            if len(args) == 1:
                b = None
                go = dt.is_floating_point
            else:
                b = args[1]
                cb = b.__class__
                if cb is Tensor:
                    go = (b._dtype is dt and dt.is_floating_point and b._view_of is None
                          and not b._multi_output)
                    d1 = b._data
                    if d1.__class__ is _ndarray and not d1.ndim:
                        d1 = d1[()]
                else:
                    go = (cb is float or cb is int) and dt.is_floating_point
                    d1 = b
            if go:
                try:
                    data = op.forward(d0) if b is None else op.forward(d0, d1)
                except ValueError as e:
                    raise _shape_error(op, [d0] if b is None else [d0, d1], attrs,
                                       e) from None
                npdt = dt.np
                if data.__class__ is not npdt.type and data.dtype is not npdt \
                        and data.dtype != npdt:
                    data = data.astype(npdt)
                out = _new(Tensor)
                out._data = data
                out._dtype = dt
                out.grad_fn = None
                out._requires_grad = False
                out._vc = [0]
                if not GRAD_MODE.enabled:  # (a simple op always has gradient rules)
                    return out
                ea = a.grad_fn
                if ea is None:
                    ea = (a._accum or a._accumulator()) if a._requires_grad else a
                if b is None:
                    if ea is a:
                        return out
                    inputs = (ea,)
                    meta = (_META0[dt] if d0.__class__ is not _ndarray else (d0.shape, dt),)
                    mask = 1
                else:
                    if cb is Tensor:
                        eb = b.grad_fn
                        if eb is None:
                            eb = (b._accum or b._accumulator()) if b._requires_grad else b
                        mask = (ea is not a) | (eb is not b) << 1
                        meta = (_META0[dt] if d0.__class__ is not _ndarray else (d0.shape, dt),
                                _META0[dt] if d1.__class__ is not _ndarray else (d1.shape, dt))
                    else:
                        eb = b
                        mask = ea is not a
                        meta = (_META0[dt] if d0.__class__ is not _ndarray else (d0.shape, dt),
                                _NUMBER_META)
                    if not mask:
                        return out
                    inputs = (ea, eb)
                node = _new(op.node_class)
                node.inputs = inputs
                node.attrs = ()
                if op.plan:
                    pick = simple[mask]
                    node._saved = pick((a, b, out, None))
                    node._versions = pick((a._vc[0], b._vc[0] if cb is Tensor else None, 0,
                                           None) if b is not None else (a._vc[0], None, 0, None))
                else:
                    node._saved = node._versions = ()
                node._meta = meta
                node._seq = _next_seq()
                out.grad_fn = node
                return out
    # One pass over the operands: numpy values (0-d tensors as numpy scalars, whose
    # arithmetic is ten times cheaper than 0-d arrays') and whether a graph is needed.
    arrays = []
    record = False
    for a in args:
        if isinstance(a, Tensor):
            if a._view_of is not None and a._vc[0] != a._view_version:
                _refresh_view(a)  # its base changed in place since
            d = a._data
            arrays.append(d if d.ndim else d[()])
            if not record and (a.grad_fn is not None or a._requires_grad):
                record = True
        else:
            arrays.append(a)
    rule = op.dtype
    dt = args[0]._dtype if args[0].__class__ is Tensor else None
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
                if (a.__class__ is Tensor and not a._dtype.is_floating_point
                        and (op.variadic or names[i] != "condition")):
                    arrays[i] = np.asarray(arrays[i]).astype(dt.np)
    try:
        data = op.forward(*arrays, *attrs)
    except ValueError as e:
        raise _shape_error(op, arrays, attrs, e) from None
    # 0-d results may stay numpy scalars; anything else must be an array.
    npdt = dt.np
    if data.dtype is not npdt and data.dtype != npdt:
        data = data.astype(npdt)
    out = _new(Tensor)
    out._data = data
    out._dtype = dt
    out.grad_fn = None
    out._requires_grad = False
    if op.view:
        # A view shares its base's version counter and remembers how it was taken, so
        # that in-place changes through it (or its base) are recorded as PyTorch does.
        a0 = args[0]
        out._vc = a0._vc
        out._view_of = (a0, op, attrs)
        out._view_version = a0._vc[0]
    else:
        out._vc = [0]
    if not record or op.grads is None or not GRAD_MODE.enabled or not dt.is_floating_point:
        return out
    inputs = []
    meta = []
    nrs = None
    for a in args:
        if isinstance(a, Tensor):
            fn = a.grad_fn
            if fn is None and a._requires_grad:
                fn = a._accum or a._accumulator()
            elif fn is not None and a._multi_output:
                # An output of a multi-output node (a custom Function): the edge says which.
                nrs = nrs or [0] * len(args)
                nrs[len(inputs)] = a._output_nr
            inputs.append(a if fn is None else fn)
            meta.append((a._data.shape, a._dtype))
        else:
            inputs.append(a)
            meta.append(_NUMBER_META)
    saved = []
    versions = []
    for kind, where in op.plan:
        if kind == "input":
            s = args[where]
        elif kind == "attr":
            s = attrs[where]
        elif kind == "result":
            s = out
        else:
            s = (op.derive.get(where) or _DERIVED[where])(arrays, attrs)
        saved.append(s)
        versions.append(s._vc[0] if isinstance(s, Tensor) else None)
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
    if nrs is not None:
        out.grad_fn._input_nrs = tuple(nrs)
        out.grad_fn._plain = False
    return out


def _conform_data(data, dt: _dtype):
    """A forward result stored in ``dt`` (numpy may widen a type or give a 0-d array)."""
    npdt = dt.np
    if data.__class__ is not npdt.type and data.dtype is not npdt and data.dtype != npdt:
        data = data.astype(npdt)
    return data


_NUMBER_META = ((), None)
# The input metadata of 0-d operands, shared: the engine recognises them by identity.
_META0 = {d: ((), d) for d in (_dt.float16, _dt.float32, _dt.float64, _dt.int64, _dt.int32,
                               _dt.bool)}
_next_seq = _sequence.__next__
_FAST_OPERANDS = frozenset((float, int))  # with Tensor, once the class exists (below)


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
    return RuntimeError(f"{op.name}: {err}")


def _make(data: np.ndarray, dt: _dtype, requires_grad: bool = False) -> "Tensor":
    t = _new(Tensor)
    t._data = data
    t._dtype = dt
    t.grad_fn = None
    t._requires_grad = requires_grad
    t._vc = [0]
    return t


_new = object.__new__


def _as_tensor_arg(x):
    """Numbers stay Python numbers (PyTorch's wrapped scalars); numpy scalars too."""
    if isinstance(x, Tensor) or type(x) in (int, float, bool):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, numbers.Number):
        return float(x) if isinstance(x, numbers.Real) else x
    if isinstance(x, (np.ndarray, list, tuple)):
        return tensor(x)
    return NotImplemented


def _number(x):
    """A Python number for a scalar argument (``alpha=torch.tensor(2.)`` is 2.0)."""
    if isinstance(x, Tensor):
        return x.item()
    return x.item() if isinstance(x, np.generic) else x


def _binary(op, a, b):
    if b.__class__ in _FAST_OPERANDS:
        return apply(op, (a, b))
    b = _as_tensor_arg(b)
    if b is NotImplemented:
        return NotImplemented
    return apply(op, (a, b))


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
        v.grad_fn = _at_view(base, index, np.shape(data), v).grad_fn
    v._view_version = v._vc[0]


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
    index = _view_index(base, path)
    flat = np.ravel_multi_index(index, np.shape(base._data)) if index else np.zeros(
        np.size(v._data), dtype=np.intp)
    if np.unique(flat).size != np.size(flat):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    if track:
        source = _make(np.array(v._data, copy=True), v._dtype)
        source.grad_fn = v.grad_fn
        result = apply(op, (source,) + tuple(others), attrs)
        _save_original(result, source)
        values = result._data
    else:
        arrays = [o._data if isinstance(o, Tensor) else o for o in others]
        values = op.forward(v._data, *arrays, *attrs)
    v._write(values, op)  # casting checks, and the values land in v
    if base._data.__class__ is not _ndarray:
        base._data = np.array(base._data)
    if track and result.grad_fn is not None:
        base.grad_fn = _copy_slices(base, result.grad_fn, index, np.shape(v._data))
    base._data[index] = np.asarray(v._data) if index else np.asarray(v._data).reshape(())
    v._vc[0] += 1
    if track:
        v.grad_fn = _at_view(base, index, np.shape(v._data), v).grad_fn
    v._view_version = v._vc[0]


class CopySlices(node_class(O.COPY_SLICES)):
    """PyTorch's CopySlices around an in-place op ``fn`` applied to a view of the base.

    Its edges are the base's history and ``fn``'s other inputs; its backward runs ``fn``'s
    rules on the view's part of the gradient and writes their first result back there.
    """

    __slots__ = ()

    def _custom_backward(self, g, create_graph: bool, needed) -> list:
        from ..ir.backends import NUMPY, TENSOR
        from ..engine.reverse import _input_grads
        m = TENSOR if create_graph else NUMPY
        fn, view_shape = self._fn, self._view_shape
        index = self.attrs[0]
        part = m.index(g, index) if index else m.reshape(g, view_shape)
        first = fn.inputs[0]
        grads = _input_grads(fn, part, create_graph, lambda x: x is first or needed is None
                             or needed(x))
        r0 = grads[0]
        if not index:
            base_grad = m.reshape(r0, ()) if r0 is not None else g * 0
        else:
            base_grad = m.put(g, index, 0.0 if r0 is None else r0)
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
    node._input_nrs = nrs
    node._plain = False
    return node


def _is_view_index(index, shape: tuple) -> bool:
    """Does assigning at ``index`` write through a view (PyTorch's message says so)?

    Basic indexing that selects (an integer, ``None``, a partial slice) makes a view
    first; full slices, ``...`` and advanced indices alone write into the tensor itself.
    """
    items = index if isinstance(index, tuple) else (index,)

    def width(i):
        if i is None or i is Ellipsis:
            return 0
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            return i.ndim
        return 1

    dim = 0
    for k, i in enumerate(items):
        if i is Ellipsis:
            dim = len(shape) - builtins.sum(width(j) for j in items[k + 1:])
        elif i is None or isinstance(i, (int, np.integer, bool, np.bool_)):
            return True
        elif isinstance(i, np.ndarray) and i.ndim == 0:
            return True
        elif isinstance(i, slice):
            if dim < len(shape) and i.indices(shape[dim]) != (0, shape[dim], 1):
                return True
        dim += width(i)
    return False


# --------------------------------------------------------------------------- Tensor
_WARNED_ONCE: set = set()
_SCALAR_GRAD_WARNING = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
    "behavior.\nConsider using tensor.detach() first. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")


def _comparand(name: str, other):
    """The other operand of ``eq``/``lt``/... as methods: a tensor or a number only."""
    if isinstance(other, Tensor):
        return other
    if isinstance(other, (builtins.int, builtins.float, np.number, np.bool_)):
        return _as_tensor_arg(other)
    got = _type_name(other)
    if isinstance(other, (list, tuple)):
        items = ", ".join(_type_name(x) for x in other)
        got += f" of [{items}]" if isinstance(other, list) else f" of ({items})"
    bad = f"      didn't match because some of the arguments have invalid types: (!{got}!)\n"
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({_type_name(other)}), but expected one of:\n * (Tensor other)\n{bad}"
                    f" * (Number other)\n{bad}")


def _all_any_error(name: str, args, kwargs) -> TypeError:
    got = ", ".join([_type_name(a) for a in args]
                    + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n * ()\n      didn't match because some of the arguments have invalid "
        f"types: (!{got}!)\n * (tuple of ints dim = None, bool keepdim = False)\n"
        " * (int dim, bool keepdim = False)\n")


def _format_order(ord) -> str:
    return ("" if ord > 0 else "-") + "inf"


def _type_name(x) -> str:
    """A type's name as PyTorch's argument errors print it (``numpy.ndarray``)."""
    t = type(x)
    return ("numpy." if t.__module__ == "numpy" else "") + t.__name__


def _warn_once(message: str, stacklevel: int = 2) -> None:
    """Warn the first time only in this process, as PyTorch's ``TORCH_WARN_ONCE`` does."""
    if message not in _WARNED_ONCE:
        _WARNED_ONCE.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


class _TensorMeta(type):
    """Shows symgrad's classes under PyTorch's names: ``<class 'torch.Tensor'>``.

    Teaching notebooks print ``type(x)``; the names come from ``_torch_name`` (a subclass
    without one shows its own module).
    """

    def __repr__(cls) -> str:
        name = cls.__dict__.get("_torch_name")
        return f"<class '{name}'>" if name else super().__repr__()


class _LegacyMeta(_TensorMeta):
    """``FloatTensor`` and friends: ``isinstance(t, torch.FloatTensor)`` asks the dtype."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is _LEGACY_DTYPE.get(cls)


def _tensor_options(d) -> str:
    return (f"TensorOptions(dtype={_c_name(d).replace('long int', 'long')}, device=cpu, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _legacy_signature_error(args, kwargs) -> str:
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                              for k, v in kwargs.items()]
    return ("new() received an invalid combination of arguments - got "
            f"({', '.join(got)}), but expected one of:\n"
            " * (*, torch.device device = None)\n"
            "      didn't match because some of the keywords were incorrect: "
            f"{', '.join(kwargs)}\n"
            " * (torch.Storage storage)\n"
            " * (Tensor other)\n"
            " * (tuple of ints size, *, torch.device device = None)\n"
            " * (object data, *, torch.device device = None)\n")


class Tensor(metaclass=_TensorMeta):
    """A multi-dimensional array that records the operations applied to it.

    ``Tensor(data)`` is PyTorch's legacy constructor: it makes a tensor of the default
    dtype (``float32``).  Use :func:`symgrad.tensor` to infer the dtype from the data.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.Tensor([4])
    >>> x.requires_grad_()
    tensor([4.], requires_grad=True)
    >>> f = 5 * x ** 2 + 3
    >>> f.backward()
    >>> x.grad
    tensor([40.])
    """

    __slots__ = ("_data", "_dtype", "grad_fn", "_requires_grad", "_vc", "__weakref__",
                 "__dict__")
    # Rarely set: class-level defaults keep tensor creation cheap.
    _grad = None
    _accum = None
    _hooks = None
    _post_accumulate_hooks = None
    _output_nr = 0  # which output of its grad_fn this tensor is (custom Functions)
    _multi_output = False  # is its grad_fn a node with several outputs?
    _view_of = None  # for a view: (the tensor it views, the view op, its attrs)
    _view_version = 0  # the version its grad_fn and data were taken at
    _retains_grad = False
    _name = None
    __array_ufunc__ = None  # numpy defers to our operators: np.float64(2) * t is a Tensor
    __array_priority__ = 1000
    _torch_name = "torch.Tensor"

    def __new__(cls, *args, **kwargs):
        # PyTorch's legacy constructor: Tensor(data), Tensor(*sizes), Tensor(other).  The
        # typed ones (FloatTensor, ...) return plain tensors of their dtype.
        legacy = _LEGACY_DTYPE.get(cls)
        dt = legacy or _dt.get_default_dtype()
        kwargs.pop("device", None)
        if kwargs:
            raise TypeError(_legacy_signature_error(args, kwargs))
        if len(args) == 1 and isinstance(args[0], Tensor):
            other = args[0]
            if legacy is not None and other.dtype is not legacy:
                raise TypeError(f"expected {_tensor_options(legacy)} (got "
                                f"{_tensor_options(other.dtype)})")
            t = apply(O.ALIAS, (other,))
        elif len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, (str, bytes)):
                raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
            if not isinstance(data, (list, tuple, range, np.ndarray)):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
            t = _from_data(data, dt)
        else:
            for i, a in enumerate(args):
                if not isinstance(a, int):
                    raise TypeError(f"new(): argument 'size' failed to unpack the object at "
                                    f"pos {i + 1} with error \"type must be tuple of ints,but "
                                    f"got {type(a).__name__}\"")
            if builtins.any(a < 0 for a in args):
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"{builtins.min(args)}: {list(args)}")
            t = _make(np.zeros(args if args else (0,), dt.np), dt)
        if cls is Tensor or legacy is not None:
            return t
        sub = _new(cls)  # a user's subclass of Tensor
        for s in ("_data", "_dtype", "grad_fn", "_requires_grad", "_vc"):
            setattr(sub, s, getattr(t, s))
        return sub

    # -- attributes ------------------------------------------------------------------
    @property
    def data(self) -> "Tensor":
        return _make(self._storage(), self._dtype)

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(value).__name__}")
        if self.requires_grad and not value._dtype.is_floating_point:
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._data = value._data
        self._dtype = value._dtype

    @property
    def dtype(self) -> _dtype:
        return self._dtype

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self):
        return _CPU

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad or self.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag.__class__ is not builtins.bool:
            raise RuntimeError("requires_grad must be a bool")
        if flag and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self._set_requires_grad(flag, "only Tensors of floating point and complex dtype "
                                      "can require gradients")

    def _set_requires_grad(self, flag, int_message):
        if self.grad_fn is not None:
            if flag:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        if flag and not self._dtype.is_floating_point:
            raise RuntimeError(int_message)
        self._requires_grad = bool(flag)

    def requires_grad_(self, *args, **kwargs) -> "Tensor":
        """Set ``requires_grad`` (``True`` by default) of this leaf in place; returns it."""
        requires_grad = kwargs.pop("requires_grad", True) if not args else args[0]
        if len(args) > 1 or (args and "requires_grad" in kwargs):
            raise TypeError(f"requires_grad_() takes from 0 to 1 positional arguments but "
                            f"{len(args)} were given")
        for k in kwargs:
            raise TypeError(f"requires_grad_() got an unexpected keyword argument '{k}'")
        if requires_grad.__class__ is not builtins.bool:
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {_type_name(requires_grad)}")
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can "
                                               "require gradients")
        return self

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                "accessed. Its .grad attribute won't be populated during "
                "autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                "access the non-leaf Tensor by mistake, make sure you access the leaf "
                "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                "information. (Triggered internally at /__w/pytorch/pytorch/build/aten/"
                "src/ATen/core/TensorBody.h:493.)", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"grad of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP_NAMES[value.dtype.name]}'"
                    f" to a tensor with grad_dtype '{_SCALAR_NAMES[self.dtype.name]}'. The "
                    "gradient must match the tensor's grad_dtype (defaults to the tensor's "
                    "dtype). You can set the tensor's grad_dtype attribute with a specific "
                    "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging "
                    "the dtypes of a tensor and its gradient may break downstream systems that "
                    "assume they match.")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def _version(self) -> int:
        return self._vc[0]

    @_version.setter
    def _version(self, value) -> None:
        raise AttributeError("attribute '_version' of 'torch._C.TensorBase' objects is not "
                             "writable")

    @property
    def name(self) -> str | None:
        """symgrad's own: the leaf's name in symbolic output and drawings."""
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value

    @property
    def T(self) -> "Tensor":
        if self.ndim == 2:
            return apply(O.PERMUTE, (self,), ((1, 0),))
        if self.ndim == 0:
            _warn_once(
                "Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                "these cases. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                "native/TensorShape.cpp:4321.)")
        if self.ndim != 2 and self.ndim > 0:
            _warn_once(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their "
                "shape is deprecated and it will throw an error in a future release. "
                "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. "
                "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                "TensorShape.cpp:4314.)")
        return apply(O.PERMUTE, (self,), (tuple(range(self.ndim - 1, -1, -1)),))

    @property
    def mT(self) -> "Tensor":
        if self.ndim == 0:
            _warn_once(
                "Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                "these cases. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                "native/TensorShape.cpp:4373.)")
            return self
        if self.ndim == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of "
                               "matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    # -- autograd ----------------------------------------------------------------------
    def _accumulator(self) -> AccumulateGrad:
        acc = self._accum
        if acc is None:
            acc = self._accum = AccumulateGrad(self)
        return acc

    def backward(self, gradient=None, retain_graph=None, create_graph=False,
                 inputs=None) -> None:
        """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
        from ..autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; may replace it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            if self._multi_output:
                return self.grad_fn._register_tensor_hook(hook, self._output_nr)
            return self.grad_fn._register_tensor_hook(hook)
        return self._accumulator()._register_tensor_hook(hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(tensor)`` runs after a gradient was accumulated into this leaf's ``.grad``.

        Examples
        --------
        >>> import symgrad as torch
        >>> x = torch.tensor([1., 2.], requires_grad=True)
        >>> h = x.register_post_accumulate_grad_hook(lambda t: print("grad", t.grad))
        >>> (x * 3).sum().backward()
        grad tensor([3., 3.])
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = []
        self._post_accumulate_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_hooks, hook)

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        import weakref
        self._retains_grad = True
        self.grad_fn._retain = weakref.ref(self)
        self.grad_fn._plain = False

    def detach(self) -> "Tensor":
        t = _make(self._storage(), self._dtype)
        t._vc = self._vc
        return t

    def _storage(self) -> np.ndarray:
        """The data as an array that other tensors may share (``.data``, ``detach()``,
        ``numpy()``): a 0-d result kept as a numpy scalar becomes a 0-d array first, so
        that in-place changes through either tensor show in both, as in PyTorch."""
        d = self._data
        if d.__class__ is not _ndarray:
            d = self._data = np.array(d)
        return d

    def detach_(self) -> "Tensor":
        if self._view_of is not None or (self.grad_fn is not None and self.grad_fn.op is not
                                         None and self.grad_fn.op.view):
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                "be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                "solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    # -- conversion ----------------------------------------------------------------------
    def size(self, dim: int | None = None):
        if dim is None:
            return self.shape
        if not isinstance(dim, (builtins.int, np.integer)) or isinstance(dim, builtins.bool):
            raise TypeError(f"size(): argument 'dim' (position 1) must be int, not "
                            f"{_type_name(dim)}")
        if not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[_wrap_dim(dim, self.ndim)]

    def stride(self, dim: int | None = None):
        """The strides in elements, as PyTorch reports them."""
        s = _strides(self)
        return s if dim is None else s[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self) -> bool:
        return _contiguous(self._data)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._dtype.itemsize * int(self._data.size)

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def output_nr(self) -> int:
        return self._output_nr

    def new_tensor(self, data, dtype=None, device=None, requires_grad: bool = False):
        """A new leaf holding ``data``, of this tensor's dtype unless ``dtype`` is given."""
        if isinstance(data, Tensor):
            warnings.warn(
                "To copy construct from a tensor, it is recommended to use sourceTensor."
                "detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
                "rather than tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        t = _from_data(data, _dt.as_dtype(dtype, "new_tensor") or self._dtype)
        return t.requires_grad_(requires_grad) if requires_grad else t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
        from .creation import zeros
        return zeros(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
        from .creation import ones
        return ones(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False):
        from .creation import empty
        return empty(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None,
                 requires_grad: bool = False):
        from .creation import full
        return full(size, fill_value, dtype=dtype or self._dtype,
                    requires_grad=requires_grad)

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be "
                               "converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._storage()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def float(self) -> "Tensor":
        return self.to(_dt.float32)

    def double(self) -> "Tensor":
        return self.to(_dt.float64)

    def half(self) -> "Tensor":
        return self.to(_dt.float16)

    def long(self) -> "Tensor":
        return self.to(_dt.int64)

    def int(self) -> "Tensor":
        return self.to(_dt.int32)

    def bool(self) -> "Tensor":
        return self.to(_dt.bool)

    def to(self, *args, **kwargs) -> "Tensor":
        d = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _dtype):
                d = a
        if d is None or d is self._dtype:
            return self
        return apply(O.TO_COPY, (self,), (d,))

    def type(self, dtype=None):
        if dtype is None:
            return "torch." + _LEGACY_NAMES[self._dtype.name]
        if isinstance(dtype, str):  # 'torch.DoubleTensor'
            name = dtype[6:] if dtype.startswith("torch.") else None
            found = [k for k, v in _LEGACY_NAMES.items() if v == name]
            if not found:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = getattr(_dt, found[0])
        elif isinstance(dtype, type):
            if dtype not in _LEGACY_DTYPE:
                raise ValueError(f"invalid type: '{dtype.__name__}'")
            dtype = _LEGACY_DTYPE[dtype]
        return self.to(dtype)

    def cpu(self) -> "Tensor":
        return self

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def contiguous(self) -> "Tensor":
        if _contiguous(self._data):
            return self
        return apply(O.CLONE_CONTIGUOUS, (self,))

    def clone(self) -> "Tensor":
        return apply(O.CLONE, (self,))

    def __repr__(self) -> str:
        from .printing import tensor_repr
        fn = self.grad_fn
        return tensor_repr(np.asarray(self._data), self._dtype.name,
                           requires_grad=self._requires_grad and fn is None,
                           grad_fn=None if fn is None else type(fn).__name__,
                           default_dtype=_dt.get_default_dtype().name,
                           parameter=type(self) is not Tensor and _is_param(self))

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return str(self)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter([self[i] for i in range(self._data.shape[0])])

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if not self._data.size else 'more than one value'}"
                               f" is ambiguous")
        return builtins.bool(self._data.reshape(()))

    def __float__(self) -> float:
        if self.requires_grad:
            _warn_once(_SCALAR_GRAD_WARNING)
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(()).item()

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted "
                            "to an index")
        return int(self.item())

    __hash__ = object.__hash__

    # -- arithmetic ----------------------------------------------------------------------
    # Tensors and Python numbers go straight to apply (what _binary would do, one call
    # less: these are the hottest calls of scalar code).
    def __add__(self, other):
        if other.__class__ in _FAST_OPERANDS:
            return apply(O.ADD, (self, other))
        return _binary(O.ADD, self, other)

    __radd__ = __add__

    def __sub__(self, other):
        if other.__class__ in _FAST_OPERANDS:
            return apply(O.SUB, (self, other))
        return _binary(O.SUB, self, other)

    def __rsub__(self, other):
        other = _as_tensor_arg(other)
        if isinstance(other, Tensor):
            return apply(O.SUB, (other, self))
        return apply(O.RSUB, (self,), (other, 1))

    def __mul__(self, other):
        if other.__class__ in _FAST_OPERANDS:
            return apply(O.MUL, (self, other))
        return _binary(O.MUL, self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if other.__class__ in _FAST_OPERANDS:
            return apply(O.DIV, (self, other))
        return _binary(O.DIV, self, other)

    def __rtruediv__(self, other):
        other = _as_tensor_arg(other)
        if isinstance(other, Tensor):
            return apply(O.DIV, (other, self))
        return apply(O.MUL, (apply(O.RECIPROCAL, (self,)), other))

    def __pow__(self, exponent):
        exponent = _as_tensor_arg(exponent)
        if isinstance(exponent, Tensor):
            return apply(O.POW_TENSOR, (self, exponent))
        return apply(O.POW, (self,), (exponent,))

    def __rpow__(self, base):
        base = _as_tensor_arg(base)
        if isinstance(base, Tensor):
            return apply(O.POW_TENSOR, (base, self))
        return apply(O.RPOW, (self,), (base,))

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(tensor(other), self)

    def __neg__(self):
        return apply(O.NEG, (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return apply(O.ABS, (self,))

    # Comparisons with a list or tuple are not PyTorch's: == is then False, < a TypeError.
    def __eq__(self, other):  # type: ignore[override]
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["eq"], self, other)

    def __ne__(self, other):  # type: ignore[override]
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["ne"], self, other)

    def __lt__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["lt"], self, other)

    def __le__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["le"], self, other)

    def __gt__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["gt"], self, other)

    def __ge__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["ge"], self, other)

    def __and__(self, other):
        return _binary(O.OPS["logical_and"], self, other)

    def __or__(self, other):
        return _binary(O.OPS["logical_or"], self, other)

    def __invert__(self):
        return apply(O.OPS["logical_not"], (self,))

    # in-place operators: PyTorch's a += b is add_
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # -- named operations ------------------------------------------------------------------
    def add(self, other, *, alpha=1):
        if alpha.__class__ is int and alpha == 1:
            return self + other
        return apply(O.ADD_ALPHA, (self, _as_tensor_arg(other)), (_number(alpha),))

    def sub(self, other, *, alpha=1):
        if alpha.__class__ is int and alpha == 1:
            return self - other
        return apply(O.SUB_ALPHA, (self, _as_tensor_arg(other)), (_number(alpha),))

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def pow(self, exponent):
        return self ** exponent

    def neg(self):
        return -self

    def eq(self, other):
        return _binary(O.OPS["eq"], self, _comparand("eq", other))

    def ne(self, other):
        return _binary(O.OPS["ne"], self, _comparand("ne", other))

    def lt(self, other):
        return _binary(O.OPS["lt"], self, _comparand("lt", other))

    def le(self, other):
        return _binary(O.OPS["le"], self, _comparand("le", other))

    def gt(self, other):
        return _binary(O.OPS["gt"], self, _comparand("gt", other))

    def ge(self, other):
        return _binary(O.OPS["ge"], self, _comparand("ge", other))

    def abs(self):
        return apply(O.ABS, (self,))

    def exp(self):
        return apply(O.EXP, (self,))

    def log(self):
        return apply(O.LOG, (self,))

    def sqrt(self):
        return apply(O.SQRT, (self,))

    def sin(self):
        return apply(O.SIN, (self,))

    def cos(self):
        return apply(O.COS, (self,))

    def tan(self):
        return apply(O.TAN, (self,))

    def tanh(self):
        return apply(O.TANH, (self,))

    def sigmoid(self):
        return apply(O.SIGMOID, (self,))

    def relu(self):
        return apply(O.RELU, (self,))

    def reciprocal(self):
        return apply(O.RECIPROCAL, (self,))

    def sign(self):
        return apply(O.SIGN, (self,))

    def sgn(self):
        return apply(O.SGN, (self,))

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            return apply(O.CLAMP_TENSOR, (self, min, max))
        return apply(O.CLAMP, (self,), (min, max))

    clip = clamp

    def maximum(self, other):
        return maximum(self, other)

    def minimum(self, other):
        return minimum(self, other)

    def where(self, condition, other):
        from .functional import where
        return where(condition, self, other)

    # ``axis`` is PyTorch's numpy-style alias of ``dim`` (x.sum(axis=0)).
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        dim = dim if axis is None else axis
        if dtype is not None and not dtype.is_floating_point and self.requires_grad \
                and GRAD_MODE.enabled:
            raise RuntimeError(f"Autograd not support dtype: {_SCALAR_NAMES[dtype.name]}")
        return self._reduce(O.SUM, O.SUM_DIM, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        dim = dim if axis is None else axis
        d = self._dtype if dtype is None else dtype
        if not d.is_floating_point:
            raise RuntimeError(
                "mean(): could not infer output dtype. "
                f"{'Input' if dtype is None else 'Optional'} dtype must be either a "
                f"floating point or complex dtype. Got: {_SCALAR_NAMES[d.name]}")
        return self._reduce(O.MEAN, O.MEAN_DIM, dim, keepdim, dtype)

    def _reduce(self, full, along, dim, keepdim, dtype):
        """sum/mean: over everything (``full``) or along dims (``along``), in ``dtype``."""
        if dim is not None:
            # PyTorch takes dims as a list: sum(0) saves (0,)
            dim = (dim,) if isinstance(dim, int) else tuple(dim)
            seen = set()
            for d in dim:
                w = _wrap_dim(d, self.ndim)
                if w in seen:
                    raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
                seen.add(w)
        cast = dtype is not None and dtype is not self._dtype
        if dim is None and not keepdim:
            return apply(O.OPS[full.key + "_dtype"], (self,), (dtype,)) if cast else \
                apply(full, (self,))
        if cast:
            return apply(O.OPS[along.key + "_dtype"], (self,), (dim, keepdim, dtype))
        return apply(along, (self,), (dim, keepdim))

    def _extreme(self, full, along, pick, dim, keepdim):
        if isinstance(dim, Tensor):
            return (maximum if full is O.MAX else minimum)(self, dim)
        if dim is None:
            if self.numel() == 0:
                raise RuntimeError(f"{full.name}(): Expected reduction dim to be specified "
                                   "for input.numel() == 0. Specify the reduction dim with "
                                   "the 'dim' argument.")
            return apply(full, (self,))
        d = _wrap_dim(dim, self.ndim)  # checked; the op keeps dim as given, as PyTorch does
        if self.ndim and not self._data.shape[d]:
            raise IndexError(f"{full.name}(): Expected reduction dim {d} to have non-zero size.")
        values = apply(along, (self,), (dim, keepdim))
        indices = apply(pick, (self,), (dim, keepdim))
        from ..autograd.return_types import MinMax
        return MinMax(values, indices, full.name)

    def max(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        return self._extreme(O.MAX, O.MAX_DIM, O.OPS["max_indices"], dim, keepdim)

    def min(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        return self._extreme(O.MIN, O.MIN_DIM, O.OPS["min_indices"], dim, keepdim)

    def argmax(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        if dim is not None:
            _wrap_dim(dim, self.ndim)
        if dim is None:
            return apply(O.OPS["argmax"], (self.reshape(-1),), (0, False))
        return apply(O.OPS["argmax"], (self,), (dim, keepdim))

    def argmin(self, dim=None, keepdim=False, *, axis=None):
        dim = dim if axis is None else axis
        if dim is not None:
            _wrap_dim(dim, self.ndim)
        if dim is None:
            return apply(O.OPS["argmin"], (self.reshape(-1),), (0, False))
        return apply(O.OPS["argmin"], (self,), (dim, keepdim))

    def all(self, *args, **kwargs):
        """Whether all elements (along ``dim``, if given) are true; ``keepdim`` as in sum."""
        return self._all_any("all", args, kwargs)

    def any(self, *args, **kwargs):
        """Whether any element (along ``dim``, if given) is true; ``keepdim`` as in sum."""
        return self._all_any("any", args, kwargs)

    def _all_any(self, name, args, kwargs):
        if len(args) > 2 or builtins.any(k not in ("dim", "keepdim") for k in kwargs):
            raise _all_any_error(name, args, kwargs)
        dim = args[0] if args else kwargs.get("dim")
        keepdim = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        is_int = isinstance(dim, (builtins.int, np.integer)) and not isinstance(
            dim, builtins.bool)
        if not (dim is None or is_int or (isinstance(dim, (tuple, list)) and builtins.all(
                isinstance(d, (builtins.int, np.integer)) for d in dim))) or not isinstance(
                    keepdim, builtins.bool):
            raise _all_any_error(name, args, kwargs)
        dims = (dim,) if is_int else dim
        if dims is not None:
            n = builtins.max(self.ndim, 1)
            seen = set()
            for d in dims:
                w = _wrap_dim(d, self.ndim)
                if w in seen:
                    raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
                seen.add(w)
            dims = tuple(d % n for d in dims) if self.ndim else None
        return apply(O.OPS[name], (self,), (dims, keepdim))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """PyTorch's ``Tensor.norm``: a vector norm (``LinalgVectorNormBackward0``) of all
        elements or along ``dim``; ``"fro"`` is the 2-norm."""
        if isinstance(p, str):
            if not (p == "fro" and (dim is None or isinstance(dim, builtins.int)
                                    or len(dim) <= 2)):
                if p not in ("fro", "nuc"):
                    raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
                if self.ndim < 2:
                    raise RuntimeError("linalg.matrix_norm: The input tensor A must have at "
                                       "least 2 dimensions.")
                if dim is not None and not isinstance(dim, builtins.int) and len(dim) != 2:
                    raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                                       f"{' '.join(str(d) for d in dim)}")
                raise NotImplementedError("symgrad has no nuclear norm (it needs an SVD)")
            ord = 2
        else:
            ord = 2 if p is None else p
        if not self._dtype.is_floating_point:
            raise RuntimeError("linalg.vector_norm: Expected a floating point or complex "
                               f"tensor as input. Got {_SCALAR_NAMES[self._dtype.name]}")
        t = self if dtype is None else self.to(dtype)
        if dim is not None:
            dim = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
            _check_dims(dim, t.ndim)
        if ord in (float("inf"), -float("inf")) and not t._data.size:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_order(ord)} "
                               "norm on an empty tensor because the operation does not have "
                               "an identity")
        return apply(O.NORM, (t,), (ord, dim, keepdim))

    def softmax(self, dim=None, dtype=None, *, axis=None):
        return self._softmax(O.SOFTMAX, dim if axis is None else axis, dtype)

    def log_softmax(self, dim=None, dtype=None, *, axis=None):
        return self._softmax(O.LOG_SOFTMAX, dim if axis is None else axis, dtype)

    def _softmax(self, op, dim, dtype):
        if dim is None:
            raise TypeError(f'{op.name.strip("_")}() missing 1 required positional arguments: '
                            '"dim"')
        d = _wrap_dim(dim, self.ndim)
        t = self if dtype is None else self.to(dtype)  # PyTorch casts first: ToCopyBackward0
        if not t._dtype.is_floating_point:
            last = "_lastdim" if d == builtins.max(t.ndim, 1) - 1 else ""
            raise NotImplementedError(f'"{op.name.strip("_")}{last}_kernel_impl" not '
                                      f"implemented for '{_SCALAR_NAMES[t._dtype.name]}'")
        return apply(op, (t,), (dim,))

    def dot(self, other):
        return dot(self, other)

    def matmul(self, other):
        return matmul(self, other)

    def mm(self, other):
        return mm(self, other)

    def mv(self, other):
        return mv(self, other)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return apply(O.T, (self,))

    def transpose(self, dim0, dim1):
        n = builtins.max(self.ndim, 1)
        _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        return apply(O.TRANSPOSE, (self,), (dim0, dim1))

    def permute(self, *dims, **kwargs):
        if "dims" in kwargs:  # permute(dims=(1, 0))
            dims = (kwargs.pop("dims"),)
        if not dims:
            raise TypeError('permute() missing 1 required positional arguments: "dims"')
        dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
        if len(dims) != self.ndim:
            raise RuntimeError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match "
                "the length of the desired ordering of dimensions i.e. input.dim() = "
                f"{self.ndim} is not equal to len(dims) = {len(dims)}")
        if len({_wrap_dim(d, self.ndim) for d in dims}) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return apply(O.PERMUTE, (self,), (tuple(dims),))

    def view(self, *shape, **kwargs):
        if "size" in kwargs:  # view(size=(3, 2))
            shape = (kwargs.pop("size"),)
        shape = _infer_shape(_shape_args(shape), self.numel())
        if not _viewable(self._data, shape):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least "
                "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.")
        return apply(O.VIEW, (self,), (shape,))

    def reshape(self, *shape, **kwargs):
        if "shape" in kwargs:  # reshape(shape=(3, 2))
            shape = (kwargs.pop("shape"),)
        if not shape:
            raise TypeError('reshape() missing 1 required positional arguments: "shape"')
        shape = _infer_shape(_shape_args(shape), self.numel())
        # As PyTorch: a view of a contiguous tensor, an aliasing reshape where the strides
        # allow one, else a contiguous copy.
        if _contiguous(self._data):
            return apply(O.VIEW, (self,), (shape,))
        if _viewable(self._data, shape):
            return apply(O.RESHAPE_ALIAS, (self,), (shape,))
        return apply(O.UNSAFE_VIEW, (apply(O.CLONE_CONTIGUOUS, (self,)),), (shape,))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        s, e = _wrap_dim(start_dim, self.ndim), _wrap_dim(end_dim, self.ndim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if self.ndim == 0:
            return self.reshape(1)
        if s == e:
            return self
        shape = self.shape[:s] + (-1,) + self.shape[e + 1:]
        return self.reshape(shape)

    def squeeze(self, dim=None, *, axis=None):
        dim = dim if axis is None else axis
        if dim is None:
            return apply(O.SQUEEZE, (self,))
        if isinstance(dim, int):
            _wrap_dim(dim, self.ndim)
            return apply(O.SQUEEZE_DIM, (self,), (dim,))
        _check_dims(dim, self.ndim)
        return apply(O.SQUEEZE_DIMS, (self,), (tuple(dim),))

    def unsqueeze(self, dim=None, *, axis=None):
        dim = dim if axis is None else axis
        if dim is None:
            raise TypeError('unsqueeze() missing 1 required positional arguments: "dim"')
        _wrap_dim(dim, self.ndim + 1)
        return apply(O.UNSQUEEZE, (self,), (dim,))

    def expand(self, *sizes, **kwargs):
        if "size" in kwargs:  # expand(size=(2, 3))
            sizes = (kwargs.pop("size"),)
        if not sizes:
            raise TypeError('expand() missing 1 required positional arguments: "size"')
        sizes = _shape_args(sizes)
        lead = len(sizes) - self.ndim
        if lead < 0:
            raise RuntimeError(
                f"expand(torch.{_LEGACY_NAMES[self._dtype.name]}{{{list(self.shape)}}}, "
                f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) must be "
                f"greater or equal to the number of dimensions in the tensor ({self.ndim})")
        target = tuple(self.shape[i - lead] if s == -1 and i >= lead else s
                       for i, s in enumerate(sizes))
        # PyTorch checks from the last dim to the first: existing dims, then new ones.
        for i in range(self.ndim - 1, -1, -1):
            n = self.shape[i]
            if n != 1 and n != target[i + lead]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target[i + lead]}) must match the "
                    f"existing size ({n}) at non-singleton dimension {i + lead}.  Target "
                    f"sizes: {list(sizes)}.  Tensor sizes: {list(self.shape)}")
        for i in range(lead - 1, -1, -1):
            if sizes[i] == -1:
                if self.ndim == 0:
                    raise RuntimeError("numel: integer multiplication overflow")
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
        return apply(O.EXPAND, (self,), (target,))

    def expand_as(self, other):
        return self.expand(other.shape)

    def __getitem__(self, index):
        return _getitem(self, index)

    def __setitem__(self, index, value) -> None:
        _setitem(self, index, value)

    # -- in-place ----------------------------------------------------------------------------
    def _in_place(self, op, others=(), attrs=()):
        if self._view_of is not None and self._vc[0] != self._view_version:
            _refresh_view(self)
        if GRAD_MODE.enabled:
            if self.grad_fn is None and self._requires_grad:
                raise _leaf_in_place_error()
            if self.grad_fn is not None and _is_view_of_leaf(self):
                raise _leaf_in_place_error(view=True)
            track = self.grad_fn is not None or builtins.any(
                isinstance(o, Tensor) and o.requires_grad for o in others)
        else:
            track = False
        if self._view_of is not None:
            _in_place_on_view(self, op, others, attrs, track)
            return self
        if track:
            source = _make(self._data.copy(), self._dtype)
            source.grad_fn = self.grad_fn
            if self._multi_output:
                source._output_nr, source._multi_output = self._output_nr, True
                self._output_nr, self._multi_output = 0, False
            result = apply(op, (source,) + tuple(others), attrs)
            _save_original(result, source)
            self._write(result._data, op)
            self.grad_fn = result.grad_fn
        else:
            # Through apply (nothing is recorded): the result has PyTorch's dtype, which
            # the casting check names ("result type Float can't be cast to ... Long").
            self._write(apply(op, (self,) + tuple(others), attrs)._data, op)
        self._vc[0] += 1
        return self

    def _write(self, values, op) -> None:
        values = np.asarray(values)
        if self._data.__class__ is not _ndarray:
            self._data = np.array(self._data)  # a 0-d result held as a numpy scalar
        if values.shape != self._data.shape:
            shape = np.broadcast_shapes(values.shape, self._data.shape)
            if shape != self._data.shape:
                raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                                   f"broadcast shape {list(shape)}")
        if (values.dtype.kind == "f" and self._dtype.np.kind in "biu") or (
                values.dtype.kind in "iu" and self._dtype.np.kind == "b"):
            raise RuntimeError(f"result type {_SCALAR_NAMES[_dt.from_numpy(values.dtype).name]}"
                               f" can't be cast to the desired output type "
                               f"{_SCALAR_NAMES[self._dtype.name]}")
        np.copyto(self._data, values, casting="unsafe")

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

    def uniform_(self, a=0.0, b=1.0):
        from .creation import _rng
        with _no_track():
            self._write(_rng().uniform(a, b, self._data.shape), None)
        self._vc[0] += 1
        return self

    def normal_(self, mean=0.0, std=1.0):
        from .creation import _rng
        self._write(_rng().normal(mean, std, self._data.shape), None)
        self._vc[0] += 1
        return self


class _no_track:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Device:
    """The one device, ``device(type='cpu')`` (its class is named as PyTorch's)."""

    type = "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"


_Device.__name__ = _Device.__qualname__ = "device"
_CPU = _Device()
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                 "int32": "Int", "bool": "Bool"}
_LEGACY_NAMES = {k: v + "Tensor" for k, v in _SCALAR_NAMES.items()}
# The C++ type names PyTorch's messages print (typeid names of the element types).
_CPP_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
              "int64": "long int", "int32": "int", "bool": "bool"}


def _is_param(t) -> bool:
    from ..nn import Parameter
    return isinstance(t, Parameter)


def _wrap_dim(dim: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}],"
                         f" but got {dim})")
    return dim % n


def _check_dims(dim, ndim):
    for d in (dim,) if isinstance(dim, int) else dim:
        _wrap_dim(d, ndim)


def _shape_args(shape) -> tuple:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _infer_shape(shape: tuple, numel: int) -> tuple:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    n = 1
    for s in shape:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _contiguous(a) -> bool:
    """PyTorch's ``is_contiguous`` (numpy's flag also ignores the strides of size-1 dims)."""
    return a.size <= 1 or np.asarray(a).flags.c_contiguous


def _strides(t: "Tensor") -> tuple:
    """The tensor's strides in elements, as PyTorch reports them."""
    a = np.asarray(t._data)
    return tuple(s // a.itemsize for s in a.strides)


def _viewable(a: np.ndarray, shape: tuple) -> bool:
    """Can ``a`` be reshaped to ``shape`` without copying (PyTorch's view rule)?"""
    if a.flags.c_contiguous or a.size <= 1:
        return True
    try:
        v = a.view()
        v.shape = shape
        return True
    except AttributeError:
        return False


# --------------------------------------------------------------------------- indexing
def _is_advanced(ix) -> bool:
    return isinstance(ix, (Tensor, list, np.ndarray)) or type(ix) is bool


def _index_array(ix):
    if isinstance(ix, Tensor):
        return ix._data
    return np.asarray(ix)


def _index_width(i) -> int:
    """How many dims of the indexed tensor one index item consumes."""
    if i is None or i is Ellipsis:
        return 0
    if _is_advanced(i):
        a = _index_array(i)
        return a.ndim if a.dtype == np.bool_ else 1
    return 1


_INT64_MAX = 2 ** 63 - 1


def _slice_args(s: slice) -> tuple:
    """PyTorch's slice arguments: as given, with 0, INT64_MAX and 1 for the missing ones."""
    step = 1 if s.step is None else int(s.step)
    if step <= 0:
        raise ValueError("step must be greater than zero" if step else
                         "slice step cannot be zero")
    return (0 if s.start is None else int(s.start),
            _INT64_MAX if s.stop is None else int(s.stop), step)


def _index_item(i):
    """One index item as PyTorch reads it: a 0-d integer tensor is an integer; anything
    but integers, slices, ``...``, None, bools and integer or bool tensors is refused."""
    if isinstance(i, (Tensor, np.ndarray)):
        kind = np.asarray(i._data if isinstance(i, Tensor) else i).dtype.kind
        if kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if np.ndim(i._data if isinstance(i, Tensor) else i) == 0:
            v = np.asarray(i._data if isinstance(i, Tensor) else i).item()
            return v  # a Python int, or a bool (indexed as True/False)
        return i
    if i is None or i is Ellipsis or isinstance(i, (slice, list, bool, np.bool_)):
        return i
    if isinstance(i, (int, np.integer)):
        return int(i)
    if hasattr(i, "__index__"):
        return i.__index__()
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(i).__name__})")


def _getitem(t: Tensor, index) -> Tensor:
    if not isinstance(index, tuple):
        if isinstance(index, slice):
            args = _slice_args(index)
            if not t.ndim:
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            # A lone slice is always recorded, even a full one (PyTorch does the same).
            return apply(O.SLICE, (t,), (0,) + args)
        if not t.ndim:
            if isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
                raise IndexError(
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
                    if index == 0 else
                    f"index {index} is out of bounds for dimension 0 with size 0")
            if not (index is None or index is Ellipsis or isinstance(index, (bool, np.bool_))
                    or isinstance(index, Tensor) and index._dtype is _dt.bool
                    and not index.ndim):
                raise IndexError("too many indices for tensor of dimension 0")
        index = (_index_item(index),)
    else:
        index = tuple(_index_item(i) for i in index)
    n_real = builtins.sum(_index_width(i) for i in index)
    if n_real > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    # As PyTorch: integers, slices and None first (views), then one index op with the
    # tensor indices at the dims they now refer to.
    out, dim = t, 0
    advanced = []
    for i in index:
        if i is Ellipsis:
            dim += t.ndim - n_real
        elif i is None:
            out = apply(O.UNSQUEEZE, (out,), (dim,))
            dim += 1
        elif isinstance(i, slice):
            start, stop, step = _slice_args(i)
            # PyTorch skips a slice that keeps everything, judged on the values as given.
            if not (start == 0 and stop >= out.shape[dim] and step == 1):
                out = apply(O.SLICE, (out,), (dim, start, stop, step))
            dim += 1
        elif isinstance(i, (bool, np.bool_)):
            # PyTorch: a new dim, indexed by [0] (True) or by nothing (False).
            out = apply(O.UNSQUEEZE, (out,), (dim,))
            advanced.append((dim, np.arange(int(i), dtype=np.int64)))
            dim += 1
        elif _is_advanced(i):
            a = _index_array(i)
            if a.dtype == np.bool_:
                for j, n in enumerate(a.shape):
                    if n != out.shape[dim + j]:
                        raise IndexError(
                            f"The shape of the mask {list(a.shape)} at index {j} does not "
                            f"match the shape of the indexed tensor {list(out.shape)} at "
                            f"index {dim + j}")
            elif a.size:
                size = out.shape[dim]
                bad = a[(a < -size) | (a >= size)]
                if bad.size:
                    raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension "
                                     f"{len(advanced)} with size {size}")
            advanced.append((dim, a))
            dim += _index_width(i)
        else:
            i = int(i)
            size = out.shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with "
                                 f"size {size}")
            out = apply(O.SELECT, (out,), (dim, i))  # i as given, as PyTorch saves it
    if advanced:
        items: list = []
        for d, a in advanced:
            items += [slice(None)] * (d - builtins.sum(_index_width(x) for x in items))
            items.append(a)
        return apply(O.INDEX, (out,), (tuple(items),))
    if out is t:
        out = apply(O.ALIAS, (t,))
    return out


def _setitem(t: Tensor, index, value) -> None:
    value = _as_tensor_arg(value)
    items = tuple(_index_item(i) for i in (index if isinstance(index, tuple) else (index,)))
    items = tuple(np.asarray(i._data if isinstance(i, Tensor) else i)
                  if isinstance(i, (Tensor, list)) else i for i in items)
    advanced = builtins.any(isinstance(i, np.ndarray) for i in items)
    # Tensor indices as PyTorch saves them: a tuple; anything else as numpy reads it.
    index = items if advanced or isinstance(index, tuple) else items[0]
    if isinstance(value, Tensor) and not advanced:
        # PyTorch's copy_to expands the value first: its errors come before any other.
        target = np.empty(t._data.shape, dtype=bool)[index].shape
        shape = tuple(value.shape)
        stripped = shape[next((k for k, n in enumerate(shape) if n != 1), len(shape)):]
        try:
            ok = np.broadcast_shapes(stripped, target) == target
        except ValueError:
            ok = False
        if not ok:
            _make(np.empty(stripped), value._dtype).expand(target)  # raises PyTorch's error
    if GRAD_MODE.enabled and (t.requires_grad or (isinstance(value, Tensor)
                                                   and value.requires_grad)):
        if t.grad_fn is None and t._requires_grad:
            raise _leaf_in_place_error(view=_is_view_index(index, t._data.shape))
        _setitem_recorded(t, index, value)
        return
    t._data[index] = value._data if isinstance(value, Tensor) else value
    t._vc[0] += 1


def _setitem_recorded(t: Tensor, index, value) -> None:
    """``t[index] = value`` recorded as PyTorch records it.

    Into a view that the basic indices select: ``CopySlices``; into ``t`` itself: the
    in-place op that writes (``index_put_`` for tensor indices, ``fill_`` for a number or
    a 0-d tensor, ``copy_`` for a tensor, viewed without leading ones and expanded as
    PyTorch's ``copy_to`` does).
    """
    items = index if isinstance(index, tuple) else (index,)
    advanced = builtins.any(isinstance(i, np.ndarray) and i.ndim > 0 or isinstance(i, list)
                            for i in items)
    view = _is_view_index(index, t._data.shape)
    target = np.empty(t._data.shape, dtype=bool)[index].shape
    is_tensor = isinstance(value, Tensor)
    if is_tensor and (value.shape != target or advanced):
        shape = tuple(value.shape)
        try:
            ok = np.broadcast_shapes(shape, target) == target
        except ValueError:
            ok = False
        if not ok and advanced:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(shape)} cannot "
                               f"be broadcast to indexing result of shape {list(target)}")
        stripped = shape[next((k for k, n in enumerate(shape) if n != 1), len(shape)):]
        if advanced:
            if stripped != shape:
                value = value.view(stripped)
        elif value.ndim:
            value = value.view(stripped)
            if value.shape != target:
                value = value.expand(target)
    if view:
        t._in_place(O.COPY_SLICES, (value,), (index,))
    elif advanced:
        t._in_place(O.INDEX_PUT_, (value,), (index,))
    elif (tuple(value.shape) if is_tensor else ()) != target:
        t._in_place(O.FILL_TENSOR, (value,))  # a 0-d value: the others were expanded
    else:
        t._in_place(O.COPY, (value,))


# --------------------------------------------------------------------------- creation
_SEQUENCE = (list, tuple, range)
_PLAIN = frozenset((int, float, bool))


def _infer_dtype(data) -> _dtype:
    """PyTorch's dtype inference: Python numbers by their type (floats take the default
    dtype), arrays, numpy scalars and tensors by their dtype, a sequence by promoting the
    types of its elements (an empty one has the default dtype)."""
    cls = data.__class__
    if cls is float:
        return _dt.get_default_dtype()
    if cls is int:
        return _dt.int64
    if cls is bool:
        return _dt.bool
    if isinstance(data, Tensor):
        return data._dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return _dt.from_numpy(data.dtype)
    if isinstance(data, _SEQUENCE):
        if not len(data):
            return _dt.get_default_dtype()
        if cls is range:
            return _dt.int64
        kinds = set(map(type, data))
        if kinds <= _PLAIN:  # the common case, without a call per element
            return (_dt.get_default_dtype() if float in kinds else
                    _dt.int64 if int in kinds else _dt.bool)
        d = None
        for x in data:
            e = _infer_dtype(x)
            d = e if d is None or d is e else _dt.promote_types(d, e)
        return d
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{cls.__name__}'")
    if isinstance(data, (int, float)):  # subclasses (numbers.Real registered ones too)
        return _infer_dtype(cls.__mro__[-2](data))
    raise RuntimeError(f"Could not infer dtype of {cls.__name__}")


def _data_sizes(data) -> list:
    """The shape of nested sequences, read along their first elements (as PyTorch)."""
    sizes = []
    x = data
    while True:
        if isinstance(x, _SEQUENCE):
            sizes.append(len(x))
            if not len(x):
                return sizes
            x = x[0]
        elif isinstance(x, np.ndarray):
            sizes.extend(x.shape)
            return sizes
        elif isinstance(x, str):
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        else:
            return sizes


def _store(x, sizes: list, dim: int, out: list) -> None:
    """Append the elements of ``x`` (at depth ``dim``) to ``out``, checking its shape."""
    if isinstance(x, np.ndarray) and dim:
        _warn_once("Creating a tensor from a list of numpy.ndarrays is extremely slow. "
                   "Please consider converting the list to a single numpy.ndarray with "
                   "numpy.array() before converting to a tensor. (Triggered internally "
                   "at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)",
                   stacklevel=5)
    if isinstance(x, Tensor):
        x = x._data
    if isinstance(x, np.ndarray):
        want = tuple(sizes[dim:])
        if x.shape != want:
            for d, (a, b) in enumerate(zip(x.shape, want)):
                if a != b:
                    raise ValueError(f"expected sequence of length {b} at dim {dim + d} "
                                     f"(got {a})")
            raise TypeError("not a sequence")
        out.extend(x.ravel().tolist())
        return
    if not isinstance(x, _SEQUENCE):
        raise TypeError("not a sequence")
    if len(x) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(x)})")
    if dim + 1 == len(sizes):
        out.extend(x)
        return
    for y in x:
        _store(y, sizes, dim + 1, out)


def _scalar_value(v, dt: _dtype):
    """One element as a Python number, as PyTorch's ``store_scalar`` reads it."""
    if isinstance(v, Tensor):
        if v._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if v.requires_grad:
            _warn_once(_SCALAR_GRAD_WARNING, stacklevel=5)
        return v._data.reshape(()).item()
    if isinstance(v, (np.generic, builtins.int, builtins.float)):
        return v.item() if isinstance(v, np.generic) else v
    if dt.is_floating_point:
        raise TypeError(f"must be real number, not {_type_name(v)}")
    raise TypeError(f"'{_type_name(v)}' object cannot be interpreted as an integer")


def _values_array(values: list, dt: _dtype) -> np.ndarray:
    """Python numbers converted to ``dt`` as PyTorch converts them: floats truncated into
    integers (an error when they do not fit), overflow to infinity in floating types."""
    if not set(map(type, values)) <= _PLAIN:
        values = [_scalar_value(v, dt) for v in values]
    npdt = dt.np
    if npdt.kind in "iu":
        floats = [v for v in values if v.__class__ is builtins.float]
        if floats:
            f = np.array(floats)
            info = np.iinfo(npdt)
            if not (np.isfinite(f).all() and (f >= info.min).all() and (f <= info.max).all()):
                raise RuntimeError(f"value cannot be converted to type {dt.name} without "
                                   "overflow")
    try:
        with np.errstate(all="ignore"):
            return np.array(values, dtype=npdt)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None


def _from_data(data, dt: _dtype | None = None) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences of numbers, tensors, numpy
    arrays or scalars) in ``dt``, or in the dtype PyTorch infers."""
    cls = data.__class__
    if cls is builtins.float and dt is None:  # the common case: a Python float
        dt = _dt.get_default_dtype()
        if dt is _dt.float64 or (dt is _dt.float32 and -3e38 < data < 3e38):  # no overflow
            return _make(np.array(data, dt.np), dt)
    if cls is list and dt is None:
        kinds = set(map(type, data))
        if kinds and kinds <= _PLAIN:  # a flat list of Python numbers
            dt = (_dt.get_default_dtype() if float in kinds else
                  _dt.int64 if int in kinds else _dt.bool)
            if dt is _dt.float64 or (dt is _dt.float32 and -3e38 < builtins.min(data)
                                     and builtins.max(data) < 3e38) or (
                                         not dt.is_floating_point and -_INT64_MAX - 1
                                         <= builtins.min(data) <= builtins.max(data)
                                         <= _INT64_MAX):
                return _make(np.array(data, dt.np), dt)
            return _make(_values_array(data, dt), dt)
    if isinstance(data, Tensor):
        data = data._data
    if isinstance(data, np.ndarray):
        d = dt or _dt.from_numpy(data.dtype)
        with np.errstate(all="ignore"):
            return _make(np.array(data, dtype=d.np), d)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{cls.__name__}'")
    sizes = _data_sizes(data)
    if dt is None:
        dt = _infer_dtype(data)
    if not sizes:
        values = [data]
    else:
        values = []
        _store(data, sizes, 0, values)
    return _make(_values_array(values, dt).reshape(sizes), dt)


def tensor(data, dtype: _dtype | None = None, device=None, requires_grad: bool = False,
           name: str | None = None) -> Tensor:
    """A new leaf tensor holding a copy of ``data``; the dtype is inferred as PyTorch does.

    ``name`` is symgrad's own: it names the leaf in symbolic output and drawings.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.tensor([1, 2.5])
    tensor([1.0000, 2.5000])
    >>> torch.tensor(3., requires_grad=True)
    tensor(3., requires_grad=True)
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()"
            ".clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    dt = _dt.as_dtype(dtype, "tensor")
    t = _from_data(data, dt)
    dt = t._dtype
    if requires_grad:
        if not dt.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    t._name = name
    return t


def as_tensor(data, dtype: _dtype | None = None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory with a tensor or numpy array where it can."""
    dtype = _dt.as_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data if dtype is None or dtype is data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype):
        return _make(data, _dt.from_numpy(data.dtype))
    return tensor(data, dtype)


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing memory with the numpy array ``a``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    return _make(a, _dt.from_numpy(a.dtype))


# --------------------------------------------------------------------------- functions
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """PyTorch's matmul, built from the same ops in the same order (``_matmul_impl``).

    dot, mv or mm by the ranks; a batched operand is folded into a matrix for mm/mv
    when that needs no copy, else both are broadcast and multiplied with bmm.
    """
    if not isinstance(b, Tensor):
        b = tensor(b)
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        out = apply(O.SQUEEZE_, (mm(a.unsqueeze(0), b),), (0,))
        out._vc[0] += 1  # squeeze_ changed the product in place
        return out
    if da == 2 and db == 2:
        return mm(a, b)
    if _should_fold(a, b):
        transpose = db > da
        t1 = b.mT if transpose else a
        t2 = (a.t() if da == 2 else a) if transpose else b
        out_shape = tuple(t1.shape[:-1])
        t1 = t1.reshape(int(np.prod(out_shape)), t1.shape[-1])
        if t2.ndim == 2:
            out = apply(O.UNSAFE_VIEW, (mm(t1, t2),), (out_shape + (t2.shape[1],),))
            return out.mT.contiguous() if transpose else out
        return apply(O.UNSAFE_VIEW, (mv(t1, t2),), (out_shape,))
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    batch1 = tuple(a.shape[:builtins.max(da - 2, 0)])
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch2 = tuple(b.shape[:builtins.max(db - 2, 0)])
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and a.requires_grad:
            return matmul(a.squeeze(0), b)
        if batch2[0] == 1 and b.requires_grad:
            return matmul(a, b.squeeze(0))
    batch = _broadcast_sizes(batch1, batch2)
    count = int(np.prod(batch))
    a3 = a.expand(batch + (n, m1)).reshape(count, n, m1)
    if db == 1:
        b3 = b.expand(batch + (m2,)).reshape(count, m2).unsqueeze(2)
    else:
        b3 = b.expand(batch + (m2, p)).reshape(count, m2, p)
    out_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    out = bmm(a3, b3)
    if db == 1:
        out = out.squeeze(-1)
    return apply(O.UNSAFE_VIEW, (out,), (out_shape,))


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule for folding a batched operand into a matrix (no copy, or a copy
    that keeps the backward small)."""
    a_larger = a.ndim >= b.ndim
    shape, strides = tuple(a.shape), _strides(a)
    if not a_larger:  # b.mT
        shape = tuple(b.shape[:-2]) + (b.shape[-1], b.shape[-2])
        s = _strides(b)
        strides = s[:-2] + (s[-1], s[-2])
    if not (len(shape) >= 3 and (b.ndim if a_larger else a.ndim) <= 2):
        return False
    if (b if a_larger else a).requires_grad:
        return True
    if a.ndim == 2:
        return False
    if 0 in shape:
        return True
    return builtins.all(strides[i] == strides[i + 1] * shape[i + 1]
                        for i in range(len(shape) - 2))


def _broadcast_sizes(a: tuple, b: tuple) -> tuple:
    """Broadcast two size tuples with PyTorch's message on mismatch."""
    n = builtins.max(len(a), len(b))
    out = []
    for i in range(n):
        x = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        y = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors (``BmmBackward0``)."""
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, "
                           f"{b.shape[1]}].")
    return apply(O.BMM, (a, b))


def dot(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
            f"[{b.shape[0]}] to have the same number of elements, but got {a.shape[0]} and "
            f"{b.shape[0]} elements respectively")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_SCALAR_NAMES[a.dtype.name]} and {_SCALAR_NAMES[b.dtype.name]}")
    return apply(O.DOT, (a, b))


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    return apply(O.MM, (a, b))


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a.ndim != 2 or v.ndim != 1:
        if a.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.dtype is not v.dtype:
        names = [_SCALAR_NAMES[t.dtype.name] for t in (v, a, v)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{names[0]}, {names[1]}, and {names[2]}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat "
                           f"({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
    return apply(O.MV, (a, v))


def _tensor_operand(name: str, x, position: int):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{'input' if position == 1 else 'other'}' "
                        f"(position {position}) must be Tensor, not {type(x).__name__}")


def maximum(a: Tensor, b: Tensor) -> Tensor:
    _tensor_operand("maximum", a, 1), _tensor_operand("maximum", b, 2)
    return apply(O.MAXIMUM, (a, b))


def minimum(a: Tensor, b: Tensor) -> Tensor:
    _tensor_operand("minimum", a, 1), _tensor_operand("minimum", b, 2)
    return apply(O.MINIMUM, (a, b))


_FAST_OPERANDS = frozenset((float, int, Tensor))  # operands _as_tensor_arg keeps as they are
_NOT_OPERANDS = frozenset((list, tuple))  # of comparisons
_LEGACY_DTYPE: dict[type, _dtype] = {}


# Methods that are exactly their op on plain tensors and Python numbers, with the number
# of operands: symgrad._compiled runs them compiled (tests/test_compiled.py checks each).
_DIRECT_METHODS = {
    "__add__": (O.ADD, 2), "__radd__": (O.ADD, 2), "__sub__": (O.SUB, 2),
    "__mul__": (O.MUL, 2), "__rmul__": (O.MUL, 2), "__truediv__": (O.DIV, 2),
    "__neg__": (O.NEG, 1), "abs": (O.ABS, 1), "exp": (O.EXP, 1), "log": (O.LOG, 1),
    "sqrt": (O.SQRT, 1), "sin": (O.SIN, 1), "cos": (O.COS, 1), "tan": (O.TAN, 1),
    "tanh": (O.TANH, 1), "sigmoid": (O.SIGMOID, 1), "relu": (O.RELU, 1),
}

# The compiled fast path of apply, when symgrad/_speedups.c was built (see _compiled).
from . import compiled as _compiled  # noqa: E402  (needs everything above)
_apply_python = apply
apply = _compiled.accelerate(_apply_python)
