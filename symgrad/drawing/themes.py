"""Drawing styles: the colours and fonts of each kind of node, and what the legend calls it.

Examples
--------
>>> from symgrad.drawing.themes import theme_named
>>> theme_named("dark").bg, theme_named("greyscale").name
('#1e1e1e', 'print')
"""
from __future__ import annotations

__all__ = ["Theme", "THEMES", "KIND_TEXT", "theme_named"]


class Theme:
    """Colours and fonts of one drawing style, keyed by node kind."""

    def __init__(self, name: str, *, bg: str, fg: str, edge: str, grad: str, muted: str,
                 kinds: dict[str, tuple[str, str, str]], orders: tuple[str, ...],
                 highlight: str, font: str = "Helvetica,Arial,sans-serif",
                 tangent: str = "#1f5fbf") -> None:
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
        self.tangent = tangent  # forward mode's tangents (ẋ), beside the gradients' colour


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
        tangent="#82b1ff",
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
        tangent="black",
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
        tangent="#0072b2",
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


def theme_named(theme: str | Theme) -> Theme:
    """The theme called ``theme`` (a :class:`Theme` is returned as it is)."""
    if isinstance(theme, Theme):
        return theme
    try:
        return THEMES[theme]
    except KeyError:
        raise ValueError(f"unknown theme {theme!r}; choose one of 'light', 'dark', "
                         "'print', 'colorblind'") from None
