"""DOT text for forward and backward graphs: the renderer of the graph IR.

The renderer reads only the public IR -- a ``grad_fn``'s ``inputs`` / ``next_functions``,
``attrs``, ``_saved_*`` values and its op-table record (``op.inputs``, ``op.local``) --
and the leaves' ``.grad``.  Real PyTorch graphs are drawn through the same path: only
``name()``-level information (``next_functions``, ``variable``, ``_saved_*``) is used
for them.  Nothing here runs Graphviz; :mod:`symgrad.draw` does that.

Layout convention: every kind of drawing places inputs on one side and the output on the
other (``rankdir`` decides which; left to right by default), so a forward and a backward
drawing of the same computation line up.  Backward edges are drawn from each node to its
``next_functions`` with the arrowhead pointing the way the gradient travels.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.drawing import render
>>> x = torch.tensor(4.0, requires_grad=True, name="x")
>>> f = 5 * x ** 2
>>> src = render.backward_graph(f, names={"f": f}, legend=False)
>>> "MulBackward0" in src and "PowBackward0" in src and "AccumulateGrad" in src
True
"""
from __future__ import annotations

import html
import math
import re
from typing import Any, Iterable, Mapping

import numpy as np

__all__ = ["THEMES", "Theme", "backward_graph", "forward_graph", "both_graph",
           "torchviz_graph", "GraphModel", "format_value"]


# --------------------------------------------------------------------------- themes
class Theme:
    """Colours and fonts of one drawing style, keyed by node kind."""

    def __init__(self, name: str, *, bg: str, fg: str, edge: str, grad: str, muted: str,
                 kinds: dict[str, tuple[str, str, str]], orders: tuple[str, ...],
                 highlight: str, font: str = "Helvetica,Arial,sans-serif") -> None:
        self.name = name
        self.bg = bg
        self.fg = fg
        self.edge = edge
        self.grad = grad
        self.muted = muted
        self.kinds = kinds  # kind -> (fill, border, style)
        self.orders = orders  # border colour per derivative order
        self.highlight = highlight
        self.font = font


_KIND_TEXT = {
    "output": "output tensor",
    "leaf": "leaf tensor (requires_grad)",
    "tensor": "intermediate tensor",
    "const": "constant (no grad)",
    "fwd_op": "operation (oval)",
    "op": "backward node (grad_fn)",
    "accumulate": "AccumulateGrad (stores .grad)",
    "saved": "tensor saved for backward",
    "collapsed": "many nodes drawn as one (large graph)",
}

THEMES: dict[str, Theme] = {
    "light": Theme(
        "light", bg="white", fg="#1a1a1a", edge="#4d4d4d", grad="#b03a2e", muted="#8c8c8c",
        highlight="#d62728",
        kinds={"output": ("#d9ead3", "#38761d", "filled,rounded"),
               "leaf": ("#cfe2f3", "#1f5f99", "filled,rounded"),
               "tensor": ("#ffffff", "#4d4d4d", "filled,rounded"),
               "const": ("#f7f7f7", "#8c8c8c", "filled,dashed"),
               "fwd_op": ("#fff2cc", "#9c7a00", "filled"),
               "op": ("#eeeeee", "#4d4d4d", "filled,rounded"),
               "accumulate": ("#d9d9d9", "#4d4d4d", "filled"),
               "saved": ("#fce5cd", "#c55a11", "filled,rounded"),
               "collapsed": ("#eeeeee", "#4d4d4d", "filled,rounded,dashed")},
        orders=("#4d4d4d", "#7b3294", "#008837", "#e66101")),
    "dark": Theme(
        "dark", bg="#1e1e1e", fg="#eeeeee", edge="#bdbdbd", grad="#ff8a80", muted="#9e9e9e",
        highlight="#ffd54f",
        kinds={"output": ("#274e13", "#b6d7a8", "filled,rounded"),
               "leaf": ("#1c4587", "#9fc5e8", "filled,rounded"),
               "tensor": ("#2b2b2b", "#bdbdbd", "filled,rounded"),
               "const": ("#1e1e1e", "#9e9e9e", "filled,dashed"),
               "fwd_op": ("#5c4a00", "#ffe599", "filled"),
               "op": ("#383838", "#bdbdbd", "filled,rounded"),
               "accumulate": ("#4a4a4a", "#bdbdbd", "filled"),
               "saved": ("#783f04", "#f9cb9c", "filled,rounded"),
               "collapsed": ("#383838", "#bdbdbd", "filled,rounded,dashed")},
        orders=("#bdbdbd", "#c39bd3", "#7dcea0", "#f5b041")),
    # Greyscale: kinds differ by shade *and* border style, so photocopies stay readable.
    "print": Theme(
        "print", bg="white", fg="black", edge="black", grad="black", muted="#595959",
        highlight="black",
        kinds={"output": ("#bfbfbf", "black", "filled,rounded,bold"),
               "leaf": ("#e0e0e0", "black", "filled,rounded,bold"),
               "tensor": ("white", "black", "filled,rounded"),
               "const": ("white", "#595959", "filled,dashed"),
               "fwd_op": ("#f0f0f0", "black", "filled"),
               "op": ("white", "black", "filled,rounded,bold"),
               "accumulate": ("#d9d9d9", "black", "filled"),
               "saved": ("white", "black", "filled,rounded,dotted"),
               "collapsed": ("white", "black", "filled,rounded,dashed")},
        orders=("black", "#404040", "#707070", "#a0a0a0")),
    # Okabe-Ito palette: distinguishable under the common colour-vision deficiencies.
    "colorblind": Theme(
        "colorblind", bg="white", fg="#000000", edge="#333333", grad="#d55e00",
        muted="#7f7f7f", highlight="#d55e00",
        kinds={"output": ("#fbe6bf", "#e69f00", "filled,rounded"),
               "leaf": ("#cce3f3", "#0072b2", "filled,rounded"),
               "tensor": ("#ffffff", "#333333", "filled,rounded"),
               "const": ("#f7f7f7", "#7f7f7f", "filled,dashed"),
               "fwd_op": ("#f8f4c6", "#8a7f00", "filled"),
               "op": ("#eeeeee", "#333333", "filled,rounded"),
               "accumulate": ("#d9d9d9", "#333333", "filled"),
               "saved": ("#f2d9e7", "#cc79a7", "filled,rounded"),
               "collapsed": ("#eeeeee", "#333333", "filled,rounded,dashed")},
        orders=("#333333", "#d55e00", "#009e73", "#cc79a7")),
}
THEMES["colourblind"] = THEMES["colour-blind"] = THEMES["color-blind"] = THEMES["colorblind"]
THEMES["greyscale"] = THEMES["grayscale"] = THEMES["print"]

# How a forward drawing shows each op (drawing concern only: the maths is in ops.py).
_SYMBOL = {"add": "+", "sub": "−", "rsub": "−", "mul": "×", "div": "÷", "neg": "−",
           "pow": "pow", "matmul": "@", "mm": "@", "mv": "@", "bmm": "@", "dot": "dot",
           "_softmax": "softmax", "_log_softmax": "log_softmax",
           "linalg_vector_norm": "norm", "_to_copy": "to", "_unsafe_view": "view"}
# How an unnamed intermediate is written in labels: {0}, {1} are its inputs.
_EXPR = {"add": "{0} + {1}", "sub": "{0} − {1}", "mul": "{0}·{1}", "div": "{0}/{1}",
         "neg": "−{0}", "dot": "⟨{0}, {1}⟩", "mm": "{0} {1}", "mv": "{0} {1}"}
_COMMUTATIVE = {"add", "mul", "dot", "maximum", "minimum"}
_SUPERSCRIPT = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


# --------------------------------------------------------------------------- values
def format_value(value: Any, precision: int = 4, max_items: int = 12) -> str:
    """Short text for a tensor value in a drawing (numbers to ``precision`` digits).

    Examples
    --------
    >>> format_value(40.0)
    '40'
    >>> format_value([[1.25, 1.25], [1.25, 1.25]])
    '[[1.25, 1.25],\\n [1.25, 1.25]]'
    >>> format_value(np.arange(100.0))
    '[0, 1, …, 98, 99]'
    >>> format_value(np.sin(11.0)), format_value(0.99996)
    ('-0.99999', '0.99996')
    """
    a = _as_array(value)
    if a is None:
        return "?"

    def num(v) -> str:
        if a.dtype == bool:
            return str(bool(v))
        if isinstance(v, (np.integer, int)):
            return str(int(v))
        v = float(v)
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        text = f"{v:.{precision}g}"
        # sin(11) = -0.99999 must not read as an exact "-1": more digits until it shows.
        for more in range(precision + 1, 11):
            if "." in text or "e" in text:
                break
            text = f"{v:.{more}g}"
        return text

    if a.ndim == 0:
        return num(a.item())
    if a.size > max_items:
        flat = a.reshape(-1)
        return f"[{num(flat[0])}, {num(flat[1])}, …, {num(flat[-2])}, {num(flat[-1])}]"
    if a.ndim == 1:
        return "[" + ", ".join(num(v) for v in a) + "]"
    if a.ndim == 2:
        rows = ["[" + ", ".join(num(v) for v in row) + "]" for row in a]
        return "[" + ",\n ".join(rows) + "]"
    return "[" + ", ".join(num(v) for v in a.reshape(-1)) + "]"


def _as_array(value: Any):
    if value is None:
        return None
    if isinstance(value, (int, float, bool, np.generic, np.ndarray, list, tuple)):
        try:
            return np.asarray(value)
        except Exception:  # noqa: BLE001 - ragged lists have no display value
            return None
    for attr in ("detach",):
        if hasattr(value, attr):
            try:
                return np.asarray(value.detach().cpu().numpy() if hasattr(value, "cpu")
                                  else value.detach().numpy())
            except Exception:  # noqa: BLE001
                return None
    return None


def _shape_text(shape) -> str:
    shape = tuple(int(n) for n in shape)
    if not shape:
        return "scalar"
    inner = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
    return f"shape ({inner})"


def _dtype_text(t) -> str:
    d = getattr(t, "dtype", None)
    return "" if d is None else str(d).replace("torch.", "")


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _multiline(text: str) -> str:
    """HTML-label text with line breaks (left-aligned continuation lines)."""
    return '<BR ALIGN="LEFT"/>'.join(_esc(line) for line in str(text).split("\n"))


# --------------------------------------------------------------------------- the model
class Item:
    """One backward node of the drawing (a ``grad_fn`` or an ``AccumulateGrad``)."""

    __slots__ = ("key", "fn", "title", "kind", "edges", "order", "name", "value",
                 "variable", "op", "attrs", "count", "tensor", "summary")

    def __init__(self, key: str, fn: Any) -> None:
        self.key = key
        self.fn = fn
        self.title = type(fn).__name__
        self.kind = "accumulate" if self.title == "AccumulateGrad" else "op"
        self.edges: list[Edge] = []
        self.order = 0
        self.name: str | None = None
        self.value = None
        self.variable = getattr(fn, "variable", None) if self.kind == "accumulate" else None
        op = getattr(type(fn), "op", None)
        self.op = op if op is not None and hasattr(op, "inputs") else None
        self.attrs = tuple(getattr(fn, "attrs", ()) or ())
        self.count = 1          # > 1 for a collapsed chain
        self.summary: str | None = None  # what a collapsed node stands for
        self.tensor = None      # the user's tensor whose grad_fn this is, if known


class Edge:
    """One operand of an op: ``slot`` is its position in the op's inputs."""

    __slots__ = ("slot", "input_name", "target", "const", "differentiable", "output_nr")

    def __init__(self, slot: int, input_name: str | None, target: Item | None, const: Any,
                 differentiable: bool) -> None:
        self.output_nr = 0  # which output of ``target`` (multi-output nodes)
        self.slot = slot
        self.input_name = input_name
        self.target = target
        self.const = const
        self.differentiable = differentiable


def _is_symgrad_node(fn: Any) -> bool:
    from ..ir.node import Node
    return isinstance(fn, Node)


class GraphModel:
    """The graph reachable from some output tensors, read through the public IR.

    Parameters
    ----------
    roots : sequence of tensors
        Outputs to draw; with several, node ``order`` is the index of the first root whose
        graph contains the node (derivative order for ``[f, df, d2f]``).
    names : mapping of str to tensor, optional
        Names for tensors (leaves, intermediates, outputs).  Leaves also use ``.name``.
    """

    def __init__(self, roots: Iterable, names: Mapping[str, Any] | None = None) -> None:
        self.roots = list(roots)
        self.items: list[Item] = []
        self.by_fn: dict[int, Item] = {}
        self.root_items: list[Item | None] = []
        self.leaf_only: list[Any] = []
        name_of_tensor: dict[int, str] = {}
        fn_tensor: dict[int, tuple[str, Any]] = {}
        for n, t in (names or {}).items():
            name_of_tensor.setdefault(id(t), n)
            fn = getattr(t, "grad_fn", None)
            if fn is not None:
                fn_tensor.setdefault(id(fn), (n, t))
        self.name_of_tensor = name_of_tensor
        for order, t in enumerate(self.roots):
            fn = getattr(t, "grad_fn", None)
            if fn is None:
                self.root_items.append(None)
                self.leaf_only.append(t)
                continue
            self.root_items.append(self._walk(fn, order))
            if id(fn) not in fn_tensor:
                fn_tensor[id(fn)] = (name_of_tensor.get(id(t)), t)
        for item in self.items:
            if item.kind == "accumulate":
                item.name = self.tensor_name(item.variable)
            elif id(item.fn) in fn_tensor:
                item.name, item.tensor = fn_tensor[id(item.fn)]
        self._values_done = False

    # -- structure ---------------------------------------------------------------------
    def _walk(self, root_fn: Any, order: int) -> Item:
        """Breadth-first from ``root_fn`` (iterative: graphs can be deep)."""
        queue = [root_fn]
        head = 0
        if id(root_fn) not in self.by_fn:
            self._add(root_fn, order)
        while head < len(queue):
            fn = queue[head]
            head += 1
            item = self.by_fn[id(fn)]
            if item.edges:
                continue
            for edge in self._operands(fn):
                item.edges.append(edge)
                child = edge.target
                if child is None:
                    continue
                if id(child) not in self.by_fn:
                    self._add(child, order)
                    queue.append(child)
                edge.target = self.by_fn[id(child)]
        return self.by_fn[id(root_fn)]

    def _add(self, fn: Any, order: int) -> Item:
        item = Item(f"n{len(self.items)}", fn)
        item.order = order
        self.items.append(item)
        self.by_fn[id(fn)] = item
        return item

    def _operands(self, fn: Any) -> list:
        """``Edge`` objects whose ``target`` is still the raw child ``grad_fn``."""
        out = []
        op = getattr(type(fn), "op", None)
        inputs = getattr(fn, "inputs", None) if _is_symgrad_node(fn) else None
        if inputs is not None and op is not None and hasattr(op, "inputs"):
            from ..ir.node import Node
            grads = op.grads or ()
            for i, x in enumerate(inputs):
                if op.variadic:
                    # next_functions lists every input of a variadic node.
                    input_name = f"tensors[{i}]"
                    rule = True
                else:
                    input_name = op.inputs[i] if i < len(op.inputs) else f"input{i}"
                    rule = grads[i] if i < len(grads) else True
                if isinstance(x, Node):
                    out.append(Edge(i, input_name, x, None, rule is not None))
                else:
                    out.append(Edge(i, input_name, None, x, rule is not None))
            # Which output of a multi-output node each edge takes: from next_functions.
            live = [e for e in out if e.differentiable]
            pairs = tuple(getattr(fn, "next_functions", ()) or ())
            if len(pairs) == len(live):
                for e, pair in zip(live, pairs):
                    e.output_nr = int(pair[1]) if len(pair) > 1 else 0
            return out
        for i, pair in enumerate(getattr(fn, "next_functions", ()) or ()):
            child = pair[0] if pair else None
            edge = Edge(i, None, child, None, True)
            edge.output_nr = int(pair[1]) if len(pair) > 1 else 0
            out.append(edge)
        return out

    def backward_edges(self, item: Item) -> list:
        """Edges as ``next_functions`` lists them (inputs without a gradient rule skipped)."""
        return [e for e in item.edges if e.differentiable]

    # -- names and values --------------------------------------------------------------
    def tensor_name(self, t: Any) -> str | None:
        if t is None:
            return None
        n = self.name_of_tensor.get(id(t))
        if n is None:
            n = getattr(t, "name", None)
            if not isinstance(n, str):
                n = None
        return n

    def compute_values(self) -> None:
        """Forward values of every node, recomputed from the op table (symgrad graphs)."""
        if self._values_done:
            return
        self._values_done = True
        # Children before parents: reverse of the breadth-first order is not enough for
        # DAGs, so do an explicit post-order.
        done: set[int] = set()
        for root in self.items:
            stack = [(root, False)]
            while stack:
                item, expanded = stack.pop()
                if id(item) in done:
                    continue
                if not expanded:
                    stack.append((item, True))
                    for e in item.edges:
                        if e.target is not None and id(e.target) not in done:
                            stack.append((e.target, False))
                    continue
                done.add(id(item))
                item.value = self._value(item)

    def _value(self, item: Item):
        if item.tensor is not None:
            return _as_array(item.tensor)
        if item.kind == "accumulate":
            return _as_array(item.variable)
        op = item.op
        if op is None or op.forward is None or not _is_symgrad_node(item.fn):
            return None
        args = []
        for e in item.edges:
            if e.target is not None:
                if e.target.value is None:
                    return None
                args.append(e.target.value)
            else:
                args.append(_as_array(e.const) if not isinstance(e.const, (int, float))
                            else e.const)
        try:
            with np.errstate(all="ignore"):
                return np.asarray(op.forward(*args, *item.attrs))
        except Exception:  # noqa: BLE001 - a value we cannot recompute is not drawn
            return None

    def label_of(self, item: Item | None, const: Any = None, depth: int = 0) -> str:
        """A short name for an operand: its name, its value, or its expression."""
        if item is None:
            if isinstance(const, (int, float)):
                return format_value(const)
            n = self.tensor_name(const)
            if n:
                return n
            a = _as_array(const)
            return format_value(a) if a is not None and a.size <= 3 else "c"
        if item.kind == "accumulate":
            return item.name or "leaf"
        if item.name:
            return item.name
        op = item.op
        if op is None or depth > 3:
            return "…"
        parts = [self.label_of(e.target, e.const, depth + 1) for e in item.edges]
        # A product or power inside a sum needs no brackets: "w·x + b", not "(w·x) + b".
        parts = [p if len(parts) == 1 or _atomic(p) or (
            op.name in ("add", "sub") and " " not in p and not p.startswith("−"))
            else f"({p})" for p in parts]
        if op.name == "mul" and len(item.edges) == 2 and item.edges[1].target is None:
            parts.reverse()  # "5·x²" reads better than "x²·5"
        if op.name == "pow" and op.attrs == ("exponent",) and item.attrs:
            text = f"{parts[0]}{format_value(item.attrs[0]).translate(_SUPERSCRIPT)}"
        elif op.name == "rsub" and item.attrs:
            text = f"{format_value(item.attrs[0])} − {parts[0]}"
        elif op.name == "mul" and op.attrs == ("other",) and item.attrs:
            text = f"{format_value(item.attrs[0])}·{parts[0]}"
        elif op.name in _EXPR and len(parts) == _EXPR[op.name].count("{"):
            text = _EXPR[op.name].format(*parts)
        else:
            text = f"{op.name.lstrip('_')}({', '.join(parts)})"
        return text if len(text) <= 24 else "…"

    def operand_text(self, item: Item | None, const: Any = None) -> str:
        """``label_of``, parenthesised unless it is a single symbol or call."""
        text = self.label_of(item, const)
        return text if _atomic(text) else f"({text})"

    def local_derivative(self, item: Item, edge: Edge) -> str | None:
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
                    subs[op.inputs[e.slot]] = self.label_of(e.target, e.const)
        for name, value in zip(op.attrs, item.attrs):
            subs[name] = format_value(value) if isinstance(value, (int, float)) else str(value)

        def sub(m: re.Match) -> str:
            v = subs.get(m.group(1), m.group(1))
            enclosed = (m.string[m.start() - 1:m.start()] == "("
                        and m.string[m.end():m.end() + 1] == ")")
            return v if enclosed or _atomic(v) else f"({v})"

        text = re.sub(r"\{(\w+)\}", sub, text)
        meta = getattr(item.fn, "_meta", None)
        if text == "1/n" and op.name == "mean" and not item.attrs and meta:
            text = f"1/{int(np.prod(meta[0][0]))}"  # n: the number of averaged elements

        def fold(m: re.Match) -> str:
            v = float(m.group(1)) - 1
            return format_value(v)

        text = re.sub(r"\((-?\d+(?:\.\d+)?)-1\)", fold, text)
        text = re.sub(r"\^1(?![\d.])", "", text)
        return re.sub(r"^1·|(?<=[\s(])1·", "", text)

    def saved_values(self, item: Item) -> list:
        """``(name, value)`` for each ``_saved_*`` attribute; value ``None`` once freed."""
        fn = item.fn
        if item.kind == "accumulate":
            return []
        if item.op is not None and _is_symgrad_node(fn):
            names = [s for s in item.op.saves if s not in ("ctx", "cls")]
        else:
            names = [a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_")]
        out = []
        for n in names:
            try:
                out.append((n, getattr(fn, "_saved_" + n)))
            except RuntimeError:
                out.append((n, _FREED))
            except AttributeError:
                continue
        return out


def _atomic(text: str) -> bool:
    """True for ``x``, ``x²``, ``2.5``, ``sin(y)``: text that needs no parentheses."""
    if re.fullmatch(r"[\w.⁰¹²³⁴⁵⁶⁷⁸⁹⁻·]*[\w.⁰¹²³⁴⁵⁶⁷⁸⁹⁻]", text) and "·" not in text:
        return True
    if re.fullmatch(r"\[[^\[\]]*\]", text):
        return True
    m = re.fullmatch(r"\w+\((.*)\)", text)
    if m:
        depth = 0
        for ch in m.group(1):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                return False
        return depth == 0
    return text.startswith("⟨") and text.endswith("⟩") and text.count("⟨") == 1


class _Freed:
    def __repr__(self) -> str:
        return "freed"


_FREED = _Freed()


# --------------------------------------------------------------------------- DOT pieces
class _Dot:
    """Accumulates DOT statements (plain text: ``.source`` needs no Graphviz)."""

    def __init__(self, theme: Theme, rankdir: str, title: str | None, fontsize: int) -> None:
        self.theme = theme
        self.lines: list[str] = []
        self.kinds_used: list[str] = []
        self.orders_used: set[int] = set()
        self.rankdir = rankdir
        self.title = title
        self.fontsize = fontsize
        self.edge_kinds: list[str] = []
        self.grad_text = ""
        self.notes: dict[str, str] = {}
        self.highlight_used = False

    def use(self, kind: str) -> None:
        if kind not in self.kinds_used:
            self.kinds_used.append(kind)

    def node(self, key: str, kind: str, rows: list, *, tooltip: str, order: int | None = None,
             highlight: bool = False, faded: bool = False, shape: str = "box",
             indent: str = "  ") -> None:
        """``rows``: list of (text, style) with style 'title', 'body', 'small'."""
        t = self.theme
        self.use(kind)
        fill, border, style = t.kinds[kind]
        penwidth = 1.2
        if order is not None and order > 0:
            border = t.orders[min(order, len(t.orders) - 1)]
            penwidth = 2.4
            self.orders_used.add(order)
        elif order == 0:
            self.orders_used.add(0)
        fontcolor = t.fg
        if highlight:
            border, penwidth = t.highlight, 3.5
            self.highlight_used = True
        if faded:
            fontcolor = t.muted
            border = t.muted
        cells = []
        for text, kind_of_row in rows:
            if kind_of_row == "title":
                cells.append(f"<TR><TD><B>{_multiline(text)}</B></TD></TR>")
            elif kind_of_row == "small":
                cells.append(f'<TR><TD><FONT POINT-SIZE="{self.fontsize - 2}">'
                             f"{_multiline(text)}</FONT></TD></TR>")
            elif kind_of_row == "grad":
                self.grad_text = self.grad_text or "leaf: accumulated .grad"
                cells.append(f'<TR><TD><FONT COLOR="{t.grad}">{_multiline(text)}'
                             "</FONT></TD></TR>")
            else:
                cells.append(f"<TR><TD>{_multiline(text)}</TD></TR>")
        label = ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
                 + "".join(cells) + "</TABLE>>")
        self.lines.append(
            f'{indent}{key} [label={label}, shape={shape}, style="{style}", '
            f'fillcolor="{fill}", color="{border}", penwidth={penwidth}, '
            f'fontcolor="{fontcolor}", tooltip="{_esc(tooltip)}"]')

    def edge(self, tail: str, head: str, *, kind: str, label: str | None = None,
             back: bool = False, indent: str = "  ", extra: str = "",
             label_color: str | None = None, color: str | None = None) -> None:
        t = self.theme
        if kind not in self.edge_kinds:
            self.edge_kinds.append(kind)
        attrs = []
        if back:
            attrs.append("dir=back")
        color = color or {"grad": t.grad, "data": t.edge, "saved": t.kinds["saved"][1],
                          "link": t.muted, "const": t.muted}[kind]
        attrs.append(f'color="{color}"')
        if kind in ("saved", "link", "const"):
            attrs.append('style="dashed"')
        if kind == "grad":
            attrs.append("penwidth=1.4")
        if label:
            lc = label_color or (t.grad if kind == "grad" else t.fg)
            attrs.append(f'label=<<FONT POINT-SIZE="{self.fontsize - 2}" COLOR="{lc}">'
                         f"{_multiline(label)}</FONT>>")
        if extra:
            attrs.append(extra)
        self.lines.append(f"{indent}{tail} -> {head} [{', '.join(attrs)}]")

    def legend(self, anchor: str | None, order_names: list[str] | None) -> None:
        t = self.theme
        rows = []
        for kind in self.kinds_used:
            fill, border, style = t.kinds[kind]
            rounded = ' STYLE="rounded"' if "rounded" in style else ""
            rows.append(f'<TR><TD BGCOLOR="{fill}" COLOR="{border}" BORDER="1" WIDTH="26" '
                        f'HEIGHT="14"{rounded}></TD><TD ALIGN="LEFT">'
                        f'{_esc(_KIND_TEXT[kind])}</TD></TR>')
        edge_text = {"grad": ("gradient flow (arrow: where the gradient goes)", t.grad),
                     "data": ("data flow (forward)", t.edge),
                     "saved": ("saved for backward", t.kinds["saved"][1]),
                     "link": ("tensor ↔ its grad_fn", t.muted),
                     "const": ("input that needs no gradient (None)", t.muted)}
        for kind in self.edge_kinds:
            text, color = edge_text[kind]
            glyph = {"grad": "←——", "data": "——→", "saved": "- - →", "link": "- - -",
                     "const": "- - -"}[kind]
            rows.append(f'<TR><TD><FONT COLOR="{color}"><B>{glyph}</B></FONT></TD>'
                        f'<TD ALIGN="LEFT">{_esc(text)}</TD></TR>')
        if self.grad_text:
            rows.append(f'<TR><TD><FONT COLOR="{t.grad}"><B>grad</B></FONT></TD>'
                        f'<TD ALIGN="LEFT">{_esc(self.grad_text)}</TD></TR>')
        for key, text in self.notes.items():
            rows.append(f'<TR><TD><FONT COLOR="{t.grad}">{_esc(key)}</FONT></TD>'
                        f'<TD ALIGN="LEFT">{_esc(text)}</TD></TR>')
        if self.highlight_used:
            rows.append(f'<TR><TD COLOR="{t.highlight}" BORDER="3" WIDTH="26" HEIGHT="14">'
                        f'</TD><TD ALIGN="LEFT">node running now (grey: not run or not sent yet)</TD></TR>')
        if order_names and len(self.orders_used) > 1:
            for k in sorted(self.orders_used):
                color = t.orders[min(k, len(t.orders) - 1)]
                width = 1 if k == 0 else 3
                rows.append(f'<TR><TD BGCOLOR="{t.bg}" COLOR="{color}" BORDER="{width}" '
                            f'WIDTH="26" '
                            f'HEIGHT="14"></TD><TD ALIGN="LEFT">'
                            f"{_esc(order_names[k] if k < len(order_names) else f'order {k}')}"
                            "</TD></TR>")
        if not rows:
            return
        label = (f'<<TABLE BORDER="1" COLOR="{t.muted}" CELLBORDER="0" CELLSPACING="3" '
                 f'CELLPADDING="2"><TR><TD COLSPAN="2"><B>Legend</B></TD></TR>'
                 + "".join(rows) + "</TABLE>>")
        self.lines.append(f'  legend [shape=plaintext, label={label}, '
                          f'fontcolor="{t.fg}", tooltip="legend"]')
        if anchor is not None:
            self.lines.append(f"  {anchor} -> legend [style=invis]")

    def source(self, name: str) -> str:
        t = self.theme
        head = [f"digraph {name} {{",
                f'  graph [rankdir={self.rankdir}, bgcolor="{t.bg}", fontname="{t.font}", '
                f'fontcolor="{t.fg}", nodesep=0.35, ranksep=0.45, pad=0.25, '
                f'newrank=true{self._title()}]',
                f'  node [fontname="{t.font}", fontsize={self.fontsize}, margin="0.12,0.06"]',
                f'  edge [fontname="{t.font}", fontsize={self.fontsize - 2}, '
                f'arrowsize=0.8]']
        return "\n".join(head + self.lines + ["}"]) + "\n"

    def _title(self) -> str:
        if not self.title:
            return ""
        return (f', label=<<B>{_multiline(self.title)}</B>>, labelloc=t, labeljust=c, '
                f"fontsize={self.fontsize + 4}")


def _check_rankdir(rankdir: str) -> str:
    r = rankdir.upper()
    if r not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"rankdir must be one of 'LR', 'RL', 'TB', 'BT', got {rankdir!r}")
    return r


def _theme(theme: str | Theme) -> Theme:
    if isinstance(theme, Theme):
        return theme
    try:
        return THEMES[theme]
    except KeyError:
        raise ValueError(f"unknown theme {theme!r}; choose one of 'light', 'dark', "
                         "'print', 'colorblind'") from None


def _tensor_rows(model: GraphModel, t: Any, name: str | None, value, *, show_values: bool,
                 show_grads: bool, grad=None, shape=None, dtype: str = "") -> list:
    rows = [(name or "tensor", "title")]
    if shape is None:
        shape = getattr(t, "shape", None)
        if shape is None and value is not None:
            shape = np.shape(value)
    if shape is not None:
        rows.append((f"{_shape_text(shape)}  {dtype}".rstrip(), "small"))
    if show_values and value is not None:
        rows.append((format_value(value), "body"))
    if show_grads and grad is not None:
        rows.append(("grad = " + format_value(grad), "grad"))
    return rows


def _leaf_grad(t: Any):
    """A leaf's ``.grad`` (no warning: only leaves and retained grads are read)."""
    if t is None:
        return None
    if getattr(t, "grad_fn", None) is not None and not getattr(t, "retains_grad", False):
        return None
    return getattr(t, "grad", None)


def _order_names(model: GraphModel, names: list[str] | None) -> list[str]:
    if names:
        return list(names)
    out = []
    for k, t in enumerate(model.roots):
        n = model.tensor_name(t)
        out.append(f"order {k}" + (f": graph of {n}" if n else ""))
    return out


def _saved_rows(model: GraphModel, item: Item, dot: _Dot, key: str, *, back: bool,
                indent: str = "  ") -> list:
    """Saved tensors as their own nodes (never merged with the leaf they alias)."""
    rows = []
    for n, v in model.saved_values(item):
        if v is _FREED:
            rows.append((f"saved {n}: freed by backward", "small"))
            continue
        if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, np.ndarray):
            skey = f"{key}_saved_{n}"
            alias = model.tensor_name(v)
            fn = getattr(v, "grad_fn", None)
            if alias is None and fn is not None and id(fn) in model.by_fn:
                alias = model.label_of(model.by_fn[id(fn)])
                alias = None if alias == "…" else alias
            title = f"saved {n}" + (f" (= {alias})" if alias else "")
            dot.node(skey, "saved",
                     [(title, "title"), (f"{_shape_text(v.shape)}  {_dtype_text(v)}", "small"),
                      (format_value(v), "body")],
                     tooltip=f"{item.title}._saved_{n}", indent=indent)
            dot.edge(skey, key, kind="saved", indent=indent)
        else:
            rows.append((f"{n} = {_fmt_attr(v)}", "small"))
    return rows


def _fmt_attr(v: Any) -> str:
    if isinstance(v, (int, float, np.generic)):
        return format_value(v)
    if isinstance(v, (tuple, list)) and len(v) > 6:
        return f"({', '.join(str(x) for x in v[:3])}, …)"
    return str(v)


# --------------------------------------------------------------------------- backward
def _emit_backward(model: GraphModel, dot: _Dot, *, show_values: bool, show_grads: bool,
                   edge_grads: Mapping | None, show_local: bool, show_saved: bool,
                   show_attrs: bool, show_constants: bool, state: Mapping | None,
                   prefix: str = "", indent: str = "  ", higher: bool) -> list[str]:
    """Backward nodes and edges; returns the keys of the output-tensor nodes."""
    if show_values or show_local:
        model.compute_values()
    running = state.get("running") if state else None
    done = state.get("done", set()) if state else set()
    leaf_grads = state.get("leaf_grads") if state else None
    received = state.get("received", {}) if state else {}
    sent = state.get("sent") if state else None
    if state is not None:
        dot.highlight_used = True  # every frame has the same legend: the layout stays put
    for item in model.items:
        key = prefix + item.key
        order = item.order if higher else None
        faded = state is not None and item.key not in done and item.key != running
        if item.kind == "accumulate":
            dot.node(key, "accumulate", [("AccumulateGrad", "title")],
                     tooltip="AccumulateGrad", order=order, faded=faded,
                     highlight=item.key == running, indent=indent)
            var = item.variable
            vkey = key + "_var"
            grad = (leaf_grads.get(item.key) if leaf_grads is not None else _leaf_grad(var))
            rows = _tensor_rows(model, var, item.name, _as_array(var), show_values=show_values,
                                show_grads=show_grads, grad=grad, dtype=_dtype_text(var))
            if state is not None and grad is None:
                rows.append(("grad = None", "grad"))
            dot.node(vkey, "leaf", rows, tooltip=f"leaf {item.name or ''}".strip(),
                     order=order, indent=indent)
            dot.edge(vkey, key, kind="grad", back=True, indent=indent)
            continue
        rows = [(item.title, "title")]
        if item.summary is not None:
            rows.append((item.summary, "small"))
        if show_attrs and item.op is not None:
            rows += [(f"{n} = {_fmt_attr(v)}", "small")
                     for n, v in zip(item.op.attrs, item.attrs)]
        if item.key in received:
            rows.append(("receives " + format_value(received[item.key]), "grad"))
        if show_saved:
            shown = {r[0] for r in rows}
            rows += [r for r in _saved_rows(model, item, dot, key, back=True, indent=indent)
                     if r[0] not in shown]
        dot.node(key, "collapsed" if item.summary is not None else "op", rows,
                 tooltip=item.title,
                 order=order, highlight=item.key == running, faded=faded, indent=indent)
        for e in model.backward_edges(item):
            if e.target is None:
                if not show_constants:
                    continue
                ckey = f"{key}_c{e.slot}"
                text = "None"
                if item.op is not None:
                    text = f"None  ({model.label_of(None, e.const)})"
                dot.node(ckey, "const", [(text, "small")], tooltip="None", indent=indent)
                dot.edge(ckey, key, kind="const", back=False, indent=indent,
                         extra="arrowhead=none")
                continue
            parts = []
            if show_local:
                ld = model.local_derivative(item, e)
                if ld is not None:
                    who = model.operand_text(e.target, e.const)
                    parts.append(f"∂/∂{who} = {ld}" if len(who) <= 10 else f"local: {ld}")
                    dot.notes["∂/∂v"] = "local derivative of the node's output w.r.t. input v"
            if e.output_nr:
                parts.append(f"output {e.output_nr}")
            hidden = False
            if edge_grads is not None and (item.key, e.slot) in edge_grads:
                parts.append("grad " + format_value(edge_grads[(item.key, e.slot)]))
                dot.notes["grad"] = "on an edge: the gradient sent along it"

                # Step frames: the text is there (so the layout stays put) but invisible
                # until the gradient has been sent.
                hidden = sent is not None and (item.key, e.slot) not in sent
            dot.edge(prefix + e.target.key, key, kind="grad", back=True,
                     label="\n".join(parts) or None, indent=indent,
                     label_color=dot.theme.bg if hidden else None,
                     color=dot.theme.muted if hidden else None)
    outs = []
    for k, (t, item) in enumerate(zip(model.roots, model.root_items)):
        okey = f"{prefix}out{k}"
        if item is None:
            continue
        name = model.tensor_name(t)
        rows = _tensor_rows(model, t, name or "output", _as_array(t), show_values=show_values,
                            show_grads=False, dtype=_dtype_text(t))
        dot.node(okey, "output", rows, tooltip=f"output {name or ''}".strip(),
                 order=item.order if higher else None, indent=indent)
        seed = state.get("seed") if state else None
        label = None
        if seed is not None or edge_grads is not None:
            s = seed if seed is not None else edge_grads.get(("seed", k))
            label = None if s is None else "grad " + format_value(s)
        dot.edge(prefix + item.key, okey, kind="grad", back=True, label=label, indent=indent)
        outs.append(okey)
    for t in model.leaf_only:
        k = len(outs)
        okey = f"{prefix}leafroot{k}"
        rows = _tensor_rows(model, t, model.tensor_name(t), _as_array(t),
                            show_values=show_values, show_grads=show_grads,
                            grad=_leaf_grad(t), dtype=_dtype_text(t))
        dot.node(okey, "leaf", rows, tooltip="leaf", indent=indent)
        outs.append(okey)
    return outs


def backward_graph(roots, *, names: Mapping[str, Any] | None = None, theme: str = "light",
                   rankdir: str = "LR", show_values: bool = True, show_grads: bool = True,
                   edge_grads: Mapping | None = None, show_local: bool = False,
                   show_saved: bool = False, show_attrs: bool = False,
                   show_constants: bool = True, legend: bool = True,
                   title: str | None = None, order_names: list[str] | None = None,
                   state: Mapping | None = None, fontsize: int = 12,
                   max_nodes: int | None = 300) -> str:
    """DOT source of the backward graph (PyTorch's ``grad_fn`` nodes) of ``roots``.

    Parameters
    ----------
    roots : tensor or sequence of tensors
        Several roots mark derivative orders (``[f, df_dx]``).
    names : mapping, optional
        ``{"f": f, "x": x}``: names shown for tensors.
    edge_grads : mapping, optional
        ``{(node_key, slot): gradient}`` recorded during a backward pass; drawn on edges.
    show_local : bool
        Label each edge with the op's local derivative (from the op table).
    show_saved : bool
        Draw ``_saved_*`` tensors as separate nodes (never merged with a leaf).
    state : mapping, optional
        Step-by-step frame state (``running``, ``done``, ``leaf_grads``, ``received``).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(2.0, requires_grad=True, name="x")
    >>> src = backward_graph(torch.sin(x), legend=False)
    >>> "SinBackward0" in src, src.count("->")  # x -> AccumulateGrad -> Sin -> output
    (True, 3)
    """
    model = roots if isinstance(roots, GraphModel) else GraphModel(_as_list(roots), names)
    _collapse(model, max_nodes)
    dot = _Dot(_theme(theme), _check_rankdir(rankdir), title, fontsize)
    higher = len(model.roots) > 1
    outs = _emit_backward(model, dot, show_values=show_values, show_grads=show_grads,
                          edge_grads=edge_grads, show_local=show_local, show_saved=show_saved,
                          show_attrs=show_attrs, show_constants=show_constants, state=state,
                          higher=higher)
    if legend:
        dot.legend(outs[-1] if outs else None, _order_names(model, order_names))
    return dot.source("backward")


def _as_list(roots) -> list:
    if isinstance(roots, (list, tuple)):
        return list(roots)
    return [roots]


# --------------------------------------------------------------------------- forward
def _op_symbol(item: Item) -> str:
    op = item.op
    if op is None:
        return re.sub(r"Backward\d*$", "", item.title)
    sym = _SYMBOL.get(op.name, op.name)
    if op.name == "pow" and op.attrs == ("exponent",) and item.attrs:
        return f"pow {format_value(item.attrs[0])}"
    if op.name == "rsub" and item.attrs:
        return f"{format_value(item.attrs[0])} −"
    if op.name == "mul" and op.attrs == ("other",) and item.attrs:
        return f"× {format_value(item.attrs[0])}"
    if op.name in ("sum", "mean", "max", "min") and op.attrs and item.attrs:
        return f"{sym} dim={item.attrs[0]}"
    return sym


def _emit_forward(model: GraphModel, dot: _Dot, *, show_values: bool, show_grads: bool,
                  prefix: str = "f", indent: str = "  ", higher: bool) -> dict[str, str]:
    """Forward nodes and edges; returns {backward item key: forward tensor node key}."""
    if show_values:
        model.compute_values()
    tensor_key: dict[str, str] = {}
    root_set = {id(it) for it in model.root_items if it is not None}
    shapes: dict[str, tuple] = {}
    for item in model.items:
        meta = getattr(item.fn, "_meta", None) if _is_symgrad_node(item.fn) else None
        for e in item.edges:
            if e.target is not None and meta and e.slot < len(meta):
                shapes.setdefault(e.target.key, tuple(meta[e.slot][0]))
    for item in model.items:
        order = item.order if higher else None
        tkey = f"{prefix}{item.key}"
        tensor_key[item.key] = tkey
        if item.kind == "accumulate":
            var = item.variable
            rows = _tensor_rows(model, var, item.name, _as_array(var), show_values=show_values,
                                show_grads=show_grads, grad=_leaf_grad(var),
                                dtype=_dtype_text(var))
            dot.node(tkey, "leaf", rows, tooltip=f"leaf {item.name or ''}".strip(),
                     order=order, indent=indent)
            continue
        is_root = id(item) in root_set
        t = item.tensor
        name = item.name or model.label_of(item)
        if name == "…":
            name = None
        grad = _leaf_grad(t) if t is not None and getattr(t, "retains_grad", False) else None
        rows = _tensor_rows(model, t, name, item.value, show_values=show_values,
                            show_grads=show_grads, grad=grad,
                            shape=None if t is not None else shapes.get(item.key),
                            dtype=_dtype_text(t) if t is not None else "")
        dot.node(tkey, "output" if is_root else "tensor", rows,
                 tooltip=f"tensor {name or ''}".strip(), order=order, indent=indent)
        okey = f"{prefix}{item.key}_op"
        dot.node(okey, "fwd_op", [(_op_symbol(item), "title")], tooltip=item.title,
                 order=order, shape="ellipse", indent=indent)
        dot.edge(okey, tkey, kind="data", indent=indent)
        label_inputs = (item.op is not None and item.op.name not in _COMMUTATIVE
                        and len(item.edges) > 1)
        for e in item.edges:
            lab = e.input_name if label_inputs else None
            if e.target is None:
                ckey = f"{okey}_c{e.slot}"
                cname = model.label_of(None, e.const)
                rows = [(cname, "title")]
                a = _as_array(e.const)
                if a is not None and a.ndim > 0 and show_values and cname != format_value(a):
                    rows.append((format_value(a), "body"))
                dot.node(ckey, "const", rows, tooltip="constant", indent=indent)
                dot.edge(ckey, okey, kind="data", label=lab, indent=indent)
            else:
                dot.edge(f"{prefix}{e.target.key}", okey, kind="data", label=lab,
                         indent=indent)
    for k, t in enumerate(model.leaf_only):
        key = f"{prefix}leafroot{k}"
        rows = _tensor_rows(model, t, model.tensor_name(t), _as_array(t),
                            show_values=show_values, show_grads=show_grads,
                            grad=_leaf_grad(t), dtype=_dtype_text(t))
        dot.node(key, "leaf", rows, tooltip="leaf", indent=indent)
        tensor_key[f"leafroot{k}"] = key
    return tensor_key


def forward_graph(roots, *, names: Mapping[str, Any] | None = None, theme: str = "light",
                  rankdir: str = "LR", show_values: bool = True, show_grads: bool = True,
                  legend: bool = True, title: str | None = None,
                  order_names: list[str] | None = None, fontsize: int = 12,
                  max_nodes: int | None = 300) -> str:
    """DOT source of the forward graph: leaves, constants, operations and tensors.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(2.0, requires_grad=True, name="x")
    >>> src = forward_graph(3 * x, legend=False)
    >>> "×" in src and "fn0_op" in src
    True
    """
    model = roots if isinstance(roots, GraphModel) else GraphModel(_as_list(roots), names)
    _collapse(model, max_nodes)
    dot = _Dot(_theme(theme), _check_rankdir(rankdir), title, fontsize)
    higher = len(model.roots) > 1
    keys = _emit_forward(model, dot, show_values=show_values, show_grads=show_grads,
                         higher=higher)
    anchor = None
    for item in model.root_items:
        if item is not None:
            anchor = keys[item.key]
    if legend:
        dot.legend(anchor, _order_names(model, order_names))
    return dot.source("forward")


def both_graph(roots, *, names: Mapping[str, Any] | None = None, theme: str = "light",
               rankdir: str = "LR", show_values: bool = True, show_grads: bool = True,
               edge_grads: Mapping | None = None, show_local: bool = False,
               show_saved: bool = False, show_attrs: bool = False, legend: bool = True,
               title: str | None = None, order_names: list[str] | None = None,
               fontsize: int = 12, max_nodes: int | None = 300) -> str:
    """Forward and backward graphs side by side, each tensor linked to its ``grad_fn``.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(2.0, requires_grad=True, name="x")
    >>> src = both_graph(torch.exp(x), legend=False)
    >>> "cluster_forward" in src and "cluster_backward" in src
    True
    """
    model = roots if isinstance(roots, GraphModel) else GraphModel(_as_list(roots), names)
    _collapse(model, max_nodes)
    t = _theme(theme)
    dot = _Dot(t, _check_rankdir(rankdir), title, fontsize)
    higher = len(model.roots) > 1
    dot.lines.append("  subgraph cluster_forward {")
    dot.lines.append(f'    label=<<B>Forward pass</B>>; color="{t.muted}"; '
                     f'fontcolor="{t.fg}"; style="rounded"; penwidth=0.8')
    keys = _emit_forward(model, dot, show_values=show_values, show_grads=False, indent="    ",
                         higher=higher)
    dot.lines.append("  }")
    dot.lines.append("  subgraph cluster_backward {")
    dot.lines.append(f'    label=<<B>Backward pass (grad_fn graph)</B>>; color="{t.muted}"; '
                     f'fontcolor="{t.fg}"; style="rounded"; penwidth=0.8')
    outs = _emit_backward(model, dot, show_values=False, show_grads=show_grads,
                          edge_grads=edge_grads, show_local=show_local, show_saved=show_saved,
                          show_attrs=show_attrs, show_constants=False, state=None,
                          prefix="b", indent="    ", higher=higher)
    dot.lines.append("  }")
    for item in model.items:
        # Same rank: each grad_fn sits straight across from the tensor it belongs to.
        target = f"b{item.key}"
        dot.lines.append(f"  {{rank=same; {keys[item.key]}; {target}}}")
        if item.kind != "accumulate":  # a leaf's grad_fn is None: no link to draw
            dot.edge(target, keys[item.key], kind="link", indent="  ",
                     extra="arrowhead=none")
    if legend:
        dot.legend(outs[-1] if outs else None, _order_names(model, order_names))
    return dot.source("forward_backward")


# --------------------------------------------------------------------------- torchviz
def torchviz_graph(var, params: Mapping[str, Any] | None = None, show_attrs: bool = False,
                   show_saved: bool = False, max_attr_chars: int = 50) -> str:
    """DOT in torchviz's ``make_dot`` style (leaves light blue, output green, saved orange).

    Unlike torchviz, a saved tensor that is also a leaf gets its own node, so the leaf's
    edges are never merged with the saved value's.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> src = torchviz_graph((x * x).sum(), params={"x": x})
    >>> "lightblue" in src and "SumBackward0" in src
    True
    """
    roots = _as_list(var)
    names = dict(params or {})
    model = GraphModel(roots, names)
    lines = ["digraph {",
             '  graph [size="12,12"]',
             '  node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 '
             'shape=box style=filled]']

    def size(t) -> str:
        return "(" + ", ".join(str(int(n)) for n in tuple(getattr(t, "shape", ()))) + ")"

    for item in model.items:
        key = item.key
        if item.kind == "accumulate":
            var_ = item.variable
            nm = item.name
            text = f"{nm or ''}\n " + size(var_)  # torchviz: "name\n (2, 3)", name or ''
            lines.append(f'  {key}_var [label="{_dq(text)}" fillcolor=lightblue]')
            lines.append(f"  {key}_var -> {key}")
            lines.append(f'  {key} [label="AccumulateGrad"]')
            continue
        label = item.title
        if show_attrs or show_saved:
            attrs = {}
            # torchviz walks dir(fn): the saved names in alphabetical order
            for n, v in sorted(model.saved_values(item), key=lambda nv: nv[0]):
                if v is _FREED:
                    attrs[n] = "[freed]"
                elif hasattr(v, "shape") and not isinstance(v, np.ndarray):
                    attrs[n] = "[saved tensor]"
                    if show_saved:
                        skey = f"{key}_saved_{n}"
                        lines.append(f'  {skey} [label="{_dq(n)}\n {size(v)}" fillcolor=orange]')
                        lines.append(f"  {skey} -> {key} [dir=none]")
                elif isinstance(v, tuple) and any(hasattr(t, "shape") for t in v):
                    attrs[n] = "[saved tensors]"
                else:
                    attrs[n] = str(_fmt_attr(v))
            if attrs and show_attrs:
                label += "\n" + _torchviz_attrs(label, attrs, max_attr_chars)
        lines.append(f'  {key} [label="{_dq(label)}"]')
        for e in model.backward_edges(item):
            if e.target is not None:
                lines.append(f"  {e.target.key} -> {key}")
    for k, (t, item) in enumerate(zip(model.roots, model.root_items)):
        nm = model.tensor_name(t)
        text = f"{nm or ''}\n " + size(t)
        lines.append(f'  out{k} [label="{_dq(text)}" fillcolor=darkolivegreen1]')
        if item is not None:
            lines.append(f"  {item.key} -> out{k}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _torchviz_attrs(name: str, attrs: dict, max_attr_chars: int) -> str:
    """torchviz's table of saved values under a node name: a rule, then aligned rows."""
    max_attr_chars = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(v) for v in attrs.values()), max_attr_chars)
    rows = [f"{k:<{col1}}: {(v[:col2 - 3] + '...' if len(v) > col2 else v):>{col2}}"
            for k, v in attrs.items()]
    return "-" * max(col1 + col2 + 2, len(name)) + "\n" + "\n".join(rows)


def _dq(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# --------------------------------------------------------------------------- large graphs
def _collapse(model: GraphModel, max_nodes: int | None, keep: int = 2) -> None:
    """Make a graph of more than ``max_nodes`` nodes legible.

    First every long chain (nodes with one input that requires grad and one consumer) keeps
    ``keep`` nodes at each end and its middle becomes one node that says how many nodes of
    which kind it stands for (``1,995 nodes: MulBackward0 ×1,995``).  If the graph is still
    too large, the nodes farthest from the outputs are cut, behind a note saying so.
    """
    if max_nodes is None or len(model.items) <= max_nodes:
        return
    model.compute_values()  # values above a collapsed chain stay drawable
    consumers: dict[int, int] = {}
    parent: dict[int, Item] = {}
    for item in model.items:
        for e in item.edges:
            if e.target is not None:
                consumers[id(e.target)] = consumers.get(id(e.target), 0) + 1
                parent[id(e.target)] = item
    roots = {id(it) for it in model.root_items if it is not None}

    def linear(it: Item) -> bool:
        return (it.kind == "op" and id(it) not in roots and consumers.get(id(it), 0) == 1
                and sum(e.target is not None for e in it.edges) == 1)

    removed: set[int] = set()
    replacement: dict[int, Item] = {}
    for item in model.items:
        if not linear(item) or (id(item) in parent and linear(parent[id(item)])):
            continue
        chain = [item]
        while True:
            child = next(e.target for e in chain[-1].edges if e.target is not None)
            if not linear(child):
                break
            chain.append(child)
        middle = chain[keep:len(chain) - keep]
        if len(middle) < 3:
            continue
        counts: dict[str, int] = {}
        for it in middle:
            counts[it.title] = counts.get(it.title, 0) + it.count
        note = Item(f"c{len(replacement)}", _Note(len(middle)))
        note.kind = "op"
        note.title = f"{sum(counts.values()):,} nodes collapsed"
        note.summary = ", ".join(f"{t} ×{n:,}" for t, n in counts.items())
        note.count = sum(counts.values())
        note.order = middle[0].order
        note.edges = middle[-1].edges
        note.value = middle[-1].value
        for e in chain[keep - 1].edges:
            if e.target is middle[0]:
                e.target = note
        removed.update(id(it) for it in middle)
        replacement[id(middle[0])] = note
    if removed:
        items = []
        for it in model.items:
            if id(it) in replacement:
                items.append(replacement[id(it)])
            if id(it) not in removed:
                items.append(it)
        model.items = items
    if len(model.items) > max_nodes:
        # Still too large: keep the nodes closest to the outputs and say what was cut.
        kept_items = model.items[:max_nodes]
        kept = {id(it) for it in kept_items}
        cut = len(model.items) - max_nodes
        note = Item("cut", _Note(cut))
        note.kind = "op"
        note.title = f"… {cut:,} more nodes not drawn"
        note.summary = "draw(..., max_nodes=None) draws them all"
        for it in kept_items:
            for e in it.edges:
                if e.target is not None and id(e.target) not in kept:
                    e.target = note
        model.items = kept_items + [note]


class _Note:
    def __init__(self, cut: int) -> None:
        self.cut = cut
