"""Row styles put back on an SVG drawn from plain labels.

Graphviz compiled to WebAssembly has no HTML-like labels, so :mod:`.dotwriter` gives it
each node's rows as plain lines and their styles in the node's class: ``sgrows_tsb``
(one letter a line: ``t`` title, ``s`` small, ``g`` gradient, ``b`` body),
``sggrad_b03a2e`` (the gradient colour) and, in the legend, ``sgsw_3_fff2cc_9c7a00_r1``
(a sample box at the start of line 3: fill, border, rounded or dashed, border width).
Graphviz writes one ``<text>`` a line, in order, so each line gets its style back.

A node with a title is laid out in a wider face (:data:`ROOMY_FONT`, so the box has room
for its title once it is bold) and drawn in Helvetica.

Examples
--------
>>> svg = ('<g id="node1" class="node sgrows_tb"><title>a</title>'
...        '<text x="1" font-size="12.00">x</text><text x="1" font-size="12.00">4</text></g>')
>>> print(restyle(svg))
<g id="node1" class="node sgrows_tb"><title>a</title><text font-weight="bold" x="1" \
font-size="12.00">x</text><text font-weight="normal" x="1" font-size="12.00">4</text></g>
"""
from __future__ import annotations

import re

__all__ = ["restyle", "row_styles", "LAYOUT_FONT", "ROOMY_FONT", "TITLE_FONT"]

#: Fonts of plain labels.  Graphviz without fontconfig measures text with metrics it has
#: built in, right for Helvetica (Arial's widths); a node with a bold title is measured in
#: a wider face, so the box has room for the title once it is bold, and drawn in
#: Helvetica; titles say bold by their PostScript name.
LAYOUT_FONT = "Helvetica"
ROOMY_FONT = "DejaVu Sans"
TITLE_FONT = "Helvetica-Bold"
_FAMILY = 'font-family="Helvetica, Arial, sans-serif"'

_NODE = re.compile(r'(<g id="[^"]*" class="node ([^"]*)">)(.*?)(</g>)', re.S)
_TEXT = re.compile(r"<text\b([^>]*)>")
_NUMBER = r'="(-?[\d.]+)"'
_SWATCH = re.compile(r"sgsw_(\d+)_(\w+)_(\w+)_([rd]*)(\d)")


def restyle(svg: str) -> str:
    """``svg`` with each plain-labelled node's text lines styled as its rows say, and
    every text in a font list that SVG renderers without fontconfig read too."""
    return _NODE.sub(_node, svg).replace('font-family="Helvetica,sans-Serif"', _FAMILY)


def row_styles(classes: str) -> tuple[str, str, dict] | None:
    """What a plain-labelled node's class says: one style letter a line, the gradient
    colour, and the legend's swatches by line; None for any other node.

    Examples
    --------
    >>> row_styles("node sgrows_tbg sggrad_b03a2e sgsw_1_ffffff_4d4d4d_r1")
    ('tbg', '#b03a2e', {1: ('#ffffff', '#4d4d4d', 'r', '1')})
    """
    names = classes.replace("&#45;", "-").split()
    letters = next((c[7:] for c in names if c.startswith("sgrows_")), "")
    if not letters:
        return None
    grad = next((_colour(c[7:]) for c in names if c.startswith("sggrad_")), "none")
    swatches = {int(m[1]): (_colour(m[2]), _colour(m[3]), m[4], m[5])
                for m in map(_SWATCH.fullmatch, names) if m}
    return letters, grad, swatches


def _node(m: re.Match) -> str:
    styles = row_styles(m.group(2))
    if styles is None:
        return m.group(0)
    letters, grad, swatches = styles
    line = iter(range(1 << 30))

    def style(t: re.Match) -> str:
        i = next(line)
        attrs = re.sub(r' font-weight="[^"]*"', "", t.group(1))
        attrs = re.sub(r'font-family="[^"]*"', _FAMILY, attrs)
        letter = letters[i] if i < len(letters) else "b"
        box = _swatch(attrs, *swatches[i]) if i in swatches else ""
        if letter == "t":
            return f'{box}<text font-weight="bold"{attrs}>'
        if letter == "s":
            size = re.sub(r'font-size' + _NUMBER,
                          lambda s: f'font-size="{float(s.group(1)) - 2:.2f}"', attrs)
            return f'{box}<text font-weight="normal"{size}>'
        if letter == "g":
            attrs = re.sub(r' fill="[^"]*"', "", attrs)
            return f'{box}<text font-weight="normal" fill="{grad}"{attrs}>'
        return f'{box}<text font-weight="normal"{attrs}>'

    return m.group(1) + _TEXT.sub(style, m.group(3)) + m.group(4)


def _colour(token: str) -> str:
    """A colour from a class token: ``b03a2e`` -> ``#b03a2e``, ``white`` as it is."""
    if re.fullmatch(r"[0-9a-fA-F]{6}", token):
        return "#" + token
    return token if token.isalpha() else "none"


def _swatch(attrs: str, fill: str, border: str, flags: str, width: str) -> str:
    """A legend's sample box at the start of its line (the line leaves room for it)."""
    x, y, size = (float(re.search(name + _NUMBER, attrs).group(1))
                  for name in (" x", " y", "font-size"))
    rounded = ' rx="3"' if "r" in flags else ""
    dashed = ' stroke-dasharray="3,2"' if "d" in flags else ""
    return (f'<rect x="{x:.2f}" y="{y - 0.85 * size:.2f}" width="{1.9 * size:.2f}" '
            f'height="{1.1 * size:.2f}" fill="{fill}" stroke="{border}" '
            f'stroke-width="{width}"{rounded}{dashed}/>')
