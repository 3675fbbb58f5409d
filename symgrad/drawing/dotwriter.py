"""DOT text, statement by statement: nodes with HTML-like labels, edges, the legend.

Plain text only: ``.source`` needs no Graphviz.

Examples
--------
>>> from symgrad.drawing.themes import THEMES
>>> dot = DotWriter(THEMES["light"], "LR", None, 12)
>>> dot.node("a", "leaf", [("x", "title")], tooltip="leaf x")
>>> dot.edge("a", "b", kind="grad", back=True)
>>> print(dot.source("backward").splitlines()[-2])
  a -> b [dir=back, color="#b03a2e", penwidth=1.4]
"""
from __future__ import annotations

import html

from .themes import KIND_TEXT, Theme

__all__ = ["DotWriter", "check_rankdir", "esc", "multiline"]


def esc(text: str) -> str:
    """``text`` escaped for a DOT HTML-like label or a quoted attribute."""
    return html.escape(str(text), quote=True)


def multiline(text: str) -> str:
    """HTML-label text with line breaks (left-aligned continuation lines)."""
    return '<BR ALIGN="LEFT"/>'.join(esc(line) for line in str(text).split("\n"))


class DotWriter:
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
                cells.append(f"<TR><TD><B>{multiline(text)}</B></TD></TR>")
            elif kind_of_row == "small":
                cells.append(f'<TR><TD><FONT POINT-SIZE="{self.fontsize - 2}">'
                             f"{multiline(text)}</FONT></TD></TR>")
            elif kind_of_row == "grad":
                self.grad_text = self.grad_text or "leaf: accumulated .grad"
                cells.append(f'<TR><TD><FONT COLOR="{t.grad}">{multiline(text)}'
                             "</FONT></TD></TR>")
            else:
                cells.append(f"<TR><TD>{multiline(text)}</TD></TR>")
        label = ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
                 + "".join(cells) + "</TABLE>>")
        self.lines.append(
            f'{indent}{key} [label={label}, shape={shape}, style="{style}", '
            f'fillcolor="{fill}", color="{border}", penwidth={penwidth}, '
            f'fontcolor="{fontcolor}", tooltip="{esc(tooltip)}"]')

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
                         f"{multiline(label)}</FONT>>")
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
                        f'{esc(KIND_TEXT[kind])}</TD></TR>')
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
                        f'<TD ALIGN="LEFT">{esc(text)}</TD></TR>')
        if self.grad_text:
            rows.append(f'<TR><TD><FONT COLOR="{t.grad}"><B>grad</B></FONT></TD>'
                        f'<TD ALIGN="LEFT">{esc(self.grad_text)}</TD></TR>')
        for key, text in self.notes.items():
            rows.append(f'<TR><TD><FONT COLOR="{t.grad}">{esc(key)}</FONT></TD>'
                        f'<TD ALIGN="LEFT">{esc(text)}</TD></TR>')
        if self.highlight_used:
            rows.append(f'<TR><TD COLOR="{t.highlight}" BORDER="3" WIDTH="26" HEIGHT="14">'
                        '</TD><TD ALIGN="LEFT">node running now (grey: not run or not sent yet)'
                        '</TD></TR>')
        if order_names and len(self.orders_used) > 1:
            for k in sorted(self.orders_used):
                color = t.orders[min(k, len(t.orders) - 1)]
                width = 1 if k == 0 else 3
                rows.append(f'<TR><TD BGCOLOR="{t.bg}" COLOR="{color}" BORDER="{width}" '
                            f'WIDTH="26" '
                            f'HEIGHT="14"></TD><TD ALIGN="LEFT">'
                            f"{esc(order_names[k] if k < len(order_names) else f'order {k}')}"
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

    def cluster(self, name: str, title: str) -> None:
        """Open ``subgraph cluster_<name>``, a framed group titled ``title``."""
        t = self.theme
        self.lines.append(f"  subgraph cluster_{name} {{")
        self.lines.append(f'    label=<<B>{esc(title)}</B>>; color="{t.muted}"; '
                          f'fontcolor="{t.fg}"; style="rounded"; penwidth=0.8')

    def end_cluster(self) -> None:
        self.lines.append("  }")

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
        return (f', label=<<B>{multiline(self.title)}</B>>, labelloc=t, labeljust=c, '
                f"fontsize={self.fontsize + 4}")


def check_rankdir(rankdir: str) -> str:
    r = rankdir.upper()
    if r not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"rankdir must be one of 'LR', 'RL', 'TB', 'BT', got {rankdir!r}")
    return r
