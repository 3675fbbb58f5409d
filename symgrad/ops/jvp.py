"""Forward mode's rule of each op: its Jacobian-vector product (JVP), read from the record.

The entry point is :func:`jvp_of`: ``jvp_of(op)`` is a function
``jvp(m, tangents, args, attrs, result, saved)`` giving the tangent of ``op``'s result
(or ``None`` when no operand has a tangent that reaches it), written, like the gradient
rules, against a backend ``m`` (:class:`symgrad.ir.backends.Backend`): on recorded tensors
(``symgrad.api.recorded.TENSOR``, what ``symgrad.autograd.forward_ad`` runs them on) the
tangent is itself a graph, so tangents of tangents and gradients of tangents come for free;
the same function runs on numpy arrays, SymPy arrays or text.  Its arguments:

- ``tangents``: one per operand in ``args`` (``None`` for an operand without one);
- ``args``, ``attrs``: the operands (primal values) and attributes the op ran on;
- ``result``: the op's (primal) result;
- ``saved``: the values the op's node saves (``op.saves``, in order), as its gradient
  rules take them.

How a JVP is had, as PyTorch's ``derivatives.yaml`` has it (:func:`kind` says which):

- ``ELEMENT_WISE`` (``auto_element_wise``): the result depends element by element on its
  (broadcast) operands, so each operand's gradient rule, run with that operand's tangent
  broadcast to the result's shape in place of ``grad``, is its part of the JVP; the parts
  are summed (nothing to un-broadcast);
- ``LINEAR`` (``auto_linear``): the op is linear (or affine) in its differentiable
  operands jointly, so the JVP is the op itself on the tangents (zeros for an operand
  without one; operands without a gradient rule, such as indices, kept);
- ``MULTILINEAR``: linear in each operand separately (``mm``, ``dot``): the sum over
  operands with a tangent of the op with that operand replaced by its tangent;
- ``REDUCTION``: each element of the result depends on its own segment of the operands
  (``var``, ``amax``, ``max(dim)``, ``norm``, the losses' reductions), so the Jacobian's
  entries are the gradient rules run with ones in place of ``grad``; times the tangents,
  summed over each segment (along the op's ``dim`` attribute, with its ``keepdim``, else
  over the axes the result lacks), they give the JVP (PyTorch's ``evenly_read_jvp`` for
  ties in ``max`` is what the rule's ones spread);
- an explicit rule in the side table :data:`symgrad.ops.tables.JVP`, registered beside the
  op in its family module (JAX's ``defjvp``), where none of these holds.

Ops in the side tables ``ELEMENTWISE`` and ``LINEAR`` are derived as such without an
entry; the others name their derivation (or rule) in ``JVP``.  An op with none
(:func:`jvp_of` gives ``None``) still has a tangent in ``forward_ad``: the transpose of
its gradient rule (see :mod:`symgrad.api.forward`).

Examples
--------
>>> import numpy as np
>>> from symgrad import ops
>>> from symgrad.ir.backends import NUMPY
>>> x = np.array([0.0, 1.0])
>>> kind(ops.SIN), jvp_of(ops.SIN)(NUMPY, (np.ones(2),), (x,), (), np.sin(x), (x,))
('element-wise', array([1.        , 0.54030231]))
>>> a, b = np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])
>>> kind(ops.MM), jvp_of(ops.MM)(NUMPY, (None, a), (a, b), (), a @ b, ())
('multilinear', array([[1., 0.],
       [0., 1.]]))
"""
from __future__ import annotations

from typing import Callable

from .formula import RESULT_NAMES, Formula, NoFormula, _Text, result_formula
from .tables import ELEMENTWISE, JVP, LINEAR as _LINEAR_TABLE

__all__ = ["ELEMENT_WISE", "LINEAR", "MULTILINEAR", "REDUCTION", "EXPLICIT", "jvp_of",
           "kind", "element_wise", "linear", "multilinear", "reduction", "unsupported",
           "not_yet", "tangent_formula"]

#: The derivations (values of the side table ``JVP``).
ELEMENT_WISE = "element-wise"
LINEAR = "linear"
MULTILINEAR = "multilinear"
REDUCTION = "reduction"
#: What :func:`kind` says of an op with a rule of its own.
EXPLICIT = "explicit"


def kind(op) -> str | None:
    """How ``op``'s JVP is had: ``"element-wise"``, ``"linear"``, ``"multilinear"``,
    ``"reduction"``, ``"explicit"``, or ``None`` (no JVP of its own: forward mode
    transposes its gradient rule)."""
    entry = JVP.get(op)
    if entry is None:
        if op in ELEMENTWISE:
            return ELEMENT_WISE
        if op in _LINEAR_TABLE:
            return LINEAR
        return None
    return entry if isinstance(entry, str) else EXPLICIT


def jvp_of(op) -> Callable | None:
    """``op``'s JVP, ``jvp(m, tangents, args, attrs, result, saved)`` (see the module
    docstring), or ``None`` when ``op`` has no gradient rule or no JVP of its own."""
    if op.grads is None:
        return None
    how = kind(op)
    if how is None:
        return None
    if how == EXPLICIT:
        return JVP.get(op)
    return _DERIVATIONS[how](op)


def _rule(op, i: int):
    return op.grads[0] if op.variadic else op.grads[i]


def _add(total, term):
    return term if total is None else total + term


def element_wise(op) -> Callable:
    """``auto_element_wise``: each operand's gradient rule run on its tangent (broadcast to
    the result's shape) in place of ``grad``, summed over the operands."""
    def jvp(m, tangents, args, attrs, result, saved):
        shape = tuple(m.shape(result))
        total = None
        for i, t in enumerate(tangents):
            rule = _rule(op, i)
            if t is None or rule is None:
                continue
            if tuple(m.shape(t)) != shape:
                t = m.broadcast_to(t, shape)
            term = rule(m, t, *saved, i) if op.variadic else rule(m, t, *saved)
            if term is not None:
                total = _add(total, term)
        return total
    jvp.derivation = ELEMENT_WISE
    return jvp


def _zero(m, a):
    """The tangent of an operand that has none: zeros of its shape (0 for a number)."""
    if isinstance(a, (bool, int, float, complex)):
        return 0
    return m.zeros_like(a)


def linear(op) -> Callable:
    """``auto_linear``: the op itself on the tangents (zeros for operands without one;
    operands without a gradient rule kept as they are)."""
    def jvp(m, tangents, args, attrs, result, saved):
        if all(t is None for t in tangents):
            return None
        operands = [a if _rule(op, i) is None else t if t is not None else _zero(m, a)
                    for i, (a, t) in enumerate(zip(args, tangents))]
        return m.call(op, *operands, *attrs)
    jvp.derivation = LINEAR
    return jvp


def multilinear(op) -> Callable:
    """Linear in each operand: the sum over operands with a tangent of the op with that
    operand replaced by its tangent (the product rule)."""
    def jvp(m, tangents, args, attrs, result, saved):
        total = None
        for i, t in enumerate(tangents):
            if t is None or _rule(op, i) is None:
                continue
            operands = list(args)
            operands[i] = t
            total = _add(total, m.call(op, *operands, *attrs))
        return total
    jvp.derivation = MULTILINEAR
    return jvp


def _axes(dim, ndim: int) -> tuple:
    if dim is None or (isinstance(dim, (tuple, list)) and not len(dim)):
        return tuple(range(ndim))
    return tuple(d % ndim for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))


def reduction(op) -> Callable:
    """A segment reduction: each operand's gradient rule run with ones in place of ``grad``
    (the Jacobian's entries), times its tangent, summed over each result element's segment.
    """
    dim_at = op.attrs.index("dim") if "dim" in op.attrs else None
    keep_at = op.attrs.index("keepdim") if "keepdim" in op.attrs else None

    def jvp(m, tangents, args, attrs, result, saved):
        ones = m.add_scalar(m.zeros_like(result), 1.0)
        total = None
        for i, t in enumerate(tangents):
            rule = _rule(op, i)
            if t is None or rule is None:
                continue
            entries = rule(m, ones, *saved)
            if entries is None:
                continue
            if tuple(m.shape(t)) != tuple(m.shape(entries)):
                t = m.broadcast_to(t, m.shape(entries))
            total = _add(total, entries * t)
        if total is None:
            return None
        shape = tuple(m.shape(total))
        if dim_at is not None and shape:
            keepdim = bool(attrs[keep_at]) if keep_at is not None else False
            return m.call(_SUM_DIM[0], total, _axes(attrs[dim_at], len(shape)), keepdim)
        return m.sum_to(total, m.shape(result))
    jvp.derivation = REDUCTION
    return jvp


#: The sum along dims (``ops.reductions.SUM_DIM``), registered by its module (this one is
#: imported first).
_SUM_DIM: list = [None]


def unsupported(name: str) -> Callable:
    """The JVP of an op PyTorch has no forward mode for: NotImplementedError with its
    message (``Trying to use forward AD with aten::bincount that does not support it.``)."""
    return _raising(f"Trying to use forward AD with aten::{name} that does not support it.")


def not_yet(name: str) -> Callable:
    """The JVP of an op whose forward mode PyTorch has not implemented yet (``asinh_``)."""
    return _raising(
        f"Trying to use forward AD with {name} that does not support it because it has not "
        "been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
        "pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
        "its implementation.")


def _raising(message: str) -> Callable:
    def jvp(m, tangents, args, attrs, result, saved):
        raise NotImplementedError(message)
    jvp.unsupported = message
    return jvp


_DERIVATIONS = {ELEMENT_WISE: element_wise, LINEAR: linear, MULTILINEAR: multilinear,
                REDUCTION: reduction}


class _Elements(_Text):
    """The text backend with every value one element (a shape is ``()``): a tangent
    printed as a formula of the operands and their tangents."""

    def shape(self, a) -> tuple:
        return ()


_ELEMENTS = _Elements()


def tangent_formula(op) -> str | None:
    """The tangent of ``op``'s result as text, printed from its JVP on the text backend
    (so, for a derived JVP, from its gradient rules: one description gives the drawing's
    local derivatives and the tangent), each operand's tangent named ``{name_t}`` as
    derivatives.yaml names it; ``None`` where the JVP cannot be printed.

    Examples
    --------
    >>> from symgrad import ops
    >>> tangent_formula(ops.SIN)
    '{self_t}·cos({self})'
    >>> tangent_formula(ops.MUL)
    '{self_t}·{other} + {other_t}·{self}'
    """
    rule = jvp_of(op)
    if rule is None or op.variadic or getattr(rule, "unsupported", None):
        return None
    saved = [result_formula(op) if n.lstrip("_") in RESULT_NAMES
             and n.lstrip("_") not in op.inputs else Formula.name(n.lstrip("_"))
             for n in op.saves]
    tangents = tuple(Formula.name(f"{n}_t") for n in op.inputs)
    try:
        got = rule(_ELEMENTS, tangents, tuple(Formula.name(n) for n in op.inputs),
                   tuple(Formula.name(n) for n in op.attrs), result_formula(op), saved)
    except (NoFormula, TypeError, ValueError, AttributeError, IndexError):
        return None
    return None if got is None else Formula.of(got).plain()
