"""TikZ export: a drawing as a ``tikzpicture`` for LaTeX notes, laid out by Graphviz."""
from __future__ import annotations

import html
import re

__all__ = ["tikz_picture"]


def tikz_picture(layout: dict) -> str:
    r"""A TikZ picture of Graphviz's JSON ``layout``: boxes, labels, colours, edge labels.

    Positions are Graphviz's (in points); text is converted to LaTeX (``∂`` becomes
    ``$\partial$``...), so the picture compiles with plain ``pdflatex`` and TikZ.

    Examples
    --------
    >>> layout = {"objects": [{"name": "a", "pos": "27,18", "label": "x²"},
    ...                       {"name": "b", "pos": "99,18", "label": "y"}],
    ...           "edges": [{"tail": 0, "head": 1}]}
    >>> print(tikz_picture(layout).splitlines()[2])
      \node[fill=white, draw=black] (n0) at (27.0,18.0) {x$^2$};
    """
    objs = layout.get("objects", [])
    lines = ["% symgrad drawing (TikZ); in the preamble: \\usepackage{tikz}",
             "\\begin{tikzpicture}[x=1pt, y=1pt, every node/.style={font=\\sffamily\\small,"
             " align=center, inner sep=3pt}]"]
    pos = {}
    for i, o in enumerate(objs):
        if "pos" not in o or o.get("name") == "legend" or "nodes" in o:
            continue
        x, y = (float(v) for v in o["pos"].split(","))
        pos[i] = (x, y)
        text = _latex_label(o.get("label", o.get("name", "")))
        style = o.get("style", "")
        opts = [f"fill={_tikz_color(o.get('fillcolor', 'white'))}",
                f"draw={_tikz_color(o.get('color', 'black'))}"]
        if "rounded" in style:
            opts.append("rounded corners=3pt")
        if "dashed" in style:
            opts.append("dashed")
        if o.get("shape") == "ellipse":
            opts.append("rounded corners=8pt")  # no shapes library needed
        lines.append(f"  \\node[{', '.join(opts)}] (n{i}) at ({x:.1f},{y:.1f}) {{{text}}};")
    for e in layout.get("edges", []):
        t, h = e.get("tail"), e.get("head")
        if t not in pos or h not in pos or e.get("style") == "invis":
            continue
        arrow = "<-" if e.get("dir") == "back" else "->"
        if e.get("arrowhead") == "none" or e.get("dir") == "none":
            arrow = "-"
        opts = [arrow, f"draw={_tikz_color(e.get('color', 'black'))}"]
        if "dashed" in e.get("style", ""):
            opts.append("dashed")
        label = _latex_label(e.get("label", ""))
        node = (f" node[midway, above, sloped, font=\\sffamily\\scriptsize] {{{label}}}"
                if label else "")
        lines.append(f"  \\draw[{', '.join(opts)}] (n{t}) --{node} (n{h});")
    lines.append("\\end{tikzpicture}")
    return "\n".join(lines) + "\n"


_LATEX = {"∂": "$\\partial$", "·": "$\\cdot$", "×": "$\\times$", "−": "$-$", "⟨": "$\\langle$",
          "⟩": "$\\rangle$", "√": "$\\surd$", "σ": "$\\sigma$", "‖": "$\\|$", "ᵀ": "$^T$",
          "≤": "$\\le$", "≥": "$\\ge$", "…": "\\dots{}", "↔": "$\\leftrightarrow$",
          "←": "$\\leftarrow$", "→": "$\\rightarrow$", "⁰": "$^0$", "¹": "$^1$", "²": "$^2$",
          "³": "$^3$", "⁴": "$^4$", "⁵": "$^5$", "⁶": "$^6$", "⁷": "$^7$", "⁸": "$^8$",
          "⁹": "$^9$", "⁻": "$^-$", "_": "\\_", "#": "\\#", "%": "\\%", "&": "\\&",
          "{": "\\{", "}": "\\}", "^": "\\^{}", "~": "\\~{}", "$": "\\$", "\\": "\\textbackslash{}"}


def _latex_label(label: str) -> str:
    """Graphviz (HTML-like) label text as LaTeX: rows become ``\\\\``, <B> becomes bold."""
    rows = []
    for row in re.split(r"<BR[^>]*>|</TR>", label):
        bold = "<B>" in row
        text = html.unescape(re.sub(r"<[^>]+>", "", row)).strip()
        if not text:
            continue
        text = "".join(_LATEX.get(ch, ch) for ch in text)
        rows.append(f"\\textbf{{{text}}}" if bold else text)
    return "\\\\".join(rows)


def _tikz_color(fill: str) -> str:
    fill = fill.lstrip("#")
    if len(fill) == 6:
        try:
            r, g, b = (int(fill[i:i + 2], 16) for i in (0, 2, 4))
        except ValueError:
            return "white"
        return f"{{rgb,255:red,{r};green,{g};blue,{b}}}"
    return fill or "white"
