"""Drawing styles: the colours and fonts of each kind of node, and what the legend calls it.

Examples
--------
>>> from symgrad.drawing.themes import theme_named
>>> theme_named("dark").bg, theme_named("greyscale").name
('#1e1e1e', 'print')
"""
from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

__all__ = ["Theme", "THEMES", "KIND_TEXT", "theme_named"]


@dataclass(eq=False)
class Theme:
    """Colours and fonts of one drawing style, keyed by node kind.

    ``kinds`` maps a node kind to its (fill, border, style); ``orders`` is the border colour
    per derivative order; ``tangent`` the colour of forward mode's tangents (ẋ), beside the
    gradients' ``grad``.
    """

    name: str
    _: KW_ONLY
    bg: str
    fg: str
    edge: str
    grad: str
    muted: str
    kinds: dict[str, tuple[str, str, str]]
    orders: tuple[str, ...]
    highlight: str
    font: str = "Helvetica,Arial,sans-serif"
    tangent: str = "#1f5fbf"


KIND_TEXT = {
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

# The four themes, one column each: light, dark, print (greyscale: kinds differ by shade
# *and* border style, so photocopies stay readable), colorblind (the Okabe-Ito palette,
# distinguishable under the common colour-vision deficiencies).
_NAMES = ("light", "dark", "print", "colorblind")
# Each kind's "fill border" per theme; "many nodes drawn as one" takes the op's colours.
_KIND_COLOURS = {
    "output": ("#d9ead3 #38761d", "#274e13 #b6d7a8", "#bfbfbf black", "#fbe6bf #e69f00"),
    "leaf": ("#cfe2f3 #1f5f99", "#1c4587 #9fc5e8", "#e0e0e0 black", "#cce3f3 #0072b2"),
    "tensor": ("#ffffff #4d4d4d", "#2b2b2b #bdbdbd", "white black", "#ffffff #333333"),
    "const": ("#f7f7f7 #8c8c8c", "#1e1e1e #9e9e9e", "white #595959", "#f7f7f7 #7f7f7f"),
    "fwd_op": ("#fff2cc #9c7a00", "#5c4a00 #ffe599", "#f0f0f0 black", "#f8f4c6 #8a7f00"),
    "op": ("#eeeeee #4d4d4d", "#383838 #bdbdbd", "white black", "#eeeeee #333333"),
    "accumulate": ("#d9d9d9 #4d4d4d", "#4a4a4a #bdbdbd", "#d9d9d9 black", "#d9d9d9 #333333"),
    "saved": ("#fce5cd #c55a11", "#783f04 #f9cb9c", "white black", "#f2d9e7 #cc79a7"),
}
# Each kind's box style; the print theme's bold and dotted borders stand for colours.
_STYLES = {"output": "filled,rounded", "leaf": "filled,rounded", "tensor": "filled,rounded",
           "const": "filled,dashed", "fwd_op": "filled", "op": "filled,rounded",
           "accumulate": "filled", "saved": "filled,rounded",
           "collapsed": "filled,rounded,dashed"}
_PRINT_STYLES = dict(_STYLES, output="filled,rounded,bold", leaf="filled,rounded,bold",
                     op="filled,rounded,bold", saved="filled,rounded,dotted")
# Per theme: background, text, edges, gradients, muted text, highlight, tangents.
_COLOURS = ("bg", "fg", "edge", "grad", "muted", "highlight", "tangent")
_SCREEN = (("white", "#1a1a1a", "#4d4d4d", "#b03a2e", "#8c8c8c", "#d62728", "#1f5fbf"),
           ("#1e1e1e", "#eeeeee", "#bdbdbd", "#ff8a80", "#9e9e9e", "#ffd54f", "#82b1ff"),
           ("white", "black", "black", "black", "#595959", "black", "black"),
           ("white", "#000000", "#333333", "#d55e00", "#7f7f7f", "#d55e00", "#0072b2"))
# Per theme: the border colour of each derivative order.
_ORDERS = (("#4d4d4d", "#7b3294", "#008837", "#e66101"),
           ("#bdbdbd", "#c39bd3", "#7dcea0", "#f5b041"),
           ("black", "#404040", "#707070", "#a0a0a0"),
           ("#333333", "#d55e00", "#009e73", "#cc79a7"))


def _theme(k: int) -> Theme:
    """The ``k``-th theme of the tables above."""
    styles = _PRINT_STYLES if _NAMES[k] == "print" else _STYLES
    colours = dict(_KIND_COLOURS, collapsed=_KIND_COLOURS["op"])
    kinds = {kind: (*pairs[k].split(), styles[kind]) for kind, pairs in colours.items()}
    return Theme(_NAMES[k], **dict(zip(_COLOURS, _SCREEN[k])), kinds=kinds,
                 orders=_ORDERS[k])


THEMES: dict[str, Theme] = {name: _theme(k) for k, name in enumerate(_NAMES)}
THEMES["colourblind"] = THEMES["colour-blind"] = THEMES["color-blind"] = THEMES["colorblind"]
THEMES["greyscale"] = THEMES["grayscale"] = THEMES["print"]


def theme_named(theme: str | Theme) -> Theme:
    """The theme called ``theme`` (a :class:`Theme` is returned as it is)."""
    if isinstance(theme, Theme):
        return theme
    try:
        return THEMES[theme]
    except KeyError:
        raise ValueError(f"unknown theme {theme!r}; choose one of 'light', 'dark', "
                         "'print', 'colorblind'") from None
