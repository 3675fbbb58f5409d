"""DOT text, statement by statement: nodes, edges, clusters, the legend.

Every label is written in two forms from the same rows: HTML-like (bold titles, small
meta lines, coloured gradients) for Graphviz's ``dot`` program, and plain text for
Graphviz compiled to WebAssembly, which has no HTML-like labels (it is built without
expat).  A plain node carries its rows' styles in its ``class``; :mod:`.svgstyle` puts
them back on the SVG's text, so both renderers show the same text, styled alike.
Edge labels, titles and the legend need no HTML at all.  User text reaches DOT only
through :func:`esc` (HTML-like labels) and :func:`quoted` (quoted strings).

Plain text only: ``.source`` needs no Graphviz.

Examples
--------
>>> from symgrad.drawing.themes import THEMES
>>> dot = DotWriter(THEMES["light"], "LR", None, 12)
>>> dot.node("a", "leaf", [("x", "title")], tooltip="leaf x")
>>> dot.edge("a", "b", kind="grad", back=True)
>>> src = dot.source("backward")
>>> print(src.splitlines()[-2])
  a -> b [dir=back, color="#b03a2e", penwidth=1.4]
>>> print(src.plain.splitlines()[-3].split(",")[0])
  a [label="x"
"""
from __future__ import annotations

import html
import re

from .svgstyle import LAYOUT_FONT, ROOMY_FONT, TITLE_FONT
from .themes import KIND_TEXT, Theme

__all__ = ["DotWriter", "DotSource", "check_rankdir", "esc", "quoted", "visible",
           "MAX_LINE"]

#: Characters of one line of user text shown in a drawing; longer lines end in "…".
MAX_LINE = 240
_CONTROL = {c: chr(0x2400 + c) for c in range(32) if c != 10}
_CONTROL[127] = "\u2421"
_ROW_LETTER = {"title": "t", "small": "s", "grad": "g", "tangent": "g"}
#: Room for a legend swatch at the start of a plain line (svgstyle draws it there).
_SWATCH_ROOM = "\u2007" * 6 + " "
#: What the legend says of each kind of edge: its glyph and meaning.
_EDGE_TEXT = {"grad": ("←——", "gradient flow (arrow: where the gradient goes)"),
              "data": ("——→", "data flow (forward)"),
              "saved": ("- - →", "saved for backward"),
              "link": ("- - -", "tensor ↔ its grad_fn"),
              "const": ("- - -", "input that needs no gradient (None)")}


def visible(text: object, limit: int = MAX_LINE) -> str:
    """``text`` with every line clipped to ``limit`` characters and control characters
    shown as their visible symbols (``␛`` for ESC); line breaks stay.

    Examples
    --------
    >>> visible("a\\x1bb\\tc")
    'a␛b␉c'
    """
    text = str(text).encode("utf-8", "replace").decode("utf-8")
    lines = [line if len(line) <= limit else line[:limit - 1] + "…"
             for line in text.split("\n")]
    return "\n".join(lines).translate(_CONTROL)


def esc(text: object) -> str:
    """``text`` as the content of a DOT HTML-like label (line breaks are the caller's).

    Examples
    --------
    >>> esc('<b> & "x"')
    '&lt;b&gt; &amp; &quot;x&quot;'
    >>> esc(chr(92)) == 2 * chr(92)
    True
    """
    # Graphviz expands \N, \G... inside HTML-like labels too: a backslash is doubled
    return html.escape(visible(text), quote=True).replace("\\", "\\\\")


def quoted(text: object, newline: str = "\\n") -> str:
    """``text`` as a DOT quoted string: backslashes, quotes and ``&`` escaped, so Graphviz
    shows exactly the text; line breaks become ``newline`` (``\\n`` centred, ``\\l``
    left-aligned).

    Examples
    --------
    >>> print(quoted('say "hi" \\\\ &amp;'))
    "say \\"hi\\" \\\\ &amp;amp;"
    """
    body = (visible(text).replace("&", "&amp;").replace("\\", "\\\\")
            .replace('"', '\\"').replace("\n", newline))
    return f'"{body}"'


def multiline(text: str) -> str:
    """HTML-label text with line breaks (left-aligned continuation lines)."""
    return '<BR ALIGN="LEFT"/>'.join(esc(line) for line in visible(text).split("\n"))


def _plain_lines(text: str) -> str:
    """Plain-label text of one row: continuation lines left-aligned, as in HTML."""
    return "\\l".join(quoted(line)[1:-1] for line in visible(text).split("\n"))


def _colour_token(colour: str) -> str:
    """A colour as a class name can carry it: ``#b03a2e`` -> ``b03a2e``."""
    return colour.lstrip("#") if re.fullmatch(r"#?[0-9A-Za-z]+", colour) else "none"


class DotSource(str):
    """DOT text (HTML-like labels) that also carries its plain-label form, ``.plain``,
    for renderers without HTML-like labels."""

    plain: str

    def __new__(cls, html_text: str, plain: str) -> "DotSource":
        self = super().__new__(cls, html_text)
        self.plain = plain
        return self


class DotWriter:
    """Accumulates DOT statements (plain text: ``.source`` needs no Graphviz).

    ``lines`` holds plain strings (the same in both forms) or ``(html, plain)`` pairs.
    """

    def __init__(self, theme: Theme, rankdir: str, title: str | None, fontsize: int) -> None:
        self.theme = theme
        self.lines: list = []
        self.kinds_used: list[str] = []
        self.orders_used: set[int] = set()
        self.rankdir = rankdir
        self.title = title
        self.fontsize = fontsize
        self.edge_kinds: list[str] = []
        self.grad_text = ""
        self.notes: dict[str, str] = {}
        self.tangent_notes: dict[str, str] = {}  # legend lines in the tangent colour
        self.highlight_used = False
        self.highlight_text = "node running now (grey: not run or not sent yet)"

    def use(self, kind: str) -> None:
        if kind not in self.kinds_used:
            self.kinds_used.append(kind)

    def node(self, key: str, kind: str, rows: list, *, tooltip: str, order: int | None = None,
             highlight: bool = False, faded: bool = False, shape: str = "box",
             indent: str = "  ") -> None:
        """``rows``: list of (text, style) with style 'title', 'body', 'small', 'grad',
        'tangent' (forward mode's ẋ, in the theme's tangent colour)."""
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
        if any(r == "grad" for _, r in rows):
            self.grad_text = self.grad_text or "leaf: accumulated .grad"
        attrs = (f'shape={shape}, style="{style}", fillcolor="{fill}", color="{border}", '
                 f'penwidth={penwidth}, fontcolor="{fontcolor}", tooltip={quoted(tooltip)}')
        self.lines.append((f"{indent}{key} [label={self._html_label(rows)}, {attrs}]",
                           f"{indent}{key} [label={self._plain_label(rows)}, {attrs}]"))

    def _html_label(self, rows: list, left: bool = False) -> str:
        cells = []
        td = '<TD ALIGN="LEFT">' if left else "<TD>"
        for text, kind_of_row in rows:
            if kind_of_row == "title":
                cells.append(f"<TR>{td}<B>{multiline(text)}</B></TD></TR>")
            elif kind_of_row == "small":
                cells.append(f'<TR>{td}<FONT POINT-SIZE="{self.fontsize - 2}">'
                             f"{multiline(text)}</FONT></TD></TR>")
            elif kind_of_row in ("grad", "tangent"):
                colour = self.theme.grad if kind_of_row == "grad" else self.theme.tangent
                cells.append(f'<TR>{td}<FONT COLOR="{colour}">{multiline(text)}'
                             "</FONT></TD></TR>")
            else:
                cells.append(f"<TR>{td}{multiline(text)}</TD></TR>")
        return ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
                + "".join(cells) + "</TABLE>>")

    def _plain_label(self, rows: list, left: bool = False) -> str:
        """The rows as one plain label; their styles go in the class (see svgstyle)."""
        texts, letters = [], ""
        for text, kind_of_row in rows:
            texts.append(_plain_lines(text))
            letters += _ROW_LETTER.get(kind_of_row, "b") * (visible(text).count("\n") + 1)
        cls = f"sgrows_{letters}"
        if "g" in letters:  # (a node has gradients or tangents, never both: one colour)
            tangents = any(r == "tangent" for _, r in rows)
            colour = self.theme.tangent if tangents else self.theme.grad
            cls += f" sggrad_{colour.lstrip('#')}"
        label = "\\l".join(texts) + "\\l" if left else "\\n".join(texts)
        # laid out in a wider face where a title is, so the box has room for it in bold
        font = f', fontname="{ROOMY_FONT}"' if "t" in letters else ""
        return f'"{label}", class="{cls}"{font}'

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
            lines = visible(label).split("\n")
            text = quoted(label, "\\l") if len(lines) == 1 else quoted(label + "\n", "\\l")
            attrs.append(f'label={text}, fontsize={self.fontsize - 2}, fontcolor="{lc}"')
        if extra:
            attrs.append(extra)
        self.lines.append(f"{indent}{tail} -> {head} [{', '.join(attrs)}]")

    def legend(self, anchor: str | None, order_names: list[str] | None) -> None:
        """One node: a row for each colour and kind of edge used, saying what it is."""
        t = self.theme
        entries = []  # (swatch (fill, border, style, width) or None, glyph, colour, text)
        for kind in self.kinds_used:
            fill, border, style = t.kinds[kind]
            entries.append(((fill, border, style, 1), None, None, KIND_TEXT[kind]))
        colours = {"grad": t.grad, "data": t.edge, "saved": t.kinds["saved"][1],
                   "link": t.muted, "const": t.muted}
        for kind in self.edge_kinds:
            glyph, text = _EDGE_TEXT[kind]
            entries.append((None, glyph, colours[kind], text))
        if self.grad_text:
            entries.append((None, "grad", t.grad, self.grad_text))
        entries += [(None, key, t.grad, text) for key, text in self.notes.items()]
        entries += [(None, key, t.tangent, text) for key, text in self.tangent_notes.items()]
        if self.highlight_used:
            entries.append(((t.bg, t.highlight, "", 3), None, None, self.highlight_text))
        if order_names and len(self.orders_used) > 1:
            for k in sorted(self.orders_used):
                entries.append(((t.bg, t.orders[min(k, len(t.orders) - 1)], "",
                                 1 if k == 0 else 3), None, None,
                                order_names[k] if k < len(order_names) else f"order {k}"))
        if not entries:
            return
        attrs = f'fontcolor="{t.fg}", tooltip="legend"'
        self.lines.append((f"  legend [label={self._html_legend(entries)}, shape=plaintext, "
                           f"{attrs}]",
                           f"  legend [label={self._plain_legend(entries)}, shape=box, "
                           f'style="rounded", color="{t.muted}", margin="0.12,0.08", '
                           f"{attrs}]"))
        if self.rankdir in ("TB", "BT"):  # beside the first rank, not under the graph
            self.lines.append("  {rank=min; legend}")
        elif anchor is not None:  # beside the output
            self.lines.append(f"  {anchor} -> legend [style=invis]")

    def _html_legend(self, entries: list) -> str:
        rows = []
        for swatch, glyph, colour, text in entries:
            if swatch:
                fill, border, style, width = swatch
                rounded = ' STYLE="rounded"' if "rounded" in style else ""
                first = (f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="{width}" WIDTH="26" '
                         f'HEIGHT="14"{rounded}></TD>')
            else:
                first = f'<TD><FONT COLOR="{colour}"><B>{esc(glyph)}</B></FONT></TD>'
            rows.append(f'<TR>{first}<TD ALIGN="LEFT">{esc(text)}</TD></TR>')
        return (f'<<TABLE BORDER="1" COLOR="{self.theme.muted}" CELLBORDER="0" '
                f'CELLSPACING="3" CELLPADDING="2"><TR><TD COLSPAN="2"><B>Legend</B></TD></TR>'
                + "".join(rows) + "</TABLE>>")

    def _plain_legend(self, entries: list) -> str:
        """The legend as plain lines; svgstyle draws each swatch and colours each glyph
        from the class (``sgsw_<line>_<fill>_<border>_<r|d><width>``)."""
        lines, letters, classes = ["Legend"], "t", ["sglegend"]
        for i, (swatch, glyph, colour, text) in enumerate(entries, start=1):
            if swatch:
                fill, border, style, width = swatch
                flags = ("r" if "rounded" in style else "") + ("d" if "dashed" in style
                                                              else "")
                classes.append(f"sgsw_{i}_{_colour_token(fill)}_{_colour_token(border)}_"
                               f"{flags}{width}")
                lines.append(_SWATCH_ROOM + text)
                letters += "b"
            else:
                lines.append(f"{glyph}  {text}")
                letters += "g" if colour == self.theme.grad else "b"
        label = "\\l".join(quoted(line)[1:-1] for line in lines) + "\\l"
        cls = " ".join([f"sgrows_{letters}", f"sggrad_{_colour_token(self.theme.grad)}",
                        *classes])
        return f'"{label}", class="{cls}", fontname="{ROOMY_FONT}"'

    def cluster(self, name: str, title: str) -> None:
        """Open ``subgraph cluster_<name>``, a framed group titled ``title``."""
        t = self.theme
        self.lines.append(f"  subgraph cluster_{name} {{")
        rest = f'color="{t.muted}"; fontcolor="{t.fg}"; style="rounded"; penwidth=0.8'
        self.lines.append((f"    label=<<B>{esc(title)}</B>>; {rest}",
                           f"    label={quoted(title)}; {rest}"))

    def end_cluster(self) -> None:
        self.lines.append("  }")

    def source(self, name: str) -> DotSource:
        """The DOT text, with its plain-label form as ``.plain``."""
        return DotSource(self._text(name, 0), self._text(name, 1))

    def _text(self, name: str, form: int) -> str:
        t = self.theme
        # Plain labels are laid out with the font metrics Graphviz has built in
        # (Helvetica); the graph's font is its titles' (bold where <B> cannot be said).
        font, title_font = (t.font, t.font) if form == 0 else (LAYOUT_FONT, TITLE_FONT)
        head = [f"digraph {name} {{",
                f'  graph [rankdir={self.rankdir}, bgcolor="{t.bg}", fontname="{title_font}", '
                f'fontcolor="{t.fg}", nodesep=0.35, ranksep=0.45, pad=0.25, '
                f'newrank=true{self._title(form)}]',
                f'  node [fontname="{font}", fontsize={self.fontsize}, margin="0.12,0.06"]',
                f'  edge [fontname="{font}", fontsize={self.fontsize - 2}, '
                f'arrowsize=0.8]']
        body = [line if isinstance(line, str) else line[form] for line in self.lines]
        return "\n".join(head + body + ["}"]) + "\n"

    def _title(self, form: int) -> str:
        if not self.title:
            return ""
        label = (f"<<B>{multiline(self.title)}</B>>" if form == 0 else
                 f'"{_plain_lines(self.title)}"')
        return f", label={label}, labelloc=t, labeljust=c, fontsize={self.fontsize + 4}"


def check_rankdir(rankdir: str) -> str:
    r = rankdir.upper()
    if r not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"rankdir must be one of 'LR', 'RL', 'TB', 'BT', got {rankdir!r}")
    return r
