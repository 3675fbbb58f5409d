"""The op record (:class:`Op`) and the registry of every op (:data:`OPS`)."""
from __future__ import annotations

import dis
from typing import Callable

import numpy as np

from .dtype_rules import same
from .formula import RESULT_NAMES, local_derivatives
from .opcore import OpCore
from .tables import ELEMENTWISE, LINEAR, SQUARE, TABLES

__all__ = ["Op", "OPS", "INT64_NAMES", "node_name", "op_named", "subscribe", "unregister",
           "pack_order"]

OPS: dict[str, "Op"] = {}

#: The names of saved attributes that are int64 (SymInt) in PyTorch, whatever the op: its
#: Python binding shows a negative one as the unsigned 64-bit number (``x.sum(-1)`` saves
#: dim ``(2**64 - 1,)``).  Attribute names mean the same in every record.
INT64_NAMES = frozenset(("dim", "dims", "dim0", "dim1", "index", "start", "end", "step",
                         "ignore_index", "padding_idx", "pad", "dim2", "offset", "padding",
                         "diagonal", "shifts", "k"))


def node_name(name: str, overload: int) -> str:
    """PyTorch's backward-node name: ``linalg_vector_norm`` -> ``LinalgVectorNormBackward0``."""
    return "".join(p[:1].upper() + p[1:] for p in name.split("_")) + f"Backward{overload}"


def not_implemented(message: str, error: type = NotImplementedError) -> Callable:
    """A gradient rule that PyTorch does not implement: ``backward()`` raises
    ``error(message)`` (the rule is marked, so checks can tell)."""
    def rule(m, grad, *saved):
        raise error(message)
    rule.not_implemented = message
    return rule


def _names(names: str | tuple | None) -> tuple:
    return (names,) if isinstance(names, str) else tuple(names or ())


class Op(OpCore):
    """One primitive operation; see the module docstring for the fields.

    Examples
    --------
    >>> from symgrad import ops
    >>> ops.MUL.node_name, ops.MUL.inputs, ops.MUL.saves
    ('MulBackward0', ('self', 'other'), ('self', 'other'))
    """

    # (the fields apply and the engine read on every call are OpCore's)
    __slots__ = ("name", "overload", "attrs", "saves", "sym", "_local", "broadcasts",
                 "node_name", "key", "doc", "domain", "ranks", "consts", "derive", "symbol",
                 "infix", "commutative", "function", "functions", "methods", "inplace",
                 "functional", "expr", "exprs", "expr_args", "_expr_given", "expr_with",
                 "composite")

    def __init__(self, name: str, overload: int = 0, *, inputs=("self",), attrs=(),
                 forward: Callable, grads=None, saves=(), sym=None, local=None,
                 dtype: Callable = same, broadcasts: bool = False, key: str | None = None,
                 doc: str = "", node: str | None = None, view: bool = False,
                 domain: tuple = (-np.inf, np.inf), ranks: tuple | None = None,
                 consts: dict | None = None, refuse: dict | None = None,
                 derive: dict | None = None, saved_for: dict | None = None,
                 symbol: str | None = None, infix: str | None = None,
                 commutative: bool = False, function: str | tuple | None = None,
                 method: str | tuple = (), inplace: str | None = None,
                 functional: str | None = None, expr: str | tuple | None = None,
                 expr_args: tuple = (), expr_with: dict | None = None,
                 composite: bool = False,
                 outputs: tuple | None = None, elementwise: bool = False,
                 square: bool = False, linear: bool = False) -> None:
        self.name = name
        self.overload = overload
        self.inputs = tuple(inputs)
        self.attrs = tuple(attrs)
        self.forward = forward
        self.grads = None if grads is None else tuple(grads)
        self.saves = tuple(saves)
        self.sym = sym
        # The drawing's local derivatives are the rules printed (symgrad.ops.formula);
        # ``local`` given here overrides that where the printed rule reads worse.
        self._local = None if local is None else tuple(local)
        self.dtype = dtype
        self.broadcasts = broadcasts
        self.node_name = node or node_name(name, overload)
        self.key = key or (name if overload == 0 else f"{name}{overload}")
        self.doc = doc
        self.view = view
        self.node_class = None  # the grad_fn class, made by graph.node_class
        # How drawings show the op: the forward node's symbol and an unnamed result's
        # label, templates over the input and attribute names ("{self} + {other}",
        # "pow {exponent}", "{self}{exponent:sup}" for a superscript; no infix: a call,
        # "name(x, y)"); commutative ops label their inputs by nothing but position and
        # write a constant factor first.  See symgrad.drawing.labels.
        self.symbol = symbol if symbol is not None else name.lstrip("_")
        self.infix = infix
        self.commutative = commutative
        # The names users call it by, on every surface (the layers above generate what
        # is not written by hand): ``symgrad.<function>``, the Tensor methods (the first
        # is its name; dunders too: ``__mul__``), the in-place method, the name in
        # ``nn.functional``, and the expression language's name, to which the expression
        # language passes the tensor operands and then ``expr_args`` (softmax's dim -1).
        # A tuple gives aliases (``("asin", "arcsin")``); the first is the op's name there.
        self.functions = _names(function)
        self.function = self.functions[0] if self.functions else None
        self.methods = _names(method)
        self.inplace = inplace
        self.functional = functional
        self.exprs = _names(expr)
        self.expr = self.exprs[0] if self.exprs else None
        self.expr_args = tuple(expr_args)
        # Not given (``expr=None``), the expression language's names are the torch
        # function names of an op it can call (see ``expressible``); ``expr=()`` opts out.
        self._expr_given = expr is not None
        # Further names for the op with fixed arguments of their own (hardtanh's
        # ``relu6``: PyTorch's ``F.relu6`` is ``hardtanh(x, 0, 6)``, HardtanhBackward0).
        self.expr_with = dict(expr_with or {})
        # A composite has no kernel and no node of its own: its front end decomposes it
        # into other ops (matmul into mm, mv, dot, bmm); ``forward`` is its numpy meaning.
        self.composite = composite
        # An op whose node has several outputs (linalg_slogdet: sign, logabsdet) names
        # them; ``forward`` computes the one the rules differentiate, the last (the
        # others have no gradient, and the front end makes them).
        self.outputs = outputs
        # What the matrix algebra (symgrad.symbolic.matrix) needs to know of a function
        # lives in its side tables (symgrad.ops.tables); these arguments register it there.
        for table, flag in ((ELEMENTWISE, elementwise), (SQUARE, square), (LINEAR, linear)):
            if flag:
                table.register(True, self)
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
        # Where each saved value comes from: ("input", i), ("attr", i), ("result", k) or
        # ("derived", name) -- resolved by tensor.apply without per-op code.
        # A leading "_" keeps a saved value from the node's _saved_* attributes (PyTorch
        # shows none for CopySlices); the rest of the name says where it comes from.
        # ``result`` is the op's result; ``result<k>`` among ``outputs`` is output k of an
        # op whose forward computes each (derivatives.yaml's names: group norm saves its
        # mean and rstd, result1 and result2), derived by that name where the outputs are
        # not at hand (``derive`` knows it by the number k too).
        self.plan = tuple(_source(self, s) for s in (n.lstrip("_") for n in self.saves))
        for kind, where in self.plan:
            if kind == "result" and where and self.outputs[where] in self.derive:
                self.derive[where] = self.derive[self.outputs[where]]
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
        if not self._expr_given and self.expressible:
            self.exprs = self.functions
            self.expr = self.function
        OPS[self.key] = self
        for added, _ in _SUBSCRIBERS:
            added(self)

    @property
    def method(self) -> str | None:
        """The Tensor method's name (``None`` if the op has none)."""
        return self.methods[0] if self.methods else None

    @property
    def elementwise(self) -> bool:
        """Applied element by element (the side table ``tables.ELEMENTWISE``)."""
        return self in ELEMENTWISE

    @property
    def square(self) -> bool:
        """Defined on square matrices only (``tables.SQUARE``)."""
        return self in SQUARE

    @property
    def linear(self) -> bool:
        """Linear in its argument (``tables.LINEAR``)."""
        return self in LINEAR

    @property
    def local(self) -> tuple | None:
        """Each input's local derivative as the drawing shows it (``{name}`` fields):
        the op's own rule printed by the text backend, unless the record overrides it."""
        return self._local if self._local is not None else local_derivatives(self)

    @property
    def arity(self) -> int:
        """The number of tensor operands (``None`` for a variadic op)."""
        return None if self.variadic else len(self.inputs)

    @property
    def differentiable(self) -> bool:
        return self.grads is not None

    @property
    def expressible(self) -> bool:
        """Whether the expression language can call the op by a name: tensor operands only,
        each differentiable, every attribute fixed by ``expr_args``, a SymPy meaning, and
        no operator spelling (the language writes ``add`` as ``x + y``)."""
        return (self.sym is not None and self.infix is None and not self.variadic
                and self.grads is not None and all(g is not None for g in self.grads)
                and len(self.attrs) == len(self.expr_args))

    def describe(self) -> dict:
        """The record as ``symgrad ops`` lists it: node, operands, derivatives, and the
        names it has on each surface.

        Examples
        --------
        >>> from symgrad import ops
        >>> d = ops.MUL.describe()
        >>> d["node"], d["methods"], d["function"]
        ('MulBackward0', ['mul', '__mul__', '__rmul__'], 'mul')
        >>> d["derivative"]
        ['∂/∂self: {other}', '∂/∂other: {self}']
        """
        local = [f"∂/∂{name}: {text}" for name, text in zip(self.inputs, self.local or ())
                 if text]
        return {"op": self.key, "node": self.node_name if self.differentiable else None,
                "inputs": list(self.inputs), "attrs": list(self.attrs),
                "saves": list(self.saves), "differentiable": self.differentiable,
                "derivative": local, "function": self.function, "methods": list(self.methods),
                "inplace": self.inplace, "functional": self.functional, "expr": self.expr,
                "aliases": sorted(set(self.functions[1:] + self.exprs[1:]))}

    def __repr__(self) -> str:
        return f"<op {self.key}: {self.node_name}>"


def _source(op: "Op", name: str) -> tuple:
    """Where the saved value ``name`` comes from (an entry of ``op.plan``)."""
    if name in op.inputs:
        return ("input", op.inputs.index(name))
    if name in op.attrs:
        return ("attr", op.attrs.index(name))
    if name in RESULT_NAMES:
        return ("result", 0)
    if op.outputs and name in op.outputs and name[6:].isdigit() and name[:6] == "result":
        return ("result", op.outputs.index(name))
    return ("derived", name)


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


_PACK_ORDERS: dict = {}


def pack_order(op: "Op") -> tuple:
    """The indices of ``op.saves`` in the order PyTorch saves them (and so calls a
    ``saved_tensors_hooks`` pack hook): saved inputs by name, alphabetically, then the
    outputs (``mul`` saves ``other`` before ``self``; ``pow`` ``exponent``, ``self``,
    ``result``)."""
    order = _PACK_ORDERS.get(op.key)
    if order is None:
        names = [n.lstrip("_") for n in op.saves]
        inputs = sorted((k for k, (kind, _) in enumerate(op.plan) if kind == "input"),
                        key=lambda k: names[k])
        order = _PACK_ORDERS[op.key] = tuple(inputs) + tuple(
            k for k in range(len(names)) if k not in inputs)
    return order


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




def _simple_saves(op: "Op") -> tuple | None:
    """For an op that tensor.apply may run on its fast path (at most two inputs, no
    attributes, a dtype that follows its floating operands, not a view, differentiable, saving
    only inputs and its result): per set of inputs requiring grad (bit ``i`` for input ``i``),
    the positions of the saved values in ``(input0, input1, result, None)``, optional
    saves (see ``_optional_saves``) already dropped.  None for other ops."""
    if (op.grads is None or op.variadic or op.view or op.attrs or len(op.inputs) > 2
            or not op.dtype.fast
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
        getters.append(tuple(index))
    return tuple(getters)


# The layers above that generate a surface from the records (node classes, Tensor methods,
# module functions, the expression language's functions): told of every op, now and later.
_SUBSCRIBERS: list = []


def subscribe(added: Callable[[Op], None], removed: Callable[[Op], None] | None = None) -> None:
    """Call ``added(op)`` for every op in the table and for every op registered later,
    and ``removed(op)`` for every op :func:`unregister` takes out.

    This is how the other layers generate their surfaces from the table: an op declared
    once, even after ``import symgrad``, reaches all of them.
    """
    _SUBSCRIBERS.append((added, removed))
    for op in list(OPS.values()):
        added(op)


def unregister(op: Op) -> None:
    """Take ``op`` out of the table and out of every surface generated from it.

    Examples
    --------
    >>> import numpy as np, symgrad
    >>> from symgrad import ops
    >>> cube = ops.Op("cube", forward=lambda a: a ** 3, method="cube", function="cube",
    ...               grads=(lambda m, grad, self: grad * 3 * self * self,), saves=("self",))
    >>> symgrad.tensor([2.0]).cube()
    tensor([8.])
    >>> ops.unregister(cube)
    >>> hasattr(symgrad.Tensor, "cube"), hasattr(symgrad, "cube"), "cube" in ops.OPS
    (False, False, False)
    """
    if OPS.get(op.key) is op:
        del OPS[op.key]
        for table in TABLES:
            table.drop(op)
        for _, removed in _SUBSCRIBERS:
            if removed is not None:
                removed(op)


def op_named(key: str) -> Op:
    """The op registered under ``key`` (``"mul"``, ``"pow1"``, ...)."""
    return OPS[key]
