r"""TikZ export: a drawing as a ``tikzpicture`` for LaTeX notes, and a backward pass as a
Beamer document with a frame per step -- both drawn from Graphviz's JSON layout.

The picture repeats what Graphviz draws (its ``_draw_`` operations: polygons, ellipses,
Bézier curves, arrowheads in their colours; its ``_ldraw_`` text at its place, size and
weight), so boxes, routes and labels are Graphviz's own and it compiles with plain
``pdflatex`` and TikZ.  Every piece of text, whatever it holds, goes through
:func:`latex_text`, the one escape for LaTeX.

Examples
--------
>>> print(latex_text("∂f/∂x = 2·x_1 & 50% {ok}"))
$\partial$f/$\partial$x = 2$\cdot$x\_1 \& 50\% \{ok\}
>>> layout = {"objects": [{"name": "a", "pos": "27,18", "label": "x²"}], "edges": []}
>>> print(tikz_picture(layout).splitlines()[2])
  \node[draw] at (27.00,18.00) {x$^2$};
"""
from __future__ import annotations

import html
import re
import unicodedata

from .svgstyle import row_styles

__all__ = ["tikz_picture", "beamer_document", "latex_text"]

_GREEK = {name: f"$\\{name}$" for name in (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma "
    "tau upsilon phi chi psi omega").split()}
_LATEX = {"∂": "$\\partial$", "·": "$\\cdot$", "×": "$\\times$", "−": "$-$", "⟨": "$\\langle$",
          "⟩": "$\\rangle$", "√": "$\\surd$", "‖": "$\\|$", "ᵀ": "$^T$", "≤": "$\\le$",
          "≥": "$\\ge$", "…": "\\dots{}", "↔": "$\\leftrightarrow$", "←": "$\\leftarrow$",
          "→": "$\\rightarrow$", "⁻": "$^-$", "∑": "$\\sum$", "∞": "$\\infty$",
          "≠": "$\\ne$", "≈": "$\\approx$", "±": "$\\pm$", "—": "---", "–": "--",
          "_": "\\_", "#": "\\#", "%": "\\%", "&": "\\&", "{": "\\{", "}": "\\}",
          "^": "\\^{}", "~": "\\~{}", "$": "\\$", "\\": "\\textbackslash{}",
          "<": "\\textless{}", ">": "\\textgreater{}", "|": "\\textbar{}", '"': "''",
          "\u00a0": "~", "\u2007": "\\enspace{}"}
_LATEX.update({s: f"$^{d}$" for d, s in zip("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")})
_LATEX.update({s: f"$_{d}$" for d, s in zip("0123456789", "₀₁₂₃₄₅₆₇₈₉")})


def latex_text(text: object) -> str:
    r"""``text`` as LaTeX that typesets it as it reads: special characters escaped, the
    symbols of drawings (``∂ · × ⟨⟩ ²``, Greek letters) in math mode, accented Latin
    letters kept (pdflatex reads UTF-8), anything else pdflatex cannot typeset shown as
    ``?``; control characters dropped.

    Examples
    --------
    >>> latex_text(r"\input{/etc/passwd} β·x²")
    '\\textbackslash{}input\\{/etc/passwd\\} $\\beta$$\\cdot$x$^2$'
    """
    out = []
    for ch in str(text):
        if ch in _LATEX:
            out.append(_LATEX[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ch in "\n\t":
            out.append(" ")
        elif unicodedata.category(ch).startswith("C"):
            continue
        else:
            name = unicodedata.name(ch, "")
            greek = name.split()[-1].lower() if name.startswith("GREEK SMALL LETTER") else ""
            if greek in _GREEK:
                out.append(_GREEK[greek])
            elif name.startswith("GREEK CAPITAL LETTER") and name.split()[-1].lower() in (
                    "gamma", "delta", "theta", "lambda", "xi", "pi", "sigma", "upsilon",
                    "phi", "psi", "omega"):
                out.append(f"$\\{name.split()[-1].capitalize()}$")
            elif "\u00c0" <= ch <= "\u017f" and unicodedata.category(ch).startswith("L"):
                out.append(ch)  # Latin-1 and Latin Extended-A: pdflatex's utf8 has them
            else:
                out.append("?")
    return "".join(out)


def tikz_picture(layout: dict, title: bool = True) -> str:
    r"""A TikZ picture of Graphviz's JSON ``layout`` (``dot -Tjson``), positions in points.

    Shapes, edges, arrowheads and text are Graphviz's drawing operations; an object
    without them (a hand-made layout) is drawn as a framed node at its ``pos``.  With
    ``title=False`` the graph's own label is left out.
    """
    lines = ["% symgrad drawing (TikZ); in the preamble: \\usepackage{tikz}",
             "\\begin{tikzpicture}[x=1pt, y=1pt, every node/.style={font=\\sffamily, "
             "inner sep=0pt, outer sep=0pt}]"]
    try:  # Graphviz's bounding box is the picture's, whatever is drawn in it
        x0, y0, x1, y1 = (float(v) for v in layout["bb"].split(","))
        lines.append(f"  \\path[use as bounding box] ({x0:.2f},{y0:.2f}) rectangle "
                     f"({max(x1, x0 + 1):.2f},{max(y1, y0 + 1):.2f});")
    except (KeyError, ValueError):
        pass
    parts = [layout] + [o for o in layout.get("objects", ()) if "nodes" in o]
    parts += [o for o in layout.get("objects", ()) if "nodes" not in o]
    parts += list(layout.get("edges", ()))
    for part in parts:
        if part.get("style") == "invis":
            continue
        ops = [op for key in ("_draw_", "_hdraw_", "_tdraw_", "_ldraw_", "_hldraw_",
                              "_tldraw_") for op in part.get(key, ())]
        if part is layout:  # the page's own background is the slide's
            ops = part.get("_ldraw_", []) if title else []
        if ops:
            lines += _xdot(ops, row_styles(part.get("class", "")))
        elif "pos" in part and "nodes" not in part and "tail" not in part:
            x, y = (float(v) for v in part["pos"].split(",")[:2])
            text = latex_text(_label_text(part.get("label", part.get("name", ""))))
            lines.append(f"  \\node[draw] at ({x:.2f},{y:.2f}) {{{text}}};")
    lines.append("\\end{tikzpicture}")
    return "\n".join(lines) + "\n"


def _label_text(label: str) -> str:
    """A label as one line of text (HTML-like markup and line breaks removed)."""
    text = re.sub(r"<BR[^>]*>|</TR>|\\[nlr]", " ", str(label), flags=re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", text)).strip()


def _xdot(ops: list, rows: tuple | None = None) -> list[str]:
    """TikZ commands for Graphviz's xdot drawing operations; ``rows``, the styles of a
    plain-labelled node's lines (:func:`.svgstyle.row_styles`), set each line's look."""
    out = []
    line = 0
    pen, fill, width, style, font, size, bold = "black", "none", 1.0, "", "", 14.0, False
    for op in ops:
        kind = op.get("op")
        if kind == "c":
            pen = _color(op.get("color", "black"))
        elif kind == "C":
            fill = _color(op.get("color", "none"))
        elif kind == "S":
            s = op.get("style", "")
            m = re.match(r"setlinewidth\(([\d.]+)\)", s)
            if m:
                width = float(m.group(1))
            elif s in ("dashed", "dotted", "solid"):
                style = "" if s == "solid" else s
        elif kind == "F":
            size, font = float(op.get("size", 14)), op.get("face", "")
        elif kind == "t":
            bold = bool(int(op.get("fontchar", 0)) & 1)
        elif kind in ("p", "P", "L", "b", "B", "e", "E"):
            filled = kind in "PBE" and fill != "none"  # filled: fill, then outline
            if pen == "none" and not filled:
                continue
            opts = [f"fill={fill}"] if filled else []
            if pen != "none":
                opts += [f"draw={pen}", f"line width={width:.2f}pt"] + ([style] if style else [])
            command = ("filldraw" if pen != "none" else "fill") if filled else "draw"
            out.append(f"  \\{command}[{', '.join(opts)}] {_path(kind, op)};")
        elif kind == "T":
            x, y = op["pt"]
            anchor = {"l": "base west", "r": "base east"}.get(op.get("align"), "base")
            weight = "\\bfseries" if bold or "Bold" in font else ""
            colour, points = pen, size
            if rows is not None:
                letters, grad, swatches = rows
                letter = letters[line] if line < len(letters) else "b"
                weight = "\\bfseries" if letter == "t" else ""
                points = size - 2 if letter == "s" else size
                colour = _color(grad) if letter == "g" else pen
                if line in swatches:
                    out.append(_swatch(x, y, size, *swatches[line]))
                line += 1
            text = latex_text(op.get("text", ""))
            if text.strip():
                out.append(f"  \\node[anchor={anchor}, text={colour}, font=\\sffamily{weight}"
                           f"\\fontsize{{{points:.1f}}}{{{points * 1.2:.1f}}}\\selectfont] "
                           f"at ({x:.2f},{y:.2f}) {{{text}}};")
    return out


def _swatch(x: float, y: float, size: float, fill: str, border: str, flags: str,
            width: str) -> str:
    """A legend's sample box at the start of a plain line (as svgstyle draws it)."""
    opts = [f"fill={_color(fill)}", f"draw={_color(border)}", f"line width={width}pt"]
    opts += (["rounded corners=2pt"] if "r" in flags else []) + (
        ["dashed"] if "d" in flags else [])
    return (f"  \\filldraw[{', '.join(opts)}] ({x:.2f},{y - 0.25 * size:.2f}) rectangle "
            f"({x + 1.9 * size:.2f},{y + 0.85 * size:.2f});")


def _path(kind: str, op: dict) -> str:
    if kind in "eE":
        x, y, rx, ry = op["rect"]
        return f"({x:.2f},{y:.2f}) ellipse [x radius={rx:.2f}, y radius={ry:.2f}]"
    pts = [f"({x:.2f},{y:.2f})" for x, y in op["points"]]
    if kind in "bB":
        text = pts[0]
        for k in range(1, len(pts) - 2, 3):
            text += f" .. controls {pts[k]} and {pts[k + 1]} .. {pts[k + 2]}"
        return text + (" -- cycle" if kind == "B" else "")
    return " -- ".join(pts) + (" -- cycle" if kind in "pP" else "")


def _color(c: str) -> str:
    """A Graphviz colour as TikZ colour text (``none`` when fully transparent)."""
    c = str(c).strip()
    m = re.fullmatch(r"#([0-9a-fA-F]{6})([0-9a-fA-F]{2})?", c)
    if m:
        if m.group(2) is not None and int(m.group(2), 16) == 0:
            return "none"
        r, g, b = (int(m.group(1)[i:i + 2], 16) for i in (0, 2, 4))
        return f"{{rgb,255:red,{r};green,{g};blue,{b}}}"
    if c in ("transparent", "none", "invis"):
        return "none"
    return c if re.fullmatch(r"[a-z]+", c) else "black"


#: Beamer's 16:9 frame: the room for a picture under the frame title and above the
#: caption (centimetres).
_ROOM = (14.6, 5.9)


def beamer_document(layouts: list[dict], captions: list[str], title: str | None = None
                    ) -> str:
    r"""A Beamer document (16:9) with one frame per step: the step's picture
    (:func:`tikz_picture` of its ``layout``, without its title), scaled to the frame, and
    its caption (``"Step k of n: what happens"``: the frame's title is ``Step k of n``,
    the document's ``title`` its subtitle).

    Examples
    --------
    >>> doc = beamer_document([{"objects": [], "edges": [], "bb": "0,0,10,10"}],
    ...                       ["Step 0 of 0: x_1 & y"], title="f = x^2")
    >>> doc.count("\\begin{frame}"), "x\\_1 \\& y" in doc, "f = x\\^{}2" in doc
    (1, True, True)
    """
    head = latex_text(title) if title else "Backward pass, step by step"
    lines = ["% symgrad: a backward pass, one frame per step (pdflatex)",
             "\\documentclass[aspectratio=169]{beamer}",
             "\\usepackage[utf8]{inputenc}", "\\usepackage[T1]{fontenc}",
             "\\usepackage{tikz}", "\\setbeamertemplate{navigation symbols}{}",
             "\\begin{document}"]
    for layout, caption in zip(layouts, captions):
        step, _, rest = str(caption).partition(": ")
        frame_title = latex_text(step) if rest else head
        lines += [f"\\begin{{frame}}{{{frame_title}}}{{{head}}}" if rest else
                  f"\\begin{{frame}}{{{frame_title}}}", "\\centering",
                  _fit(tikz_picture(layout, title=False), layout),
                  "\\par\\vfill", f"{{\\small {latex_text(rest or caption)}\\par}}",
                  "\\end{frame}"]
    lines.append("\\end{document}")
    return "\n".join(lines) + "\n"


def _fit(picture: str, layout: dict) -> str:
    """``picture`` scaled to the frame's room: to its width or to its height, whichever
    binds."""
    try:
        x0, y0, x1, y1 = (float(v) for v in layout.get("bb", "0,0,1,1").split(","))
    except ValueError:
        x0, y0, x1, y1 = 0.0, 0.0, 1.0, 1.0
    wide = (x1 - x0) / max(y1 - y0, 1.0) > _ROOM[0] / _ROOM[1]
    box = f"{{{_ROOM[0]}cm}}{{!}}" if wide else f"{{!}}{{{_ROOM[1]}cm}}"
    body = "\n".join(line for line in picture.splitlines() if not line.startswith("%"))
    return f"\\resizebox{box}{{%\n{body}}}"
