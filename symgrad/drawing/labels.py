"""What a drawing writes for an op: its symbol, an unnamed result's expression, a local
derivative -- all filled in from the op record's templates, with no per-op code.

The templates are fields of :class:`symgrad.ops.Op`:

* ``symbol`` -- the forward node's text, over attribute names (``"pow {exponent}"``);
* ``infix`` -- how an unnamed result is written, over input and attribute names
  (``"{self} + {other}"``); ``{name:sup}`` writes the value as a superscript
  (``"{self}{exponent:sup}"`` gives ``x²``).  Without one the result reads as a call,
  ``name(x, y)``;
* ``local`` -- the local derivative per input (``"{exponent}·{self}^({exponent}-1)"``);
  a name that is neither an input nor an attribute is read from the node's ``_saved_*``
  values (mean's ``"1/{self_sym_numel}"``);
* ``commutative`` -- the inputs need no names on forward edges, and in a product
  (an infix template ``{a}<operator>{b}`` whose operator is not spaced) a constant
  operand goes first: ``5·x²``, not ``x²·5``.

Precedence has two levels: a template whose operator is spaced (``" + "``) binds loosely
and takes tight operands (``w·x``, ``x²``) without brackets; any other template takes
bare operands only if they are atomic (``x``, ``2.5``, ``sin(y)``).

Examples
--------
>>> import symgrad as torch
>>> from symgrad.drawing.model import GraphModel
>>> w = torch.tensor(2.0, requires_grad=True, name="w")
>>> x = torch.tensor(3.0, requires_grad=True, name="x")
>>> model = GraphModel([(w * x + 1) ** 2 * 5])
>>> label_of(model, model.items[0]), label_of(model, model.items[1])
('5·(w·x + 1)²', '(w·x + 1)²')
>>> op_symbol(model.items[1])
'pow 2'
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from .model import Edge, GraphModel, Item
from .values import as_array, format_value

__all__ = ["op_symbol", "label_of", "operand_text", "local_derivative", "atomic"]

_SUPERSCRIPT = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")
_FIELD = re.compile(r"\{(\w+)(?::(\w+))?\}")
_LONGEST = 24  # longer expressions are drawn as "…"


def _attr_values(item: Item) -> dict[str, str]:
    op = item.op
    return {name: format_value(v) if isinstance(v, (int, float)) else str(v)
            for name, v in zip(op.attrs, item.attrs)}


def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{name}`` replaced (``{name:sup}``: as a superscript)."""
    def field(m: re.Match) -> str:
        text = values.get(m.group(1), m.group(1))
        return text.translate(_SUPERSCRIPT) if m.group(2) == "sup" else text
    return _FIELD.sub(field, template)


def _loose(template: str) -> bool:
    """True when the template's operator is spaced (``{a} + {b}``): it binds loosely."""
    return any(re.fullmatch(r"\s+\S+\s+", text) for text in _FIELD.split(template)[::3])


def _binary(template: str) -> bool:
    """True for ``{a}<operator>{b}``: two operands and nothing around them."""
    texts = _FIELD.split(template)[::3]
    return len(texts) == 3 and texts[0] == texts[2] == ""


def _tight(text: str) -> bool:
    """True for text that a loose operator needs not bracket: ``w·x``, not ``a + b``."""
    return " " not in text and not text.startswith("−")


def op_symbol(item: Item) -> str:
    """The forward node's text: the op's ``symbol`` with its attributes filled in."""
    op = item.op
    if op is None:
        return re.sub(r"Backward\d*$", "", item.title)
    return _fill(op.symbol, _attr_values(item))


def label_of(model: GraphModel, item: Item | None, const: Any = None, depth: int = 0) -> str:
    """A short name for an operand: its name, its value, or its expression."""
    if item is None:
        if isinstance(const, (int, float)):
            return format_value(const)
        n = model.tensor_name(const)
        if n:
            return n
        a = as_array(const)
        return format_value(a) if a is not None and a.size <= 3 else "c"
    if item.kind == "accumulate":
        return item.name or "leaf"
    if item.name:
        return item.name
    op = item.op
    if op is None or depth > 3:
        return "…"
    parts = [label_of(model, e.target, e.const, depth + 1) for e in item.edges]
    if op.infix is None or op.variadic or len(parts) != len(op.inputs):
        text = f"{op.name.lstrip('_')}({', '.join(parts)})"
        return text if len(text) <= _LONGEST else "…"
    loose = _loose(op.infix)
    parts = [p if atomic(p) or (loose and _tight(p)) else f"({p})" for p in parts]
    if (op.commutative and not loose and _binary(op.infix) and item.edges[1].target is None
            and item.edges[0].target is not None):
        parts.reverse()  # a constant factor goes first: "5·x²" reads better than "x²·5"
    values = _attr_values(item)
    values.update(zip(op.inputs, parts))
    text = _fill(op.infix, values)
    return text if len(text) <= _LONGEST else "…"


def operand_text(model: GraphModel, item: Item | None, const: Any = None) -> str:
    """``label_of``, parenthesised unless it is a single symbol or call."""
    text = label_of(model, item, const)
    return text if atomic(text) else f"({text})"


def local_derivative(model: GraphModel, item: Item, edge: Edge) -> str | None:
    """The op's local derivative for ``edge``, with the actual operand names."""
    op = item.op
    if op is None or not op.local:
        return None
    text = op.local[0 if op.variadic else edge.slot] if (
        op.variadic or edge.slot < len(op.local)) else None
    if text is None:
        return None
    subs = {}
    if not op.variadic:
        for e in item.edges:
            if e.slot < len(op.inputs):
                subs[op.inputs[e.slot]] = label_of(model, e.target, e.const)
    subs.update(_attr_values(item))

    def sub(m: re.Match) -> str:
        v = subs.get(m.group(1))
        if v is None:
            v = _saved_number(item, m.group(1), model.sizes)
        enclosed = (m.string[m.start() - 1:m.start()] == "("
                    and m.string[m.end():m.end() + 1] == ")")
        return v if enclosed or atomic(v) else f"({v})"

    text = re.sub(r"\{(\w+)\}", sub, text)

    def fold(m: re.Match) -> str:
        return format_value(float(m.group(1)) - 1)

    text = re.sub(r"\((-?\d+(?:\.\d+)?)-1\)", fold, text)
    text = re.sub(r"\^1(?![\d.])", "", text)
    return re.sub(r"^1·|(?<=[\s(])1·", "", text)


def _saved_number(item: Item, name: str, sizes: Mapping | None = None) -> str:
    """The node's saved number ``name`` (``_saved_self_sym_numel``), else the name; a
    count of elements over named sizes is their product (``n``, not the traced 2)."""
    try:
        value = getattr(item.fn, "_saved_" + name)
    except (AttributeError, RuntimeError):
        return name
    if sizes and name.endswith("_numel"):
        shape = getattr(item.fn, "_saved_" + name[:-len("numel")] + "sizes", None)
        if shape is not None and all(int(n) in sizes or int(n) == 1 for n in shape):
            return "·".join(sizes[int(n)] for n in shape if int(n) != 1) or "1"
    return format_value(value) if isinstance(value, (int, float)) else name


def atomic(text: str) -> bool:
    """True for ``x``, ``x²``, ``2.5``, ``sin(y)``: text that needs no parentheses.

    Examples
    --------
    >>> atomic("x²"), atomic("sin(a + b)"), atomic("(a + b)²"), atomic("w·x"), atomic("(a)(b)")
    (True, True, True, False, False)
    """
    if re.fullmatch(r"[\w.⁰¹²³⁴⁵⁶⁷⁸⁹⁻·]*[\w.⁰¹²³⁴⁵⁶⁷⁸⁹⁻]", text) and "·" not in text:
        return True
    if re.fullmatch(r"\[[^\[\]]*\]", text):
        return True
    # A call, or one bracketed group raised to a power: sin(a + b), (a + b)².
    m = re.fullmatch(r"\w+\((.*)\)|\((.*)\)[⁰¹²³⁴⁵⁶⁷⁸⁹⁻·]*", text)
    if m:
        depth = 0
        for ch in m.group(1) if m.group(1) is not None else m.group(2):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                return False
        return depth == 0
    return text.startswith("⟨") and text.endswith("⟩") and text.count("⟨") == 1
