"""The text backend: a gradient rule printed as a formula (the drawing's local derivative).

The op table's rules are written against a backend ``m``; here its values are
:class:`Formula` texts, so running the rule for an input with ``grad = 1`` prints that
input's local derivative: ``lambda m, grad, self: grad * m.call(COS, self)`` gives
``cos({self})``.  The ``{name}`` fields are filled by the drawing with the operands'
labels and the node's saved numbers.  A saved result is the op applied to its inputs
(``exp``'s rule ``grad * result`` prints ``exp({self})``), an op the rule calls prints as
its :data:`~symgrad.ops.tables.FORMULA` template, else its symbol as a function, or its
forward run on formulas (``tanh_backward``'s ``g * (1 - y * y)``).  A condition prints as
an Iverson bracket, ``[{self} > 0]``.

No op is named here: what an op looks like as text is registered beside it.

Examples
--------
>>> from symgrad import ops
>>> local_derivatives(ops.MUL), local_derivatives(ops.SIN), local_derivatives(ops.DIV)
(('{other}', '{self}'), ('cos({self})',), ('1/{other}', '-{self}/{other}²'))
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from .tables import CHOOSES, FORMULA, Table

__all__ = ["Formula", "TEXT", "local_derivatives", "RESULT_NAMES"]

#: The names a saved output goes by (PyTorch's ``linalg_inv_ex`` saves its ``inverse``).
RESULT_NAMES = frozenset(("result", "inverse"))

# Binding strength: a sum, a leading minus, a product or quotient, a power, an atom.
_ADD, _NEG, _MUL, _POW, _ATOM = range(5)
_SUPERSCRIPTS = {2: "²", 3: "³"}


class NoFormula(Exception):
    """The rule does something a formula cannot show (indexing, Python control flow on an
    attribute's value): the op's label is its record's override, or none."""


class Formula:
    """A formula's text, how tightly it binds, and its value when it is a known number.

    Examples
    --------
    >>> x = Formula("x")
    >>> str(1 - x * x), str(2 * (x - 1)), str(-x / (x ** 2))
    ('1 - x²', '2(x - 1)', '-x/x²')
    """

    __slots__ = ("text", "prec", "number", "condition", "parts")
    __array_ufunc__ = None  # numpy hands arithmetic with arrays to the operators below

    def __init__(self, text: str, prec: int = _ATOM, number: float | None = None,
                 condition: bool = False) -> None:
        self.text = text
        self.prec = prec
        self.number = number
        self.condition = condition
        self.parts = None  # (numerator, denominator) of a quotient

    # -- making ------------------------------------------------------------------------
    @classmethod
    def name(cls, name: str) -> "Formula":
        """A field the drawing fills: ``{name}``."""
        return cls("{%s}" % name)

    @classmethod
    def of(cls, value: Any) -> "Formula":
        """A formula for a value a rule mixes in: a formula, a number or a boolean."""
        if isinstance(value, Formula):
            return value
        if isinstance(value, (bool, np.bool_)):
            return cls("1" if value else "0", number=float(value))
        if isinstance(value, (int, float, np.integer, np.floating)):
            v = float(value)
            if not np.isfinite(v):
                return cls("∞" if v > 0 else "-∞", _ATOM if v > 0 else _NEG, v)
            text = str(int(v)) if v.is_integer() else f"{v:g}"
            return cls(text, _NEG if v < 0 else _ATOM, v)
        raise NoFormula(f"a {type(value).__name__} in a formula")

    @classmethod
    def call(cls, symbol: str, *args: Any) -> "Formula":
        """``symbol(a, b)``."""
        return cls(f"{symbol}({', '.join(cls.of(a).plain() for a in args)})")

    # -- printing ----------------------------------------------------------------------
    def plain(self) -> str:
        """The text as a value: a condition in its Iverson bracket."""
        return f"[{self.text}]" if self.condition else self.text

    def bound(self, prec: int) -> str:
        """The text, in parentheses unless it binds at least as tightly as ``prec``."""
        if self.condition:
            return self.plain()
        return self.text if self.prec >= prec else f"({self.text})"

    def __str__(self) -> str:
        return self.plain()

    __repr__ = __str__

    def __bool__(self) -> bool:
        raise NoFormula("a formula's truth decided in Python")

    def __float__(self) -> float:
        if self.number is None:
            raise NoFormula("a formula as a Python number")
        return self.number

    def __eq__(self, other: Any) -> bool:  # attribute tests (``alpha == 1``)
        if self.number is not None and isinstance(other, (int, float)):
            return self.number == other
        raise NoFormula("a formula compared in Python")

    __hash__ = object.__hash__

    # -- arithmetic --------------------------------------------------------------------
    def __add__(self, other: Any) -> "Formula":
        a, b = self, Formula.of(other)
        if a.number is not None and b.number is not None:
            return Formula.of(a.number + b.number)
        if a.number == 0:
            return b
        if b.number == 0:
            return a
        if b.number is not None and a.number is None:  # a constant term goes first
            a, b = b, a
        if b.prec == _NEG and not b.condition:
            return Formula(f"{a.bound(_ADD)} - {b.text[1:]}", _ADD)
        return Formula(f"{a.bound(_ADD)} + {b.bound(_ADD)}", _ADD)

    def __radd__(self, other: Any) -> "Formula":
        return Formula.of(other) + self

    def __sub__(self, other: Any) -> "Formula":
        a, b = self, Formula.of(other)
        if a.number is not None and b.number is not None:
            return Formula.of(a.number - b.number)
        if b.number == 0:
            return a
        if a.number == 0:
            return -b
        return Formula(f"{a.bound(_ADD)} - {b.bound(_NEG)}", _ADD)

    def __rsub__(self, other: Any) -> "Formula":
        return Formula.of(other) - self

    def __neg__(self) -> "Formula":
        if self.number is not None:
            return Formula.of(-self.number)
        if self.prec == _NEG and not self.condition:
            return Formula(self.text[1:], _MUL)
        return Formula(f"-{self.bound(_MUL)}", _NEG)

    def __pos__(self) -> "Formula":
        return self

    def __mul__(self, other: Any) -> "Formula":
        a, b = self, Formula.of(other)
        if a.number is not None and b.number is not None:
            return Formula.of(a.number * b.number)
        for x, y in ((a, b), (b, a)):
            if x.number == 1:
                return y
            if x.number == 0:
                return x
            if x.number == -1:
                return -y
        if b.number is not None:  # a constant factor goes first
            a, b = b, a
        if b.parts is not None and b.parts[0].number == 1:  # x·(1/y) = x/y
            return a / b.parts[1]
        if a.prec == _NEG and not a.condition:
            return -(Formula(a.text[1:], _MUL, None if a.number is None else -a.number) * b)
        if b.prec == _NEG and not b.condition:
            return -(a * Formula(b.text[1:], _MUL))
        if a.text == b.text and not a.condition:
            return a ** 2
        left, right = a.bound(_MUL), b.bound(_MUL + 1)
        joint = "" if right.startswith("(") and not a.condition else "·"
        return Formula(f"{left}{joint}{right}", _MUL)

    def __rmul__(self, other: Any) -> "Formula":
        return Formula.of(other) * self

    # (a matrix product reads as a product in a local derivative)
    __matmul__ = __mul__
    __rmatmul__ = __rmul__

    def __truediv__(self, other: Any) -> "Formula":
        a, b = self, Formula.of(other)
        if b.number == 1:
            return a
        if a.number is not None and b.number is not None and b.number:
            return Formula.of(a.number / b.number)
        if a.prec == _NEG and not a.condition:
            return -(Formula(a.text[1:], _MUL) / b)
        if b.prec == _NEG and not b.condition:
            return -(a / Formula(b.text[1:], _MUL))
        if a.parts is not None:  # (x/y)/z = x/(y·z)
            return a.parts[0] / (a.parts[1] * b)
        out = Formula(f"{a.bound(_MUL)}/{b.bound(_POW)}", _MUL)
        out.parts = (a, b)
        return out

    def __rtruediv__(self, other: Any) -> "Formula":
        return Formula.of(other) / self

    def __pow__(self, other: Any) -> "Formula":
        p = Formula.of(other)
        if p.number == 1:
            return self
        if p.number == 0:
            return Formula.of(1)
        if p.number is not None and p.number < 0:
            return 1 / self ** -p.number
        base = self.bound(_ATOM)
        if p.number in _SUPERSCRIPTS:
            return Formula(base + _SUPERSCRIPTS[int(p.number)], _POW)
        if p.number == 0.5:
            return Formula("√" + base, _POW)
        return Formula(f"{base}^{p.bound(_ATOM)}", _POW)

    def __rpow__(self, other: Any) -> "Formula":
        return Formula.of(other) ** self

    # -- conditions --------------------------------------------------------------------
    def negated(self) -> "Formula":
        """The condition that holds where this one does not: ``x > 0`` -> ``x ≤ 0``."""
        parts = self.text.split(" ")
        if self.condition and len(parts) == 3 and parts[1] in _OPPOSITE:
            return Formula(f"{parts[0]} {_OPPOSITE[parts[1]]} {parts[2]}", condition=True)
        return Formula(f"not ({self.text})" if self.condition else f"not {self.bound(_ATOM)}",
                       condition=True)


_OPPOSITE = {"<": "≥", ">": "≤", "≤": ">", "≥": "<", "=": "≠", "≠": "="}


class _Text:
    """Gradient rules on :class:`Formula` texts: what a rule computes, printed."""

    records = False
    sums_in_place = False

    def call(self, op, *args: Any) -> Formula:
        """``op`` as text: its template, else its forward run on formulas when that is
        arithmetic, else its symbol called on the operands."""
        n = len(args) if op.variadic else len(op.inputs)
        choose = CHOOSES.get(op)
        if choose is not None:  # where, masked_fill: Iverson brackets
            return self._choose(*choose(*args))
        template = FORMULA.get(op)
        if template is not None:
            condition = _relation(template)
            fields = {}
            for k, v in zip(op.inputs + op.attrs, args):
                v = Formula.of(v)
                enclosed = condition or "({%s})" % k in template
                fields[k] = v.text if enclosed and not v.condition else v.bound(_ATOM)
            return Formula(template.format(**fields),
                           _ATOM if condition or " " not in template else _MUL,
                           condition=condition)
        if args and op.inputs[:1] == ("grad_output",) and Formula.of(args[0]).number == 1:
            # A backward op is linear in grad_output: at 1 it is its own local derivative.
            local = op.local
            if local and local[0] is not None:
                return _fill(local[0], op, args)
        if not op.elementwise or n != 1:
            try:
                with np.errstate(all="ignore"):
                    out = op.forward(*(Formula.of(a) if k < n else a
                                       for k, a in enumerate(args)))
            except Exception:  # noqa: BLE001 - a forward that is not arithmetic
                out = None
            if isinstance(out, Formula):
                return out
        return Formula.call(op.symbol, *args[:n])

    @staticmethod
    def _choose(cond: Any, a: Any, b: Any) -> Formula:
        cond, a, b = Formula.of(cond), Formula.of(a), Formula.of(b)
        if not cond.condition:
            cond = Formula(cond.text, condition=True)
        if b.number == 0:
            return a * cond
        if a.number == 0:
            return b * cond.negated()
        return a * cond + b * cond.negated()

    def mul_scalar(self, a: Any, c: Any) -> Formula:
        return Formula.of(a) * c

    def add_scalar(self, a: Any, c: Any) -> Formula:
        return Formula.of(a) + c

    def sub_scalar(self, a: Any, c: Any) -> Formula:
        return Formula.of(a) - c

    def div_scalar(self, a: Any, c: Any) -> Formula:
        return Formula.of(a) / c

    def zeros_like(self, a: Any) -> Formula:
        return Formula.of(0)

    def sum_to(self, g: Any, shape: Any) -> Formula:
        return Formula.of(g)  # un-broadcasting does not change a local derivative

    def broadcast_to(self, g: Any, shape: Any) -> Formula:
        return Formula.of(g)

    def cast(self, a: Any, d: Any) -> Formula:
        return Formula.of(a)

    def shape(self, a: Any) -> Formula:
        raise NoFormula("a shape")

    # Indexing, scattering, reshaping: no formula; the op's record says what it shows.
    def reshape(self, a: Any, shape: Any) -> Formula:
        raise NoFormula("a reshape")

    def new_zeros(self, like: Any, shape: Any) -> Formula:
        raise NoFormula("new zeros")

    def first_true(self, mask: Any, dim: int) -> Formula:
        raise NoFormula("the first maximum")

    def value_selecting_backward(self, *args: Any) -> Formula:
        raise NoFormula("a scatter")

    def set_at(self, a: Any, index: Any, value: Any) -> Formula:
        raise NoFormula("a scatter")

    # (no engine pass runs on text)
    def saved(self, s: Any) -> Any:
        return s

    def unwrap(self, t: Any) -> Any:
        return t

    def conform(self, gi: Any, meta: tuple) -> Any:
        return gi

    def accumulate(self, var: Any, g: Any, owned: bool = False) -> None:
        raise NoFormula("a leaf's gradient")

    def retain(self, var: Any, g: Any) -> None:
        raise NoFormula("a retained gradient")


def _fill(template: str, op, args) -> Formula:
    """A local-derivative template of ``op`` with its fields given by ``args``."""
    values = dict(zip(op.inputs + op.attrs, args))

    def field(m) -> str:
        v = values.get(m.group(1))
        if v is None:
            return m.group(1)
        v = Formula.of(v)
        enclosed = m.string[m.start() - 1:m.start()] in ("(", "[", "")
        return v.text if enclosed and v.prec >= _MUL else v.bound(_ATOM)
    text = re.sub(r"\{(\w+)\}", field, template)
    return Formula(text, _ATOM if text.startswith("[") and text.endswith("]")
                   and text.count("[") == 1 else _ADD)


def _relation(template: str) -> bool:
    return any(f" {r} " in template for r in ("<", ">", "≤", "≥", "=", "≠", "and", "or"))


TEXT = _Text()

#: Local derivatives computed from the rules, per op (dropped when the op is).
_LOCAL = Table("local derivatives, printed")


def result_formula(op) -> Formula:
    """The op applied to its inputs' fields: ``exp({self})``."""
    return TEXT.call(op, *(Formula.name(n) for n in op.inputs + op.attrs))


def local_derivatives(op) -> tuple | None:
    """Each input's local derivative as text (``None`` where a rule cannot be printed),
    from the op's own rules run on :data:`TEXT` with ``grad = 1``."""
    done = _LOCAL.get(op)
    if done is not None:
        return done or None
    if op.grads is None or op.variadic:
        return None
    _LOCAL.register((), op)  # (a rule calling its own op reads no label of it meanwhile)
    saved = []
    for name in op.saves:
        name = name.lstrip("_")
        saved.append(result_formula(op) if name in RESULT_NAMES and name not in op.inputs
                     else Formula.name(name))
    texts = []
    for rule in op.grads:
        if rule is None or getattr(rule, "not_implemented", None):
            texts.append(None)
            continue
        try:
            with np.errstate(all="ignore"):
                texts.append(Formula.of(rule(TEXT, Formula.of(1), *saved)).plain())
        except Exception:  # noqa: BLE001 - NoFormula, or a rule computing on numbers
            texts.append(None)
    done = tuple(texts)
    _LOCAL.register(done, op)
    return done
