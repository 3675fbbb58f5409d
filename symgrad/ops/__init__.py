"""The op table: every operation symgrad knows, declared once.

Each :class:`Op` record carries everything the other layers need:

* ``forward`` -- the numpy computation (it also runs on object arrays of SymPy
  expressions unless ``sym`` says otherwise);
* ``grads`` -- one vector-Jacobian product per input, as in PyTorch's
  ``derivatives.yaml``.  Each is written against a backend ``m`` (numpy arrays when no
  graph is recorded, symgrad tensors under ``create_graph=True``, SymPy arrays for the
  symbolic layer), so one rule serves every order of differentiation;
* ``saves`` -- the values the backward pass needs, by name (inputs, attributes,
  ``result``, sizes); they are the ``_saved_*`` attributes of the graph node, except names
  starting with ``_`` (kept for the gradient rules only, where PyTorch shows nothing);
  ``derive`` computes op-specific ones from the operands (``max(dim)``'s indices),
  ``saved_for`` empties those only some inputs' gradients need (``mm``'s strides) and
  ``consts`` names values PyTorch shows that the op fixes (``x + y``'s alpha, 1);
* ``refuse`` -- PyTorch's error for result dtypes it has no kernel for (``abs`` of bool);
* ``sym`` -- the SymPy mapping: the name of a SymPy function applied elementwise (see
  :func:`sympy_function`), or a callable on object arrays of SymPy expressions for ops
  whose numpy forward cannot run on them; ``None`` when ``forward`` itself can;
* ``domain`` -- the open interval (for every floating input) where the op is smooth
  apart from isolated kinks and ties; derivative checks sample inside it;
* ``ranks`` -- the tensor ranks each input accepts, when the op is narrower than numpy
  (``mm`` wants matrices); ``None`` for any rank;
* ``local`` -- the local derivative a drawing shows, per input;
* the PyTorch node name, derived from the name and overload number
  (``mul`` + 0 -> ``MulBackward0``).

Adding an op is one entry here plus, if users call it, one method in ``tensor.py``.
"""
from __future__ import annotations

import dis
from typing import Callable

import operator

import numpy as np

__all__ = ["Op", "OPS", "op_named", "node_name", "sympy_function"]

OPS: dict[str, "Op"] = {}


def node_name(name: str, overload: int) -> str:
    """PyTorch's backward-node name: ``linalg_vector_norm`` -> ``LinalgVectorNormBackward0``."""
    return "".join(p[:1].upper() + p[1:] for p in name.split("_")) + f"Backward{overload}"


class Op:
    """One primitive operation; see the module docstring for the fields.

    Examples
    --------
    >>> from symgrad import ops
    >>> ops.MUL.node_name, ops.MUL.inputs, ops.MUL.saves
    ('MulBackward0', ('self', 'other'), ('self', 'other'))
    """

    __slots__ = ("name", "overload", "inputs", "attrs", "forward", "grads", "saves",
                 "sym", "local", "dtype", "broadcasts", "node_name", "key", "doc",
                 "view", "variadic", "plan", "node_class", "domain", "ranks", "optional",
                 "simple", "consts", "refuse", "derive", "symbol", "infix", "commutative")

    def __init__(self, name: str, overload: int = 0, *, inputs=("self",), attrs=(),
                 forward: Callable, grads=None, saves=(), sym=None, local=None,
                 dtype: str = "same", broadcasts: bool = False, key: str | None = None,
                 doc: str = "", node: str | None = None, view: bool = False,
                 domain: tuple = (-np.inf, np.inf), ranks: tuple | None = None,
                 consts: dict | None = None, refuse: dict | None = None,
                 derive: dict | None = None, saved_for: dict | None = None,
                 symbol: str | None = None, infix: str | None = None,
                 commutative: bool = False) -> None:
        self.name = name
        self.overload = overload
        self.inputs = tuple(inputs)
        self.attrs = tuple(attrs)
        self.forward = forward
        self.grads = None if grads is None else tuple(grads)
        self.saves = tuple(saves)
        self.sym = sym
        self.local = local
        self.dtype = dtype
        self.broadcasts = broadcasts
        self.node_name = node or node_name(name, overload)
        self.key = key or (name if overload == 0 else f"{name}{overload}")
        self.doc = doc
        self.view = view
        self.node_class = None  # the grad_fn class, made by graph.node_class
        # How drawings show the op: the forward node's symbol and an unnamed result's
        # label, templates over the input and attribute names ("{self} + {other}",
        # "pow {exponent}"); commutative ops label their inputs by nothing but position.
        self.symbol = symbol if symbol is not None else name.lstrip("_")
        self.infix = infix
        self.commutative = commutative
        self.variadic = self.inputs == ("tensors",)
        self.domain = tuple(domain)
        self.ranks = None if ranks is None else tuple(tuple(r) for r in ranks)
        # Values PyTorch's node saves that this op fixes (``x + y`` is add with alpha 1):
        # shown as ``_saved_*`` attributes, never stored per node.
        self.consts = dict(consts or {})
        # Result dtypes PyTorch has no kernel for: dtype name -> (error type, message);
        # "self:<dtype>" for the first operand's dtype.
        self.refuse = dict(refuse or {})
        # Saved values this op computes from its operands: name -> f(arrays, attrs)
        # (max(dim)'s indices); the common ones (sizes, numel) are tensor._DERIVED's.
        self.derive = dict(derive or {})
        # Where each saved value comes from: ("input", i), ("attr", i), ("result", 0) or
        # ("derived", name) -- resolved by tensor.apply without per-op code.
        # A leading "_" keeps a saved value from the node's _saved_* attributes (PyTorch
        # shows none for CopySlices); the rest of the name says where it comes from.
        self.plan = tuple(
            ("input", self.inputs.index(s)) if s in self.inputs else
            ("attr", self.attrs.index(s)) if s in self.attrs else
            ("result", 0) if s == "result" else ("derived", s)
            for s in (name.lstrip("_") for name in self.saves))
        # Saved input tensors that only some inputs' rules read: for each,
        # the inputs whose rules read it.  As in PyTorch, one is kept only when such an
        # input requires grad (``x * 2.5`` keeps 2.5, not x: ``_saved_self`` is None).
        self.optional = _optional_saves(self)
        if saved_for:
            # Saved values kept only for the gradient of the named inputs (mm's strides):
            # when none of them requires grad PyTorch leaves them empty, ``()``.
            self.optional += tuple((self.saves.index(name), frozenset(
                self.inputs.index(i) for i in inputs)) for name, inputs in saved_for.items())
        # The common case tensor.apply runs without its general bookkeeping (see
        # _simple_saves), or None.
        self.simple = _simple_saves(self)
        OPS[self.key] = self

    @property
    def differentiable(self) -> bool:
        return self.grads is not None

    def __repr__(self) -> str:
        return f"<op {self.key}: {self.node_name}>"


def _reads(rule) -> set | None:
    """The parameter names a gradient rule reads, or None when that is not visible."""
    code = getattr(rule, "__code__", None)
    if code is None:
        return None
    names = set(code.co_cellvars)  # read by a nested function
    for ins in dis.get_instructions(code):
        if ins.opname.startswith(("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE")):
            names.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
    return names


def _optional_saves(op: "Op") -> tuple:
    """``((k, inputs reading saved value k), ...)`` for the saved tensors not every
    input's rule reads."""
    # PyTorch's codegen guards a saved input only when one input's formula alone reads it,
    # and never in the formulas of *_backward ops.
    if op.grads is None or op.variadic or len(op.inputs) < 2 or "backward" in op.name:
        return ()
    # Results are always kept (PyTorch saves outputs whatever requires grad).
    readers = {k: set() for k, (kind, _) in enumerate(op.plan) if kind == "input"}
    for i, rule in enumerate(op.grads):
        if rule is None:
            continue
        names = _reads(rule)
        params = rule.__code__.co_varnames[2:2 + len(op.saves)] if names is not None else ()
        for k in readers:
            if names is None or k >= len(params) or params[k] in names:
                readers[k].add(i)
    everyone = {i for i, rule in enumerate(op.grads) if rule is not None}
    return tuple((k, frozenset(r)) for k, r in readers.items()
                 if r != everyone and len(r) == 1)


# Rules that give the operands' dtype when they share one floating dtype.
_SIMPLE_DTYPES = frozenset(("same", "promote", "float", "div", "sub"))


def _simple_saves(op: "Op") -> tuple | None:
    """For an op that tensor.apply may run on its fast path (at most two inputs, no
    attributes, a dtype that follows its floating operands, not a view, differentiable, saving
    only inputs and its result): per set of inputs requiring grad (bit ``i`` for input ``i``), a
    function picking the saved values from ``(input0, input1, result, None)``, optional
    saves (see ``_optional_saves``) already dropped.  None for other ops."""
    if (op.grads is None or op.variadic or op.view or op.attrs or len(op.inputs) > 2
            or op.dtype not in _SIMPLE_DTYPES
            or any(kind not in ("input", "result") for kind, _ in op.plan)):
        return None
    optional = dict(op.optional)
    getters = []
    for mask in range(1 << len(op.inputs)):
        index = []
        for k, (kind, where) in enumerate(op.plan):
            readers = optional.get(k)
            if kind == "result":
                index.append(2)
            elif readers is not None and not any(mask >> i & 1 for i in readers):
                index.append(3)
            else:
                index.append(where)
        getters.append(_picker(tuple(index)))
    return tuple(getters)


def _picker(index: tuple) -> Callable:
    """``f(values) -> tuple(values[i] for i in index)``, without a loop."""
    if len(index) > 1:
        return operator.itemgetter(*index)
    if index:
        i = index[0]
        return lambda values: (values[i],)
    return lambda values: ()


def op_named(key: str) -> Op:
    """The op registered under ``key`` (``"mul"``, ``"pow1"``, ...)."""
    return OPS[key]


# --------------------------------------------------------------------------- helpers
def _dims(dim, ndim):
    """Normalise ``dim`` (int, tuple or None) to a sorted tuple of non-negative axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(ndim))  # dim=() reduces everything, as PyTorch
    if ndim == 0:
        return ()  # a 0-d tensor reduced over dim 0 or -1 is itself, as in PyTorch
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(d % ndim for d in dim))


def _sum(a, dim, keepdim):
    return np.sum(a, axis=_dims(dim, np.ndim(a)), keepdims=keepdim)


def _mean(a, dim, keepdim):
    return np.mean(a, axis=_dims(dim, np.ndim(a)), keepdims=keepdim)


def _softmax(a, dim):
    e = np.exp(a - np.max(a, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(a, dim):
    s = a - np.max(a, axis=dim, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))


def _norm(a, ord, dim, keepdim):
    axis = None if dim is None else _dims(dim, np.ndim(a))
    if ord == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    if ord == float("inf"):
        return np.max(np.abs(a), axis=axis, keepdims=keepdim)
    if ord == 1:
        return np.sum(np.abs(a), axis=axis, keepdims=keepdim)
    if ord == 0:  # the number of non-zero elements
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.result_type(a))
    if ord == -float("inf"):
        return np.min(np.abs(a), axis=axis, keepdims=keepdim)
    return np.sum(np.abs(a) ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)


_FLOAT_SCALARS = (np.float64, np.float32, np.float16)


def _relu(a):
    # PyTorch keeps what is not below zero as it is: NaN, and -0.0 with its sign.
    if a.__class__ in _FLOAT_SCALARS:  # a 0-d tensor's numpy scalar, without np.where
        return a.__class__(0.0) if a < 0 else a
    return np.where(a < 0, np.zeros((), np.result_type(a)), a)


_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


def _pow_scalar(a, exponent):
    try:
        return np.power(a, exponent)
    except ValueError:  # numpy's refusal of int ** negative int, in PyTorch's words
        raise RuntimeError(_NEGATIVE_POWER) from None


def _power(a, b):
    """Elementwise ``a ** b``; integers to negative integer powers as PyTorch's kernel
    gives them (1 and -1 keep their powers, anything else truncates to 0)."""
    try:
        return np.power(a, b)
    except ValueError:
        a, b = np.asarray(a), np.asarray(b)
        ones = np.where(a == -1, 1 - 2 * (b % 2), a == 1).astype(np.result_type(a, b))
        return np.where(b < 0, ones, np.power(a, np.maximum(b, 0)))


def _sign(a):
    # sign of a bool tensor is itself (numpy's sign has no bool loop).
    return np.array(a, copy=True) if np.result_type(a) == np.bool_ else np.sign(a)


def _keep(g, shape, dim, keepdim):
    """Re-insert reduced axes into ``g`` so that it broadcasts against ``shape``."""
    if keepdim or not shape:
        return g
    if hasattr(g, "unsqueeze"):  # a recorded gradient: one unsqueeze per dim, as PyTorch
        if isinstance(dim, (tuple, list)) and not dim:
            return g  # dim=(): PyTorch expands the 0-d gradient as it is
        for d in _dims(dim, len(shape)):
            g = g.unsqueeze(d)
        return g
    out = [1 if i in _dims(dim, len(shape)) else n for i, n in enumerate(shape)]
    # SymPy scalars (symbolic layer) have no .reshape; numpy arrays do.
    return g.reshape(tuple(out)) if hasattr(g, "reshape") else np.reshape(g, tuple(out))


def _slice(a, dim, start, end, step):
    index = [slice(None)] * np.ndim(a)
    index[dim] = slice(start, end, step)
    return a[tuple(index)]


def _select(a, dim, index):
    ix = [slice(None)] * np.ndim(a)
    ix[dim] = index
    return a[tuple(ix)]


def _gather_shape(sizes, index) -> tuple:
    """The shape of ``a[index]`` for integer-array indices, without computing it."""
    if isinstance(index, tuple):
        if not index:
            return ()
        return np.broadcast(*index).shape + tuple(sizes[len(index):])
    return np.shape(index) + tuple(sizes[1:])


def _add_at(a, index, v):
    out = np.array(a, copy=True)
    np.add.at(out, index, v)  # repeated indices add up
    return out


def _put(a, index, v):
    out = np.array(a, copy=True)
    # A 0-d object array (a SymPy value) would be stored as one object: unwrap it.
    out[index] = np.asarray(v)[()] if np.ndim(v) == 0 else v
    return out


def _slice_index(shape, dim, start, end, step):
    index = [slice(None)] * len(shape)
    index[dim] = slice(start, end, step)
    return tuple(index)


def _select_index(shape, dim, index):
    ix = [slice(None)] * len(shape)
    ix[dim] = index
    return tuple(ix)


def _clamp(a, lo, hi):
    # As PyTorch: a value is replaced only where it is past a bound (NaN and -0.0 stay).
    if lo is not None:
        a = np.where(a < lo, lo, a)
    if hi is not None:
        a = np.where(a > hi, hi, a)
    return a


def _clamp_bound_grad(m, grad, self, min, max, which: str):
    # PyTorch's clamp_backward_min_max: a bound gets the gradient where it is the result.
    if min is not None and max is not None:
        if which == "min":
            return m.where(m.logical_and(m.lt(self, min), m.lt(min, max)), grad, 0.0)
        return m.where(m.logical_or(m.gt(self, max), m.lt(max, min)), grad, 0.0)
    return m.where(m.lt(self, min) if which == "min" else m.gt(self, max), grad, 0.0)


def _selected(m, grad, self, other, lost):
    # maximum/minimum: half the gradient each on ties, none where the input lost (PyTorch:
    # where(self == other, grad / 2, grad).masked_fill_(self < other, 0)).
    return m.masked_fill(m.where(m.eq(self, other), m.div_scalar(grad, 2), grad), lost, 0.0)


def _clamp_mask(m, x, lo, hi):
    mask = True
    if lo is not None:
        mask = m.ge(x, lo)
    if hi is not None:
        mask = m.le(x, hi) if lo is None else m.logical_and(mask, m.le(x, hi))
    return mask


def _evenly(m, grad, x, result):
    # Ties share the gradient evenly, as PyTorch's evenly_distribute_backward: zeros with
    # grad / count filled in where the extreme is (the NaN entries for a NaN extreme).
    mask = m.ne(x, x) if bool(result != result) else m.eq(x, result)
    return m.masked_fill(m.new_zeros(grad, m.shape(x)), mask, grad / m.sum(mask, None, False))


def _extreme_indices(kind: str) -> Callable:
    """max(dim)'s (``kind`` "Max") or min(dim)'s indices, from the operand and (dim, keepdim).

    On SymPy values (the symbolic layer) which entry is the extreme is not a number: the
    indicators of the first extreme entry stand for the indices there (the SYMPY backend's
    ``value_selecting_backward`` takes them so)."""
    arg = np.argmax if kind == "Max" else np.argmin

    def indices(arrays, attrs):
        a, (dim, keepdim) = arrays[0], attrs
        if np.ndim(a) == 0:
            return np.zeros((), dtype=np.int64)
        a = np.asarray(a)
        if a.dtype == object:
            from ..symbolic.backend import SYMPY
            return SYMPY.first_true(SYMPY.eq(a, _sym_reduce(kind, a, dim, True)), dim)
        return np.asarray(arg(a, axis=dim, keepdims=keepdim), dtype=np.int64)
    return indices


def _along(shape, dim, index) -> tuple:
    """The numpy index of the positions ``index`` points at along ``dim``."""
    ix = list(np.indices(np.shape(index), sparse=True))
    ix[dim % len(shape)] = np.asarray(index)
    return tuple(ix)


def _gather_along(a, dim, index):
    if np.ndim(a) == 0:
        return np.array(a, copy=True)
    return np.asarray(a)[_along(np.shape(a), dim, index)]


def _scatter_along(a, dim, index, src, add: bool):
    out = np.array(a, copy=True)
    if out.ndim == 0:
        return out + src if add else np.array(src, dtype=out.dtype)
    if np.shape(src) != np.shape(index):
        # (PyTorch takes a larger src, but its gradient there is not src's shape.)
        raise ValueError("scatter: src must have the index's shape")
    ix = _along(out.shape, dim, index)
    if add:
        np.add.at(out, ix, src)
    else:
        out[ix] = src
    return out


def _norm_grad(m, grad, self, ord, dim, result, keepdim):
    # PyTorch's norm_backward, zero norms and zero entries included; the branches and the
    # order of operations are PyTorch's (same roundings, signed zeros, same graph).
    shape = m.shape(self)
    if dim is None:  # all dims: PyTorch unsqueezes nothing (its dim list is empty)
        g, r = grad, result
    else:
        g, r = _keep(grad, shape, dim, keepdim), _keep(result, shape, dim, keepdim)
    if ord == 0:
        return None  # PyTorch's gradient is undefined: the leaf's .grad stays None
    if ord == 1:
        return m.sgn(self) * g
    if ord == 2:
        return g * m.masked_fill(self / r, m.eq(r, 0), 0.0)
    if ord in (float("inf"), -float("inf")):
        size = m.abs(self)
        mask = m.logical_or(m.eq(size, r), m.ne(size, size))  # the extremes, and NaNs
        return m.sgn(self) * ((g / m.sum(mask, dim, True)) * mask)
    p = float(ord)  # PyTorch's p is a double: PowBackward0 saves 1.0, not 1
    if p < 1:
        scaled = m.sgn(self) * m.masked_fill(m.abs(self) ** (p - 1), m.eq(self, 0), 0.0)
        return scaled * g * r ** (1 - p)
    scale = m.masked_fill(g / r ** (p - 1), m.eq(r, 0), 0.0)
    if p < 2:
        return m.sgn(self) * m.abs(self) ** (p - 1) * scale
    return self * m.abs(self) ** (p - 2) * scale


def _cat_piece(m, grad, dim, sizes, i):
    start = sum(sizes[:i])
    return m.slice(grad, dim, start, start + sizes[i], 1)


def _expand(a, size):
    """``broadcast_to`` with PyTorch's strides: only the expanded dims get stride 0 (numpy
    zeroes every size-1 dim), which matters to matmul's choice of folding."""
    a = np.asarray(a)
    size = tuple(size)
    lead = len(size) - a.ndim
    strides = [0] * len(size)
    below = a.itemsize  # stride of a new leading dim: the size times stride of the next
    for i in range(len(size) - 1, -1, -1):
        d = i - lead
        n, st = (a.shape[d], a.strides[d]) if d >= 0 else (1, below)
        if n != size[i] and n != 1:
            raise ValueError(f"cannot broadcast shape {a.shape} to {size}")
        strides[i] = 0 if n != size[i] else st
        below = size[i] * strides[i]
    return np.lib.stride_tricks.as_strided(a, size, tuple(strides), writeable=False)


def _restride(a, out, strides: tuple):
    """``out`` (a view of ``a``'s memory) with PyTorch's strides, in elements: numpy picks
    others for size-1 dims, which PyTorch reports (``stride()``, mm's saved strides)."""
    if out.dtype == object or out.size == 0:
        return out
    return np.lib.stride_tricks.as_strided(out, out.shape,
                                           tuple(s * out.itemsize for s in strides),
                                           writeable=out.flags.writeable)


def _reshape(a, shape):
    """A view of ``a`` in ``shape`` where one exists, strides as PyTorch's computeStride."""
    out = np.reshape(a, shape)
    if not isinstance(a, np.ndarray) or a.flags.c_contiguous or not np.shares_memory(a, out):
        return out  # numpy's strides for a contiguous result are PyTorch's
    old, old_strides = a.shape, _strides(a)
    new = list(out.shape)
    strides = [0] * len(new)
    view_d = len(new) - 1
    base = old_strides[-1] if old else 1
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and old_strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                strides[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if d > 0:
                base, tensor_numel, view_numel = old_strides[d - 1], 1, 1
    return _restride(a, out, tuple(strides))


def _unsqueeze(a, dim):
    out = np.expand_dims(a, dim)
    if not isinstance(a, np.ndarray):
        return out
    d = dim % out.ndim
    # PyTorch: the new dim's stride is size * stride of the dim it goes before, 1 at the end.
    new = 1 if d == a.ndim else a.shape[d] * _strides(a)[d]
    strides = _strides(a)
    return _restride(a, out, strides[:d] + (new,) + strides[d:])


def _unsqueeze_to(m, grad, sizes, dims):
    """PyTorch's unsqueeze_to: squeeze's gradient gets back the size-1 dims it lost."""
    if not len(sizes):
        return grad
    for d in sorted({d % len(sizes) for d in ((dims,) if isinstance(dims, int) else dims)}):
        if sizes[d] == 1:
            grad = m.unsqueeze(grad, d)
    return grad


def _column_major(sizes, strides) -> bool:
    return len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]


def _mm_self_grad(m, grad, mat2, self, sizes, strides, mat2_sizes, mat2_strides):
    # PyTorch's mm_mat1_backward: a column-major self gets a column-major gradient.
    if _column_major(sizes, strides):
        return m.t(m.matmul(mat2, m.t(grad)))
    return m.matmul(grad, m.t(mat2))


def _mm_mat2_grad(m, grad, mat2, self, sizes, strides, mat2_sizes, mat2_strides):
    # PyTorch's mm_mat2_backward, likewise.
    if _column_major(mat2_sizes, mat2_strides):
        return m.t(m.matmul(m.t(grad), self))
    return m.matmul(m.t(self), grad)


def _squeeze_dims(shape, dim):
    if dim is None:
        return tuple(i for i, n in enumerate(shape) if n == 1)
    return tuple(d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim)
                 if shape[d % len(shape)] == 1) if shape else ()


_SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_SUB_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
              "`^` or `logical_xor()` operator instead.")
_NEGATION = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _raise(error: Exception):
    raise error


def _times(alpha, b):
    # alpha * b, except that alpha 1 leaves b alone (bool operands stay bool).
    return b if alpha == 1 else alpha * b


def _maybe_multiply(m, grad, alpha):
    # PyTorch's maybe_multiply: a gradient times alpha (mul.Scalar), unless alpha is 1.
    return grad if alpha == 1 else m.mul_scalar(grad, alpha)


# --------------------------------------------------------------------------- SymPy
# ``sym`` mappings run on numpy object arrays of SymPy expressions.  numpy applies its
# arithmetic, sums and matmul to such arrays itself, but not ``np.exp`` or comparisons:
# the ops that need those say how in ``sym``.
def sympy_function(name: str) -> Callable:
    """The SymPy function an elementwise op's ``sym`` names.

    SymPy's own function of that name, or a definition of the few that SymPy lacks
    (``reciprocal``, ``sigmoid``, ``relu``, ``clamp``).  Extra arguments are the op's
    attributes.

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x", real=True)
    >>> sympy_function("sigmoid")(x)
    1/(1 + exp(-x))
    >>> sympy_function("clamp")(x, None, 1.0)
    Min(1.0, x)
    """
    import sympy

    def clamp(x, lo=None, hi=None):
        if lo is not None:
            x = sympy.Max(x, lo)
        return x if hi is None else sympy.Min(x, hi)

    extra = {"reciprocal": lambda x: 1 / x, "sigmoid": lambda x: 1 / (1 + sympy.exp(-x)),
             "relu": lambda x: sympy.Max(x, 0), "clamp": clamp}
    return extra[name] if name in extra else getattr(sympy, name)


def _sym_map(name, *arrays):
    """The SymPy function ``name`` applied elementwise (broadcasting) to object arrays."""
    return np.frompyfunc(sympy_function(name), len(arrays), 1)(*arrays)


def _sym_reduce(name, a, dim, keepdim):
    """Reduce an object array with the SymPy function ``name`` (``Max``) over ``dim``."""
    f = np.frompyfunc(sympy_function(name), 2, 1)
    axes = _dims(dim, np.ndim(a))
    out = np.asarray(a, dtype=object)
    for ax in axes:
        out = f.reduce(out, axis=ax, keepdims=True)
    return out if keepdim else out.reshape(tuple(
        n for i, n in enumerate(np.shape(a)) if i not in axes))


def _strides(a) -> tuple:
    """A numpy array's strides in elements, as PyTorch reports them."""
    a = np.asarray(a)
    return tuple(st // a.itemsize for st in a.strides)


def _sym_norm(a, ord, dim, keepdim):
    axis = None if dim is None else _dims(dim, np.ndim(a))
    size = _sym_map("Abs", a)
    if ord == float("inf"):
        return _sym_reduce("Max", size, axis, keepdim)
    if ord == -float("inf"):
        return _sym_reduce("Min", size, axis, keepdim)
    return np.sum(size ** ord, axis=axis, keepdims=keepdim) ** (1 / _sym_map("S", ord))


def _sym_softmax(a, dim):
    e = _sym_map("exp", a)
    return e / np.sum(e, axis=dim, keepdims=True)


def _sym_log_softmax(a, dim):
    return a - _sym_map("log", np.sum(_sym_map("exp", a), axis=dim, keepdims=True))


# --------------------------------------------------------------------------- arithmetic
# ``x + y`` is PyTorch's add with alpha 1 (AddBackward0 shows _saved_alpha = 1); any other
# alpha, ``x.add(y, alpha=2)``, is the same node saving its alpha: one op for each, so that
# the common case keeps no attribute.
ADD = Op("add", inputs=("self", "other"), broadcasts=True, dtype="promote",
         forward=operator.add, grads=(lambda m, grad: grad, lambda m, grad: grad),
         consts={"alpha": 1}, local=("1", "1"), doc="self + other",
        symbol="+", infix="{self} + {other}", commutative=True)
ADD_ALPHA = Op("add", key="add_alpha", inputs=("self", "other"), attrs=("alpha",),
               broadcasts=True, dtype="alpha", saves=("alpha",),
               forward=lambda a, b, alpha: a + _times(alpha, b),
               grads=(lambda m, grad, alpha: grad,
                      lambda m, grad, alpha: _maybe_multiply(m, grad, alpha)),
               local=("1", "{alpha}"), doc="self + alpha * other",
        symbol="+")
SUB = Op("sub", inputs=("self", "other"), broadcasts=True, dtype="sub",
         forward=operator.sub, grads=(lambda m, grad: grad, lambda m, grad: -grad),
         consts={"alpha": 1}, local=("1", "-1"), doc="self - other",
        symbol="−", infix="{self} − {other}")
SUB_ALPHA = Op("sub", key="sub_alpha", inputs=("self", "other"), attrs=("alpha",),
               broadcasts=True, dtype="sub_alpha", saves=("alpha",),
               forward=lambda a, b, alpha: a - _times(alpha, b),
               grads=(lambda m, grad, alpha: grad,
                      lambda m, grad, alpha: _maybe_multiply(m, -grad, alpha)),
               local=("1", "-{alpha}"), doc="self - alpha * other",
        symbol="−")
RSUB = Op("rsub", 1, inputs=("self",), attrs=("other", "alpha"), dtype="sub_alpha",
          forward=lambda a, other, alpha: other - _times(alpha, a), saves=("alpha",),
          grads=(lambda m, grad, alpha: _maybe_multiply(m, -grad, alpha),),
          local=("-{alpha}",), doc="other - alpha * self, other a Python number",
        symbol="{other} −", infix="{other} − {self}")
MUL = Op("mul", inputs=("self", "other"), broadcasts=True, dtype="promote",
         forward=operator.mul, saves=("self", "other"),
         grads=(lambda m, grad, self, other: grad * other,
                lambda m, grad, self, other: grad * self),
         local=("{other}", "{self}"), doc="self * other",
        symbol="×", infix="{self}·{other}", commutative=True)
# Inside PyTorch's backward formulas ``scalar * tensor`` is mul.Scalar: MulBackward1, one
# input.  (From Python, ``5 * x`` wraps 5 as a tensor: MulBackward0 with a None edge.)
MUL_SCALAR = Op("mul", 1, inputs=("self",), attrs=("other",), dtype="promote",
                forward=np.multiply, saves=("other",),
                grads=(lambda m, grad, other: m.mul_scalar(grad, other),),
                local=("{other}",), doc="self * other, other a number inside a gradient rule",
        symbol="× {other}", infix="{other}·{self}")
# The other Scalar overloads PyTorch's formulas use: AddBackward1, SubBackward1, DivBackward1.
ADD_SCALAR = Op("add", 1, inputs=("self",), attrs=("other",), forward=np.add,
                grads=(lambda m, grad: grad,), local=("1",),
                doc="self + other, other a number inside a gradient rule")
SUB_SCALAR = Op("sub", 1, inputs=("self",), attrs=("other",), forward=np.subtract,
                dtype="sub",
                grads=(lambda m, grad: grad,), local=("1",),
                doc="self - other, other a number inside a gradient rule")
DIV_SCALAR = Op("div", 1, inputs=("self",), attrs=("other",), forward=np.true_divide,
                saves=("other",), grads=(lambda m, grad, other: m.div_scalar(grad, other),),
                local=("1/{other}",), doc="self / other, other a number inside a gradient rule")
DIV = Op("div", inputs=("self", "other"), broadcasts=True, dtype="div",
         forward=operator.truediv, saves=("self", "other"),
         grads=(lambda m, grad, self, other: grad / other,
                lambda m, grad, self, other: -grad * ((self / other) / other)),
         local=("1/{other}", "-{self}/{other}²"), doc="self / other",
        symbol="÷", infix="{self}/{other}")
RECIPROCAL = Op("reciprocal", dtype="float", forward=lambda a: 1.0 / a, saves=("result",),
                grads=(lambda m, grad, result: -grad * (result * result),),
                sym="reciprocal", local=("-1/{self}²",), doc="1 / self")
NEG = Op("neg", forward=operator.neg, refuse={"bool": (RuntimeError, _NEGATION)},
         grads=(lambda m, grad: -grad,), local=("-1",), doc="-self",
        symbol="−", infix="−{self}")
_BOOL_POW = {"bool": (NotImplementedError, '"pow" not implemented for \'Bool\'')}
POW = Op("pow", inputs=("self",), attrs=("exponent",), dtype="pow_scalar",
         forward=_pow_scalar, refuse=_BOOL_POW, domain=(0, np.inf), saves=("self", "exponent"),
         grads=(lambda m, grad, self, exponent:
                m.zeros_like(grad) if exponent == 0
                # PyTorch's formula takes the exponent as a double: MulBackward1 saves 2.0.
                else grad * m.mul_scalar(self ** (float(exponent) - 1), float(exponent)),),
         local=("{exponent}·{self}^({exponent}-1)",), doc="self ** exponent (a number)",
        symbol="pow {exponent}", infix="{self}^{exponent}")
POW_TENSOR = Op("pow", 1, inputs=("self", "exponent"), broadcasts=True, dtype="promote",
                forward=_power, refuse=_BOOL_POW, domain=(0, np.inf),
                saves=("self", "exponent", "result"),
                grads=(lambda m, grad, self, exponent, result:
                       m.where(m.eq(exponent, 0), 0.0,
                               grad * (exponent * self ** m.sub_scalar(exponent, 1))),
                       # As PyTorch: 0 ** y has gradient 0 in y for y >= 0 (not nan).
                       lambda m, grad, self, exponent, result:
                       grad * m.where(m.logical_and(m.eq(self, 0), m.ge(exponent, 0)), 0.0,
                                      result * m.log(self))),
                local=("{exponent}·{self}^({exponent}-1)", "{self}^{exponent}·log {self}"),
                doc="self ** exponent (a tensor)",
        symbol="pow")
RPOW = Op("pow", 2, inputs=("exponent",), attrs=("self",), dtype="rpow",
          forward=lambda e, base: _power(base, e), refuse=_BOOL_POW,
          saves=("self", "exponent", "result"),
          grads=(lambda m, grad, self, exponent, result:
                 grad * m.mul_scalar(result, float(np.log(self))) if self != 0 else
                 grad * m.where(m.ge(exponent, 0), 0.0, result * float("-inf")),),
          local=("{self}^{exponent}·log {self}",), doc="self ** exponent, self a number",
        symbol="pow")

# --------------------------------------------------------------------------- elementwise
ABS = Op("abs", forward=np.abs, saves=("self",), sym="Abs",
         refuse={"bool": (NotImplementedError, '"abs_cpu" not implemented for \'Bool\'')},
         grads=(lambda m, grad, self: grad * m.sgn(self),), local=("sign({self})",))
# sign and sgn: zero gradient, but recorded, so that abs's gradient stays connected to its
# input (a second derivative of zero, not "does not require grad"), as in PyTorch.
SIGN = Op("sign", forward=_sign, sym="sign", grads=(lambda m, grad: m.zeros_like(grad),),
          local=("0",))
SGN = Op("sgn", forward=np.sign, sym="sign", saves=("result", "self"),
         grads=(lambda m, grad, result, self: m.zeros_like(grad),), local=("0",))
EXP = Op("exp", dtype="float", forward=np.exp, saves=("result",), sym="exp",
         grads=(lambda m, grad, result: grad * result,), local=("exp({self})",))
LOG = Op("log", dtype="float", forward=np.log, domain=(0, np.inf), saves=("self",), sym="log",
         grads=(lambda m, grad, self: grad / self,), local=("1/{self}",))
SQRT = Op("sqrt", dtype="float", forward=np.sqrt, domain=(0, np.inf), saves=("result",), sym="sqrt",
          grads=(lambda m, grad, result: grad / m.mul_scalar(result, 2),),
          local=("1/(2√{self})",))
SIN = Op("sin", dtype="float", forward=np.sin, saves=("self",), sym="sin",
         grads=(lambda m, grad, self: grad * m.cos(self),), local=("cos({self})",))
COS = Op("cos", dtype="float", forward=np.cos, saves=("self",), sym="cos",
         grads=(lambda m, grad, self: grad * -m.sin(self),), local=("-sin({self})",))
TAN = Op("tan", dtype="float", forward=np.tan, domain=(-np.pi / 2, np.pi / 2),
         saves=("result",), sym="tan",
         grads=(lambda m, grad, result: grad * m.add_scalar(result ** 2, 1),),
         local=("1 + tan²({self})",))
TANH = Op("tanh", dtype="float", forward=np.tanh, saves=("result",), sym="tanh",
          grads=(lambda m, grad, result: m.tanh_backward(grad, result),),
          local=("1 - tanh²({self})",))
# tanh's and sigmoid's gradients as their own ops, as in PyTorch (so that their graphs,
# and second derivatives, read TanhBackwardBackward0 / SigmoidBackwardBackward0).
TANH_BACKWARD = Op(
    "tanh_backward", inputs=("grad_output", "output"),
    forward=lambda g, y: g * (1 - y * y), saves=("grad_output", "output"),
    grads=(lambda m, grad, grad_output, output: m.tanh_backward(grad, output),
           lambda m, grad, grad_output, output: grad * (m.mul_scalar(output, -2) * grad_output)),
    local=("1 - {output}²", "-2·{output}·{grad_output}"), doc="grad_output * (1 - output²)")
SIGMOID_BACKWARD = Op(
    "sigmoid_backward", inputs=("grad_output", "output"),
    forward=lambda g, y: g * (y * (1 - y)), saves=("grad_output", "output"),
    grads=(lambda m, grad, grad_output, output: m.sigmoid_backward(grad, output),
           lambda m, grad, grad_output, output:
           grad * grad_output * m.add_scalar(m.mul_scalar(output, -2), 1)),
    local=("{output}(1 - {output})", "{grad_output}(1 - 2·{output})"),
    doc="grad_output * output * (1 - output)")
SIGMOID = Op("sigmoid", dtype="float", saves=("result",), sym="sigmoid",
             forward=lambda a: 0.5 * np.tanh(0.5 * a) + 0.5,
             grads=(lambda m, grad, result: m.sigmoid_backward(grad, result),),
             local=("σ({self})(1 - σ({self}))",))
RELU = Op("relu", forward=_relu, saves=("result",), sym="relu",
          refuse={"bool": (RuntimeError, "Boolean inputs not supported for relu")},
          grads=(lambda m, grad, result: m.threshold_backward(grad, result, 0),),
          local=("[{self} > 0]",))
# relu's gradient as its own op (PyTorch's threshold_backward): it stays connected to the
# relu's result, so second derivatives are zeros rather than "unused".
THRESHOLD_BACKWARD = Op(
    "threshold_backward", inputs=("grad_output", "self"), attrs=("threshold",),
    forward=lambda g, s, t: np.where(s <= t, 0.0, g),
    sym=lambda g, s, t: g * _sym_map("Heaviside", s - t), saves=("self", "threshold"),
    grads=(lambda m, grad, self, threshold: m.threshold_backward(grad, self, threshold),
           lambda m, grad, self, threshold: m.zeros_like(grad)),
    local=("[{self} > threshold]", "0"), doc="grad_output where self > threshold")
CLAMP = Op("clamp", 1, attrs=("min", "max"), forward=_clamp, saves=("self", "min", "max"),
           dtype="clamp",
           sym="clamp",
           grads=(lambda m, grad, self, min, max:
                  m.where(_clamp_mask(m, self, min, max), grad, 0.0),),
           local=("[min ≤ {self} ≤ max]",))
# clamp with tensor bounds (ClampBackward0): the bounds are differentiable inputs too.
CLAMP_TENSOR = Op("clamp", 0, inputs=("self", "min", "max"), broadcasts=True,
                  dtype="clamp_tensor", forward=_clamp, saves=("self", "min", "max"),
                  sym=lambda a, lo, hi: _sym_map("clamp", a, lo, hi),
                  grads=(lambda m, grad, self, min, max:
                         m.where(_clamp_mask(m, self, min, max), grad, 0.0),
                         lambda m, grad, self, min, max:
                         _clamp_bound_grad(m, grad, self, min, max, "min"),
                         lambda m, grad, self, min, max:
                         _clamp_bound_grad(m, grad, self, min, max, "max")),
                  local=("[min ≤ {self} ≤ max]", "[{self} < min]", "[{self} > max]"))
WHERE = Op("where", inputs=("condition", "self", "other"), broadcasts=True,
           dtype="where", forward=np.where, saves=("condition",),
           grads=(None,
                  lambda m, grad, condition: m.where(condition, grad, 0.0),
                  lambda m, grad, condition: m.where(condition, 0.0, grad)),
           local=(None, "[cond]", "[not cond]"))
MAXIMUM = Op("maximum", inputs=("self", "other"), broadcasts=True, dtype="promote",
             forward=np.maximum, saves=("self", "other"),
             sym=lambda a, b: _sym_map("Max", a, b),
             grads=(lambda m, grad, self, other:
                    _selected(m, grad, self, other, m.lt(self, other)),
                    lambda m, grad, self, other:
                    _selected(m, grad, self, other, m.gt(self, other))),
             local=("[{self} ≥ {other}]", "[{other} ≥ {self}]"),
        commutative=True)
MINIMUM = Op("minimum", inputs=("self", "other"), broadcasts=True, dtype="promote",
             forward=np.minimum, saves=("self", "other"),
             sym=lambda a, b: _sym_map("Min", a, b),
             grads=(lambda m, grad, self, other:
                    _selected(m, grad, self, other, m.gt(self, other)),
                    lambda m, grad, self, other:
                    _selected(m, grad, self, other, m.lt(self, other))),
             local=("[{self} ≤ {other}]", "[{other} ≤ {self}]"),
        commutative=True)

# --------------------------------------------------------------------------- reductions
SUM = Op("sum", forward=lambda a: np.sum(a), saves=("self_sym_sizes",), dtype="sum",
         grads=(lambda m, grad, self_sym_sizes: m.expand(grad, self_sym_sizes),),
         local=("1",))
SUM_DIM = Op("sum", 1, attrs=("dim", "keepdim"), forward=_sum, dtype="sum",
             saves=("self_sym_sizes", "dim", "keepdim"),
             grads=(lambda m, grad, self_sym_sizes, dim, keepdim:
                    m.expand(_keep(grad, self_sym_sizes, dim, keepdim), self_sym_sizes),),
             local=("1",),
        symbol="sum dim={dim}")
MEAN = Op("mean", forward=lambda a: np.mean(a), saves=("self_sym_sizes", "self_sym_numel"),
          grads=(lambda m, grad, self_sym_sizes, self_sym_numel:
                 m.div_scalar(m.expand(grad, self_sym_sizes), self_sym_numel),),
          local=("1/n",))
MEAN_DIM = Op("mean", 1, attrs=("dim", "keepdim"), forward=_mean,
              saves=("self_sym_sizes", "self_sym_numel", "dim", "keepdim"),
              grads=(lambda m, grad, self_sym_sizes, self_sym_numel, dim, keepdim:
                     m.div_scalar(m.expand(_keep(grad, self_sym_sizes, dim, keepdim),
                                           self_sym_sizes),
                                  int(np.prod([self_sym_sizes[d] for d in
                                               _dims(dim, len(self_sym_sizes))]))),),
              local=("1/n",),
        symbol="mean dim={dim}")


def _in_dtype(op: Op) -> Op:
    """``op`` computed in the dtype its last attribute names (``x.sum(dtype=float64)``):
    the same node, saves and gradient rules (the engine casts the gradient back)."""
    def forward(a, *attrs):
        a = np.asarray(a)
        if a.dtype != object:  # SymPy values (the symbolic layer) have no dtype to change
            a = a.astype(attrs[-1].np)
        return op.forward(a, *attrs[:-1])
    return Op(op.name, op.overload, inputs=op.inputs, attrs=op.attrs + ("dtype",),
              forward=forward, grads=op.grads, saves=op.saves, local=op.local,
              dtype="last_attr", key=op.key + "_dtype", doc=f"{op.key}(dtype=...)")


SUM_DTYPE, SUM_DIM_DTYPE, MEAN_DTYPE, MEAN_DIM_DTYPE = map(_in_dtype, (SUM, SUM_DIM, MEAN,
                                                                         MEAN_DIM))
MAX = Op("max", 1, forward=lambda a: np.max(a), saves=("self", "result"),
         sym=lambda a: _sym_reduce("Max", a, None, False),
         grads=(lambda m, grad, self, result: _evenly(m, grad, self, result),),
         local=("[{self} = max]",))
MIN = Op("min", 1, forward=lambda a: np.min(a), saves=("self", "result"),
         sym=lambda a: _sym_reduce("Min", a, None, False),
         grads=(lambda m, grad, self, result: _evenly(m, grad, self, result),),
         local=("[{self} = min]",))
MAX_DIM = Op("max", 0, attrs=("dim", "keepdim"), key="max_dim",
             # one dim (an int), never None or several
             forward=lambda a, dim, keepdim:
             np.max(a, axis=operator.index(dim), keepdims=keepdim),
             sym=lambda a, dim, keepdim: _sym_reduce("Max", a, dim, keepdim),
             saves=("dim", "indices", "keepdim", "self_sym_sizes"),
             derive={"indices": _extreme_indices("Max")},
             grads=(lambda m, grad, dim, indices, keepdim, self_sym_sizes:
                    m.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim),),
             local=("[{self} = max]",),
        symbol="max dim={dim}")
MIN_DIM = Op("min", 0, attrs=("dim", "keepdim"), key="min_dim",
             # one dim (an int), never None or several
             forward=lambda a, dim, keepdim:
             np.min(a, axis=operator.index(dim), keepdims=keepdim),
             sym=lambda a, dim, keepdim: _sym_reduce("Min", a, dim, keepdim),
             saves=("dim", "indices", "keepdim", "self_sym_sizes"),
             derive={"indices": _extreme_indices("Min")},
             grads=(lambda m, grad, dim, indices, keepdim, self_sym_sizes:
                    m.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim),),
             local=("[{self} = min]",),
        symbol="min dim={dim}")
# masked_fill with a number (MaskedFillBackward0): maximum's gradient.
MASKED_FILL_SCALAR = Op("masked_fill", 0, attrs=("mask", "value"), saves=("mask",),
                        forward=lambda a, mask, value: np.where(mask, value, a),
                        grads=(lambda m, grad, mask: m.masked_fill(grad, mask, 0.0),),
                        local=("[not mask]",), doc="value where mask, else self")
# masked_fill with a 0-d tensor value (MaskedFillBackward1): max()'s gradient.
MASKED_FILL = Op("masked_fill", 1, inputs=("self", "value"), attrs=("mask",), saves=("mask",),
                 forward=lambda a, value, mask: np.where(mask, value, a) if not np.ndim(value)
                 else _raise(ValueError("masked_fill: value must be a 0-d tensor")),
                 grads=(lambda m, grad, mask: m.masked_fill(grad, mask, 0.0),
                        lambda m, grad, mask: m.sum(m.masked_select(grad, mask), None, False)),
                 local=("[not mask]", "Σ[mask]"), doc="value where mask, else self")
MASKED_SELECT = Op("masked_select", attrs=("mask",), saves=("mask", "self"),
                   forward=lambda a, mask: np.asarray(a)[np.broadcast_to(mask, np.shape(a))],
                   grads=(lambda m, grad, mask, self: m.scatter(grad, m.shape(self), mask),),
                   local=("scatter",), doc="the elements of self where mask, as a 1-D tensor")
# PyTorch's value_selecting_reduction_backward writes the gradient into zeros with
# scatter; scatter's and gather's gradients are each other (and scatter_add's).
SCATTER_SRC = Op("scatter", inputs=("self", "src"), attrs=("dim", "index"),
                 forward=lambda a, src, dim, index: _scatter_along(a, dim, index, src, False),
                 saves=("dim", "index"),
                 grads=(lambda m, grad, dim, index:
                        m.scatter_dim(grad, dim, index, m.zeros_like(m.gather(grad, dim, index))),
                        lambda m, grad, dim, index: m.gather(grad, dim, index)),
                 local=("[not at index]", "gather"), doc="self with src written at index")
SCATTER_ADD = Op("scatter_add", inputs=("self", "src"), attrs=("dim", "index"),
                 forward=lambda a, src, dim, index: _scatter_along(a, dim, index, src, True),
                 saves=("dim", "index"),
                 grads=(lambda m, grad, dim, index: grad,
                        lambda m, grad, dim, index: m.gather(grad, dim, index)),
                 local=("1", "gather"), doc="self with src added at index")
GATHER = Op("gather", attrs=("dim", "index"), forward=_gather_along,
            saves=("dim", "index", "self"), consts={"sparse_grad": False},
            grads=(lambda m, grad, dim, index, self:
                   m.scatter_add(m.new_zeros(grad, m.shape(self)), dim, index, grad),),
            local=("scatter-add",), doc="the elements of self at index along dim")
NORM = Op("linalg_vector_norm", attrs=("ord", "dim", "keepdim"), dtype="float",
          forward=_norm, sym=_sym_norm, saves=("self", "ord", "dim", "result", "keepdim"),
          grads=(_norm_grad,),
          local=("{self}/‖{self}‖",),
        symbol="norm")
SOFTMAX = Op("_softmax", attrs=("dim",), dtype="float", forward=_softmax, sym=_sym_softmax,
             saves=("result", "dim"), node="SoftmaxBackward0",
             grads=(lambda m, grad, result, dim: m.softmax_backward_data(grad, result, dim),),
             local=("diag(s) - s sᵀ",))
LOG_SOFTMAX = Op("_log_softmax", attrs=("dim",), dtype="float", forward=_log_softmax,
                 sym=_sym_log_softmax,
                 saves=("result", "dim"), node="LogSoftmaxBackward0",
                 grads=(lambda m, grad, result, dim:
                        m.log_softmax_backward_data(grad, result, dim),),
                 local=("I - softmax",))
# The softmaxes' gradients as their own ops, as in PyTorch (SoftmaxBackwardDataBackward0,
# LogSoftmaxBackwardDataBackward0), with PyTorch's double-backward formulas.
SOFTMAX_BACKWARD_DATA = Op(
    "_softmax_backward_data", inputs=("grad_output", "output"), attrs=("dim",),
    forward=lambda g, y, dim: y * (g - np.sum(g * y, axis=dim, keepdims=True)),
    saves=("grad_output", "output", "dim"),
    grads=(lambda m, grad, grad_output, output, dim:
           m.softmax_backward_data(grad, output, dim),
           lambda m, grad, grad_output, output, dim:
           grad_output * grad - m.sum(output * grad_output, dim, True) * grad
           - grad_output * m.sum(output * grad, dim, True)),
    local=("diag(s) - s sᵀ", "∂/∂s"), doc="output * (grad_output - Σ grad_output * output)")
LOG_SOFTMAX_BACKWARD_DATA = Op(
    "_log_softmax_backward_data", inputs=("grad_output", "output"), attrs=("dim",),
    forward=lambda g, y, dim: g - np.exp(y) * np.sum(g, axis=dim, keepdims=True),
    sym=lambda g, y, dim: g - _sym_map("exp", y) * np.sum(g, axis=dim, keepdims=True),
    saves=("grad_output", "output", "dim"),
    grads=(lambda m, grad, grad_output, output, dim:
           grad - m.sum(grad * m.exp(output), dim, True),
           lambda m, grad, grad_output, output, dim:
           -m.sum(grad_output, dim, True) * m.exp(output) * grad),
    local=("I - softmax", "∂/∂s"), doc="grad_output - exp(output) * Σ grad_output")

# --------------------------------------------------------------------------- linear algebra
def _no_bool(kernel: str) -> dict:
    return {"bool": (NotImplementedError, f'"{kernel}" not implemented for \'Bool\'')}


DOT = Op("dot", inputs=("self", "tensor"), forward=np.dot, saves=("self", "tensor"),
         refuse=_no_bool("dot"),
         ranks=((1,), (1,)),
         dtype="promote_strict",
         grads=(lambda m, grad, self, tensor: grad * tensor,
                lambda m, grad, self, tensor: grad * self),
         local=("{tensor}", "{self}"),
        symbol="dot", infix="⟨{self}, {tensor}⟩", commutative=True)
MM = Op("mm", inputs=("self", "mat2"), forward=np.matmul, refuse=_no_bool("addmm_impl_cpu_"),
        # (in the order PyTorch unpacks them: an in-place change to both reports mat2)
        saves=("mat2", "self", "self_sym_sizes", "self_sym_strides", "mat2_sym_sizes",
               "mat2_sym_strides"),
        derive={"self_sym_strides": lambda arrays, attrs: _strides(arrays[0]),
                "mat2_sym_sizes": lambda arrays, attrs: tuple(np.shape(arrays[1])),
                "mat2_sym_strides": lambda arrays, attrs: _strides(arrays[1])},
        # PyTorch's mm_mat1_backward/mm_mat2_backward pick a memory layout from the
        # sizes and strides; the values do not depend on it.
        saved_for={"self_sym_strides": ("self",), "mat2_sym_strides": ("mat2",)},
        ranks=((2,), (2,)),
        dtype="promote_strict",
        grads=(_mm_self_grad, _mm_mat2_grad),
        local=("{mat2}ᵀ", "{self}ᵀ"),
        symbol="@", infix="{self} {mat2}")
MV = Op("mv", inputs=("self", "vec"), forward=np.matmul, saves=("self", "vec"),
        refuse=_no_bool("addmv_impl_cpu"),
        ranks=((2,), (1,)),
        dtype="promote_strict",
        grads=(lambda m, grad, self, vec: m.outer(grad, vec),
               lambda m, grad, self, vec: m.matmul(m.t(self), grad)),
        local=("{vec}ᵀ", "{self}ᵀ"),
        symbol="@", infix="{self} {vec}")
BMM = Op("bmm", inputs=("self", "mat2"), forward=np.matmul, saves=("self", "mat2"),
         refuse=_no_bool("bmm"),
         ranks=((3,), (3,)),
         dtype="promote_strict",
         grads=(lambda m, grad, self, mat2: m.matmul(grad, m.transpose(mat2, -1, -2)),
                lambda m, grad, self, mat2: m.matmul(m.transpose(self, -1, -2), grad)),
         local=("{mat2}ᵀ", "{self}ᵀ"),
        symbol="@")

# --------------------------------------------------------------------------- shapes
T = Op("t", view=True, forward=np.transpose, grads=(lambda m, grad: m.t(grad),), local=("ᵀ",))
PERMUTE = Op("permute", view=True, attrs=("dims",), forward=np.transpose, saves=("dims",),
             grads=(lambda m, grad, dims:
                    m.permute(grad, tuple(np.argsort([d % len(dims) for d in dims]))),),
             local=("permute",))
TRANSPOSE = Op("transpose", 0, view=True, attrs=("dim0", "dim1"),
               forward=lambda a, d0, d1: np.swapaxes(a, d0, d1) if np.ndim(a) else a,
               saves=("dim0", "dim1"),
               grads=(lambda m, grad, dim0, dim1: m.transpose(grad, dim0, dim1),),
               local=("transpose",))
VIEW = Op("view", view=True, attrs=("size",), forward=_reshape, saves=("self_sym_sizes",),
          grads=(lambda m, grad, self_sym_sizes: m.reshape(grad, self_sym_sizes),),
          local=("reshape",))
RESHAPE_ALIAS = Op("_reshape_alias", view=True, attrs=("size",), forward=_reshape,
                   saves=("self_sym_sizes",),
                   grads=(lambda m, grad, self_sym_sizes: m.reshape(grad, self_sym_sizes),),
                   local=("reshape",), doc="reshape of a non-contiguous tensor, as a view")
ALIAS = Op("alias", view=True, forward=lambda a: a.view() if isinstance(a, np.ndarray) else a,
           grads=(lambda m, grad: grad,), local=("1",), doc="the same values: x[...]")
# A view regenerated from its base after an in-place change (PyTorch's as_strided); the
# index holds the base positions of the view's elements.
AS_STRIDED = Op("as_strided", view=True, attrs=("indices", "size", "stride", "storage_offset"),
                forward=lambda a, ix, size, stride, offset: np.reshape(a[ix], size),
                # (PyTorch shows the view's size, stride and storage offset; the positions
                # in the base are what the gradient needs)
                saves=("_indices", "_self_sym_sizes", "size", "stride", "storage_offset"),
                grads=(lambda m, grad, indices, self_sym_sizes, *geometry:
                       m.reshape(grad, self_sym_sizes)  # a 0-d base: indices is ()
                       if isinstance(indices, tuple) and not indices else
                       m.scatter(m.reshape(grad, _gather_shape(self_sym_sizes, indices)),
                                 self_sym_sizes, indices),),
                local=("scatter-add",), doc="the elements of self at index, as a view")
UNSAFE_VIEW = Op("_unsafe_view", attrs=("size",), forward=np.reshape,
                 saves=("self_sym_sizes",), node="UnsafeViewBackward0",
                 grads=(lambda m, grad, self_sym_sizes: m.reshape(grad, self_sym_sizes),),
                 local=("reshape",),
        symbol="view")
SQUEEZE = Op("squeeze", 0, view=True, forward=np.squeeze, saves=("self_sym_sizes",),
             grads=(lambda m, grad, self_sym_sizes:
                    _unsqueeze_to(m, grad, self_sym_sizes, range(len(self_sym_sizes))),),
             local=("squeeze",))
SQUEEZE_DIM = Op("squeeze", 1, view=True, attrs=("dim",), saves=("self_sym_sizes", "dim"),
                 forward=lambda a, dim: np.squeeze(a, _squeeze_dims(np.shape(a), dim)),
                 grads=(lambda m, grad, self_sym_sizes, dim:
                        _unsqueeze_to(m, grad, self_sym_sizes, (dim,)),),
                 local=("squeeze",))
SQUEEZE_DIMS = Op("squeeze", 2, view=True, attrs=("dim",), saves=("self_sym_sizes", "dim"),
                  forward=lambda a, dim: np.squeeze(a, _squeeze_dims(np.shape(a), dim)),
                  grads=(lambda m, grad, self_sym_sizes, dim:
                         _unsqueeze_to(m, grad, self_sym_sizes, dim),),
                  local=("squeeze",))
# In-place ``squeeze_(dim)``: PyTorch's matmul squeezes its 1-D @ 2-D product this way
# (the product itself, one version later: not a view).
SQUEEZE_ = Op("squeeze_", 4, attrs=("dim",), saves=("self_sym_sizes", "dim"),
              forward=lambda a, dim: np.squeeze(a, _squeeze_dims(np.shape(a), dim)),
              grads=(lambda m, grad, self_sym_sizes, dim:
                     _unsqueeze_to(m, grad, self_sym_sizes, (dim,)),),
              local=("squeeze",))
UNSQUEEZE = Op("unsqueeze", view=True, attrs=("dim",), forward=_unsqueeze, saves=("dim",),
               grads=(lambda m, grad, dim: m.squeeze(grad, dim),), local=("unsqueeze",))
EXPAND = Op("expand", view=True, attrs=("size",), forward=_expand, saves=("self_sym_sizes",),
            grads=(lambda m, grad, self_sym_sizes: m.sum_to(grad, self_sym_sizes),),
            local=("sum over broadcast",))
SELECT = Op("select", view=True, attrs=("dim", "index"), forward=_select,
            saves=("dim", "index", "self_sym_sizes"),
            grads=(lambda m, grad, dim, index, self_sym_sizes:
                   m.select_backward(grad, self_sym_sizes, dim, index),),
            local=("one-hot",))
# select's and slice's gradients as their own ops, as in PyTorch (SelectBackwardBackward0,
# SliceBackwardBackward0): grad_output written into zeros of the input's size.
SELECT_BACKWARD = Op("select_backward", inputs=("grad_output",), attrs=("size", "dim", "index"),
                     forward=lambda g, size, dim, index: _put(
                         np.zeros(size, dtype=np.result_type(g)), _select_index(size, dim, index),
                         g),
                     saves=("dim", "index"),
                     grads=(lambda m, grad, dim, index: m.select(grad, dim, index),),
                     local=("select",), doc="zeros(size) with grad_output at select(dim, index)")
SLICE = Op("slice", view=True, attrs=("dim", "start", "end", "step"), forward=_slice,
           saves=("dim", "start", "end", "step", "self_sym_sizes"),
           grads=(lambda m, grad, dim, start, end, step, self_sym_sizes:
                  m.slice_backward(grad, self_sym_sizes, dim, start, end, step),),
           local=("pad with zeros",))
SLICE_BACKWARD = Op("slice_backward", inputs=("grad_output",),
                    attrs=("size", "dim", "start", "end", "step"),
                    forward=lambda g, size, dim, start, end, step: _put(
                        np.zeros(size, dtype=np.result_type(g)),
                        _slice_index(size, dim, start, end, step), g),
                    saves=("dim", "start", "end", "step"),
                    grads=(lambda m, grad, dim, start, end, step:
                           m.slice(grad, dim, start, end, step),),
                    local=("slice",), doc="zeros(size) with grad_output at the slice")
INDEX = Op("index", attrs=("indices",), forward=lambda a, ix: a[ix],
           saves=("indices", "self_sym_sizes"),
           grads=(lambda m, grad, indices, self_sym_sizes:
                  m.scatter(grad, self_sym_sizes, indices),),
           local=("scatter-add",))
# index's gradient, as PyTorch's index_backward: _index_put_impl_(zeros, indices, grad,
# accumulate=True) (IndexPutImplBackward0; the zeros are a constant).
INDEX_PUT_IMPL = Op("_index_put_impl", inputs=("self", "values"), attrs=("indices",),
                    forward=lambda a, v, ix: _add_at(a, ix, v), saves=("indices",),
                    consts={"accumulate": True},
                    grads=(lambda m, grad, indices: grad,
                           lambda m, grad, indices: m.index(grad, indices)),
                    local=("1", "gather"), doc="self with values added at indices")
COPY_SLICES = Op("copy_slices", inputs=("self", "src"), attrs=("index",), broadcasts=True,
                 node="torch::autograd::CopySlices", forward=lambda a, v, ix: _put(a, ix, v),
                 saves=("_index", "_self_sym_sizes"),  # PyTorch's CopySlices shows none
                 grads=(lambda m, grad, index, self_sym_sizes:
                        grad - m.scatter(m.index(grad, index), self_sym_sizes, index),
                        lambda m, grad, index, self_sym_sizes: m.index(grad, index)),
                 local=("[not written]", "gather"),
                 doc="self with src written at index (``t[index] = src``)")
# ``t[index] = values`` with tensor indices into ``t`` itself: PyTorch's index_put_.
INDEX_PUT_ = Op("index_put_", inputs=("self", "values"), attrs=("index",), broadcasts=True,
                node="IndexPutBackward0", forward=lambda a, v, ix: _put(a, ix, v),
                saves=("indices",), consts={"accumulate": False},
                derive={"indices": lambda arrays, attrs: attrs[0]},  # PyTorch's name
                grads=(lambda m, grad, index: m.put(grad, index, 0.0),
                       lambda m, grad, index: m.index(grad, index)),
                local=("[not written]", "gather"), doc="self with values put at index")
CAT = Op("cat", inputs=("tensors",), attrs=("dim",), dtype="promote",
         # PyTorch allocates a contiguous result; numpy would follow the inputs' layout.
         forward=lambda *a: np.ascontiguousarray(np.concatenate(a[:-1], axis=a[-1])),
         saves=("dim", "_sizes"),  # PyTorch's CatBackward0 shows only its dim
         grads=(lambda m, grad, dim, sizes, i: _cat_piece(m, grad, dim, sizes, i),),
         local=("slice",), doc="variadic: one grad rule applied per input")
STACK = Op("stack", inputs=("tensors",), attrs=("dim",), dtype="promote",
           forward=lambda *a: np.ascontiguousarray(np.stack(a[:-1], axis=a[-1])),
           saves=("dim",),
           grads=(lambda m, grad, dim, i: m.select(grad, dim, i),),
           local=("select",), doc="variadic: one grad rule applied per input")
CLONE = Op("clone", forward=np.copy, grads=(lambda m, grad: grad,), local=("1",))
# clone(memory_format=torch.contiguous_format): what contiguous() and reshape copy with.
CLONE_CONTIGUOUS = Op("clone", key="clone_contiguous", forward=lambda a: np.array(a, order="C"),
                      grads=(lambda m, grad: grad,), local=("1",))
TO_COPY = Op("_to_copy", attrs=("dtype",), forward=lambda a, d: a.astype(d.np),
             sym=lambda a, d: a,
             saves=("_self_dtype",), node="ToCopyBackward0", dtype="attr",
             grads=(lambda m, grad, self_dtype: m.cast(grad, self_dtype),),
             local=("1",),
        symbol="to")

# ---------------------------------------------------------------- in-place (history rebase)
ZERO = Op("zero", forward=np.zeros_like, grads=(lambda m, grad: m.zeros_like(grad),),
          local=("0",))
FILL = Op("fill", 2, attrs=("value",), forward=lambda a, v: np.full_like(a, v),
          grads=(lambda m, grad: m.zeros_like(grad),), local=("0",))
# fill_ with a 0-d tensor: what ``t[...] = 1.5`` records (the number is wrapped).
FILL_TENSOR = Op("fill", 3, inputs=("self", "value"), broadcasts=True,
                 forward=lambda a, v: np.full_like(a, v),
                 grads=(lambda m, grad: m.zeros_like(grad), lambda m, grad: grad),
                 local=("0", "Σ"))
COPY = Op("copy", inputs=("self", "src"), broadcasts=True,
          node="torch::autograd::CopyBackwards",
          # (a src that broadcasts past self is refused by the in-place write, as PyTorch)
          forward=lambda a, b: np.broadcast_arrays(a, b)[1].astype(np.result_type(a)),
          grads=(lambda m, grad: m.zeros_like(grad), lambda m, grad: grad), local=("0", "1"))

# --------------------------------------------------------------------- no gradient
for _name, _f in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                  ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                  ("logical_and", np.logical_and), ("logical_or", np.logical_or)):
    Op(_name, inputs=("self", "other"), forward=_f, dtype="bool", broadcasts=True)
Op("logical_not", forward=np.logical_not, dtype="bool")
Op("all", attrs=("dim", "keepdim"), dtype="bool",
   forward=lambda a, dim, keepdim: np.all(a, axis=dim, keepdims=keepdim))
Op("any", attrs=("dim", "keepdim"), dtype="bool",
   forward=lambda a, dim, keepdim: np.any(a, axis=dim, keepdims=keepdim))
Op("argmax", attrs=("dim", "keepdim"), dtype="int64",
   refuse={"self:bool": (RuntimeError, "argmax(): does not support bool input")},
   forward=lambda a, dim, keepdim: np.argmax(a, axis=dim, keepdims=keepdim))
# The indices max(dim) and min(dim) return (bool operands included, unlike argmax's).
for _kind in ("Max", "Min"):
    Op(f"{_kind.lower()}_indices", attrs=("dim", "keepdim"), dtype="int64",
       forward=lambda a, dim, keepdim, f=_extreme_indices(_kind): f((a,), (dim, keepdim)))
Op("argmin", attrs=("dim", "keepdim"), dtype="int64",
   refuse={"self:bool": (RuntimeError, "argmin(): does not support bool input")},
   forward=lambda a, dim, keepdim: np.argmin(a, axis=dim, keepdims=keepdim))
