"""The layout direction that fits a slide: ``rankdir="auto"``.

A drawing laid out left to right is as wide as its graph is deep, and as tall as it is
broad; top to bottom, the other way round.  :func:`slide_fit` reads DOT text (no
rendering), estimates the size of every node from its label, ranks the nodes as Graphviz
does (longest path, sources pulled next to what they feed, ``rank=same`` groups, edge
labels between ranks), and says how large the drawing comes out when scaled to fit a
16:9 slide.  :func:`laid_out` builds a drawing both ways and keeps the larger one -- left
to right unless top to bottom is clearly better.

Examples
--------
>>> small = "digraph { rankdir=%s; a -> b; a -> c }"  # fits either way: left to right
>>> rankdir_of(laid_out(lambda rankdir: small % rankdir, "auto"))
'LR'
>>> chain = "digraph { rankdir=%s; node [shape=box, label=TanhBackward0]; " + " -> ".join(
...     f"n{k}" for k in range(10)) + " }"
>>> rankdir_of(laid_out(lambda rankdir: chain % rankdir, "auto"))
'TB'
"""
from __future__ import annotations

import html
import re
from typing import Callable, Iterator

from .dotwriter import DotSource, check_rankdir

__all__ = ["RANKDIRS", "laid_out", "slide_fit", "estimate_size", "rankdir_of", "layout_cost",
           "bounded", "LAYOUT_BUDGET"]

#: Every value ``rankdir`` takes: ``auto`` and Graphviz's four directions.
RANKDIRS = ("auto", "LR", "TB", "RL", "BT")

#: The slide the drawing is fitted to (width, height), and how much larger top to bottom
#: must come out to be chosen over left to right, the direction a reader expects.
SLIDE = (16.0, 9.0)
PREFER_LR = 1.05

#: The largest layout drawn at Graphviz's full quality, in :func:`layout_cost`'s units
#: (about 6,000 nodes in Graphviz's positioning problem: half a second).  Past it,
#: positioning runs a bounded number of steps and edges are straight lines: Graphviz's
#: time grows with the square of that problem and its routing of curved edges around
#: nodes placed in few steps is slower still (a 48-term sum drawn both ways: minutes).
LAYOUT_BUDGET = 1500
_BOUNDS = "nslimit=1, nslimit1=1, mclimit=0.5, splines=line, "

_POINTS = 72.0
_TOKEN = re.compile(r'\s*(?:(->|--)|([{}\[\];,=])|("(?:[^"\\]|\\.)*")|(<)|([^\s{}\[\];,=<>"]+))',
                    re.S)


def laid_out(build: Callable[[str], str], rankdir: str) -> str:
    """``build(rankdir)``, the DOT text of a drawing in a direction; for ``"auto"``, the
    text of whichever of ``LR`` and ``TB`` fits a 16:9 slide larger (``LR`` unless
    ``TB`` is larger by the factor ``PREFER_LR``); :func:`bounded` either way."""
    if str(rankdir).lower() != "auto":
        return bounded(build(check_rankdir(rankdir)))
    across, down = build("LR"), build("TB")
    return bounded(down if slide_fit(down, "TB") > PREFER_LR * slide_fit(across, "LR")
                   else across)


def layout_cost(source: str) -> int:
    """The size of Graphviz's positioning problem for ``source``, estimated without
    rendering: its nodes and the ranks its long edges pass through (Graphviz's own count
    is about four times this).

    Examples
    --------
    >>> layout_cost("digraph { a -> b -> c; a -> c }")
    4
    """
    graph = _Graph(source)
    rank = graph._ranks()
    return len(graph.size) + sum(max(0, abs(rank[b] - rank[a]) - 1)
                                 for a, b, _ in graph.edges)


def bounded(source: str) -> str:
    """``source`` (and its plain form), with Graphviz's work bounded where
    :func:`layout_cost` is past :data:`LAYOUT_BUDGET`: a bounded number of positioning
    steps, straight edges.  Smaller drawings are returned as they are."""
    if layout_cost(source) <= LAYOUT_BUDGET:
        return source

    def bound(text: str) -> str:
        return re.sub(r"^(\s*graph \[)", r"\1" + _BOUNDS, text, count=1, flags=re.M)
    plain = getattr(source, "plain", None)
    return bound(source) if plain is None else DotSource(bound(source), bound(plain))


def rankdir_of(source: str) -> str:
    """The ``rankdir`` a DOT text's graph attributes give (``TB`` when it gives none)."""
    m = re.search(r"\brankdir\s*=\s*\"?(\w+)", source)
    return m.group(1).upper() if m else "TB"


def slide_fit(source: str, rankdir: str | None = None) -> float:
    """How large the drawing of ``source`` comes out on a 16:9 slide: the scale (from
    its size at 100%, estimated) at which it just fits 16 by 9 inches, at most 1 (a
    drawing that fits as it is is not enlarged: then either direction will do)."""
    w, h = estimate_size(source, rankdir or rankdir_of(source))
    return min(SLIDE[0] / w, SLIDE[1] / h, 1.0)


def estimate_size(source: str, rankdir: str) -> tuple[float, float]:
    """The estimated (width, height) in inches of ``source`` laid out in ``rankdir``
    (``LR`` or ``TB``), padding included."""
    return _Graph(source).extent(rankdir)


# -- reading DOT -------------------------------------------------------------------------
def _tokens(source: str) -> Iterator[str]:
    """DOT tokens: ``->``, punctuation, quoted strings (with quotes), HTML strings (as
    ``<...>``, nested brackets balanced) and bare IDs; ``//`` and ``#`` comments skipped."""
    source = re.sub(r"^\s*(?://|#).*$", "", source, flags=re.M)
    i, n = 0, len(source)
    while i < n:
        m = _TOKEN.match(source, i)
        if m is None or m.end() == i:
            break
        if m.group(4):  # an HTML string: up to the matching '>'
            depth, j = 0, m.start(4)
            while j < n:
                depth += {"<": 1, ">": -1}.get(source[j], 0)
                j += 1
                if depth == 0:
                    break
            yield source[m.start(4):j]
            i = j
            continue
        yield next(g for g in m.groups() if g is not None)
        i = m.end()


def _attrs(tokens: list, k: int) -> tuple[dict, int]:
    """The attribute list starting at ``tokens[k] == "["``; returns (attrs, next index)."""
    attrs, k = {}, k + 1
    while k < len(tokens) and tokens[k] != "]":
        if k + 2 < len(tokens) and tokens[k + 1] == "=":
            attrs[tokens[k]] = tokens[k + 2]
            k += 3
        else:
            k += 1
    return attrs, k + 1


def _unquote(value: str) -> str:
    if value.startswith('"') and value.endswith('"'):
        return re.sub(r"\\(.)", r"\1", value[1:-1].replace("\\n", "\n")
                      .replace("\\l", "\n").replace("\\r", "\n"))
    return value


def _label_rows(label: str, fontsize: float) -> list[tuple[str, float, float]]:
    """``(text, point size, extra width)`` of each line of a label (HTML-like or quoted)."""
    if not (label.startswith("<") and label.endswith(">")):
        return [(line, fontsize, 0.0) for line in _unquote(label).split("\n")]
    rows = []
    for piece in re.split(r"</TR>|<BR[^>]*>", label[1:-1], flags=re.I):
        sizes = [float(s) for s in re.findall(r'POINT-SIZE="([\d.]+)"', piece)]
        extra = sum(float(w) for w in re.findall(r'\bWIDTH="([\d.]+)"', piece))
        cells = re.split(r"</TD>", piece, flags=re.I)
        text = "  ".join(html.unescape(re.sub(r"<[^>]*>", "", c)).strip() for c in cells)
        text = text.strip()
        if text or extra:
            rows.append((text, min(sizes) if sizes else fontsize, extra))
    return rows


def _char_width(ch: str) -> float:
    """A character's advance in ems, roughly Helvetica's."""
    if ch in " .,:;!|'ilIjft()[]":
        return 0.3
    if ch.isdigit() or ch.islower():
        return 0.55
    return 0.68 if ch.isupper() else 0.6


def _text_size(label: str | None, fontsize: float) -> tuple[float, float]:
    """Width and height in points of a label's text (Helvetica-like metrics)."""
    if not label:
        return 0.0, 0.0
    rows = _label_rows(label, fontsize)
    if not rows:
        return 0.0, 0.0
    width = max(sum(map(_char_width, t)) * size + extra for t, size, extra in rows)
    height = sum(1.2 * size + 1 for _, size, _ in rows)
    return width, height


class _Graph:
    """Nodes with estimated sizes, edges with labels, ``rank=same`` groups of a DOT text."""

    def __init__(self, source: str) -> None:
        self.size: dict[str, tuple[float, float]] = {}
        self.edges: list[tuple[str, str, tuple[float, float]]] = []
        self.same: list[list[str]] = []
        self.nodesep, self.ranksep, self.pad = 0.25, 0.5, 0.0555
        self.title = (0.0, 0.0)
        self.clusters = 0
        fontsize = {"node": 14.0, "edge": 14.0}
        defaults: dict = {}  # node [...]
        attrs_of: dict[str, dict] = {}
        tokens = list(_tokens(source))
        stack: list[dict] = []  # one per open (sub)graph: its rank and its node names
        k = 0
        while k < len(tokens):
            tok = tokens[k]
            nxt = tokens[k + 1] if k + 1 < len(tokens) else ""
            if tok in ("digraph", "graph", "strict") and nxt not in ("[",):
                k += 1
                while k < len(tokens) and tokens[k] != "{":
                    k += 1
                stack.append({"rank": None, "nodes": []})
                k += 1
            elif tok == "subgraph" or tok == "{":
                name = ""
                if tok == "subgraph":
                    k += 1
                    if k < len(tokens) and tokens[k] != "{":
                        name = tokens[k]
                        k += 1
                if name.startswith("cluster"):
                    self.clusters += 1
                stack.append({"rank": None, "nodes": []})
                k += 1
            elif tok == "}":
                top = stack.pop() if stack else {"rank": None, "nodes": []}
                if top["rank"] in ("same", "min", "max", "source", "sink") and top["nodes"]:
                    self.same.append(top["nodes"])
                k += 1
            elif tok in ("graph", "node", "edge") and nxt == "[":
                attrs, k = _attrs(tokens, k + 1)
                if tok == "graph" and len(stack) <= 1:
                    self._graph_attrs(attrs)
                elif tok == "node":
                    defaults.update(attrs)
                elif tok == "edge" and "fontsize" in attrs:
                    fontsize[tok] = float(_unquote(attrs["fontsize"]))
            elif nxt == "=":
                value = tokens[k + 2] if k + 2 < len(tokens) else ""
                if tok == "rank" and stack:
                    stack[-1]["rank"] = _unquote(value)
                elif len(stack) == 1:
                    self._graph_attrs({tok: value})
                k += 3
            elif tok in (";", ","):
                k += 1
            elif nxt == "->" or nxt == "--":
                chain = [tok]
                k += 1
                while k + 1 < len(tokens) and tokens[k] in ("->", "--"):
                    chain.append(tokens[k + 1])
                    k += 2
                attrs = {}
                if k < len(tokens) and tokens[k] == "[":
                    attrs, k = _attrs(tokens, k)
                w, h = _text_size(attrs.get("label"), fontsize["edge"])
                for name in chain:
                    self._mention(name, stack)
                for a, b in zip(chain, chain[1:]):
                    self.edges.append((a, b, (w / _POINTS, h / _POINTS)))
            else:
                attrs = {}
                k += 1
                if k < len(tokens) and tokens[k] == "[":
                    attrs, k = _attrs(tokens, k)
                self._mention(tok, stack)
                attrs_of.setdefault(tok, {}).update(attrs)
        for name in self.size:
            self.size[name] = self._node_size(name, {**defaults, **attrs_of.get(name, {})})

    def _graph_attrs(self, attrs: dict) -> None:
        for key, attr in (("nodesep", "nodesep"), ("ranksep", "ranksep"), ("pad", "pad")):
            if key in attrs:
                try:
                    setattr(self, attr, float(_unquote(attrs[key]).split(",")[0]))
                except ValueError:
                    pass
        if "label" in attrs:
            size = float(_unquote(attrs.get("fontsize", "14")))
            w, h = _text_size(attrs["label"], size)
            self.title = (w / _POINTS, h / _POINTS)

    def _mention(self, name: str, stack: list) -> None:
        self.size.setdefault(name, (0.75, 0.5))
        if stack:
            stack[-1]["nodes"].append(name)

    @staticmethod
    def _node_size(name: str, attrs: dict) -> tuple[float, float]:
        """Width and height in inches of a node with ``attrs`` (defaults merged)."""
        if _unquote(attrs.get("style", "")) == "invis":
            return (0.0, 0.0)
        size = float(_unquote(attrs.get("fontsize", "14")))
        label = attrs.get("label", "\\N")
        w, h = _text_size(f'"{name}"' if _unquote(label) == "\\N" else label, size)
        shape = _unquote(attrs.get("shape", "ellipse"))
        if shape in ("plaintext", "plain", "none"):
            return (w / _POINTS + 0.1, h / _POINTS + 0.1)
        margin = [float(v) for v in _unquote(attrs.get("margin", "0.11,0.055")).split(",")]
        w, h = w / _POINTS + 2 * margin[0], h / _POINTS + 2 * margin[-1]
        if shape in ("ellipse", "oval", "circle"):
            w, h = w * 1.41, h * 1.41
        return (max(w, float(_unquote(attrs.get("width", "0.75")))),
                max(h, float(_unquote(attrs.get("height", "0.5")))))

    # -- ranks and extent ----------------------------------------------------------------
    def _ranks(self) -> dict[str, int]:
        """Each node's rank: longest path over ``rank=same`` groups, then every source
        pulled up next to the nearest node it feeds (as Graphviz's shortest edges do)."""
        group = {n: n for n in self.size}
        for names in self.same:
            root = group[names[0]]
            for n in names[1:]:
                old = group[n]
                for m, g in group.items():
                    if g == old:
                        group[m] = root
        succ: dict[str, set] = {g: set() for g in group.values()}
        indeg = {g: 0 for g in succ}
        for a, b, _ in self.edges:
            ga, gb = group[a], group[b]
            if ga != gb and gb not in succ[ga]:
                succ[ga].add(gb)
                indeg[gb] += 1
        rank = {g: 0 for g in succ}
        ready = [g for g in succ if indeg[g] == 0]
        order = []
        while ready:
            g = ready.pop()
            order.append(g)
            for h in succ[g]:
                rank[h] = max(rank[h], rank[g] + 1)
                indeg[h] -= 1
                if indeg[h] == 0:
                    ready.append(h)
        # Graphviz keeps edges short: a node with at least as many edges out as in moves
        # next to the nearest node it feeds (an input's branch joins where it is used), one
        # with more in than out next to its latest input.
        pred: dict[str, list] = {g: [] for g in succ}
        for g in succ:
            for h in succ[g]:
                pred[h].append(g)
        for _ in range(8):
            moved = False
            for g in reversed(order):
                ins, outs = len(pred[g]), len(succ[g])
                if outs and outs >= ins:
                    new = min(rank[h] for h in succ[g]) - 1
                elif ins:
                    new = max(rank[h] for h in pred[g]) + 1
                else:
                    continue
                if new != rank[g]:
                    rank[g], moved = new, True
            if not moved:
                break
        low = min(rank.values(), default=0)
        return {n: rank[group[n]] - low for n in group}

    def extent(self, rankdir: str) -> tuple[float, float]:
        """Estimated (width, height) in inches in ``LR`` or ``TB``."""
        along = 0 if rankdir in ("LR", "RL") else 1  # the axis the ranks advance on
        rank = self._ranks()
        # A node with no edges (a legend) is set beyond the rest of its rank's row: it
        # makes its rank thicker and the whole drawing broader.
        linked = {n for a, b, _ in self.edges for n in (a, b)}
        apart = 0.0
        count = max(rank.values(), default=0) + 1
        thick = [0.0] * count
        broad = [0.0] * count
        members = [0] * count
        for n, (w, h) in self.size.items():
            r = rank[n]
            thick[r] = max(thick[r], (w, h)[along])
            if n in linked or len(self.size) == 1:
                broad[r] += (w, h)[1 - along]
                members[r] += 1
            else:
                apart += (w, h)[1 - along] + self.nodesep
        gaps = [self.ranksep] * max(count - 1, 0)
        for a, b, label in self.edges:
            lo, hi = sorted((rank[a], rank[b]))
            for r in range(lo, hi):  # a long edge passes each rank between as a point
                if r > lo:
                    broad[r] += 0.1
                    members[r] += 1
                if hi - lo == 1 and label[along] > 0:
                    gaps[r] = max(gaps[r], self.ranksep + label[along])
            if hi - lo == 1 and label[1 - along] > 0:
                broad[lo] += label[1 - along] / 2
        length = sum(thick) + sum(gaps)
        breadth = max((b + self.nodesep * max(m - 1, 0) for b, m in zip(broad, members)),
                      default=0.0)
        breadth += 0.3 * self.clusters + apart
        w, h = (length, breadth) if along == 0 else (breadth, length)
        w = max(w, self.title[0]) + 2 * self.pad
        h = h + self.title[1] + 2 * self.pad
        return max(w, 0.1), max(h, 0.1)
