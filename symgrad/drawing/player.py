"""Drawings in HTML: an SVG made safe to embed and scaled to the page's width, and the
step player (frames shown one at a time with Previous / Next / Play).

A player is self-contained: no external script, style or font, no global name (its
script is one function scoped to its own element, found by an id made for it), and the
ids inside its SVG frames are prefixed with that id, so any number of players and
drawings work side by side on one page (a notebook, or a notebook exported to HTML).
User text never becomes markup: the captions reach the script as JSON in which ``<``,
``>``, ``&`` and U+2028/U+2029 are escaped (no ``</script>`` can end the script) and are
shown with ``textContent``; the SVG is Graphviz's, whose text is escaped XML, and is
checked tag by tag before it is embedded (no script, no event attribute, no link out).

Examples
--------
>>> svg = '<?xml version="1.0"?><svg width="10pt" height="5pt"><g id="node1"></g></svg>'
>>> print(inline_svg(svg, "p1"))
<svg style="max-width:100%;height:auto" width="10pt" height="5pt"><g id="p1-node1"></g></svg>
>>> script_json(["</script>", "a\\u2028b"])
'["\\\\u003c/script\\\\u003e", "a\\\\u2028b"]'
"""
from __future__ import annotations

import html
import json
import re
import uuid
from typing import Sequence

from .backends import RenderError

__all__ = ["player_html", "player_page", "inline_svg", "diagram_html", "script_json",
           "css_width", "new_id"]

# A tag, quotes respected (a quoted attribute value may hold ">").
_TAG = re.compile(r"""<(/?)([A-Za-z][\w:.-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>""")
_ATTR = re.compile(r"""([^\s=/]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?""")
# What Graphviz's SVG writer emits; anything else is not embedded.
_SVG_TAGS = {"svg", "g", "title", "polygon", "polyline", "ellipse", "path", "text", "a",
             "defs", "lineargradient", "radialgradient", "stop", "tspan", "rect", "circle",
             "line", "desc"}
# Attributes whose value may refer to something (text-bearing ones, such as tooltips, may
# say anything).
_PAINT = {"style", "fill", "stroke", "clip-path", "mask", "filter", "marker-start",
          "marker-mid", "marker-end", "src", "cursor"}
_CSS_WIDTH = re.compile(r"(\d+(\.\d+)?)(px|%|em|rem|pt|cm|mm|in|vw|ch)?")


def new_id() -> str:
    """A fresh element id (``symgrad-`` and 12 hex digits)."""
    return "symgrad-" + uuid.uuid4().hex[:12]


def css_width(width: int | float | str | None) -> str | None:
    """A display width as CSS: a number is pixels; a string is a CSS length such as
    ``"100%"``, ``"600px"``, ``"40em"``.

    Examples
    --------
    >>> css_width(600), css_width("80%"), css_width(None)
    ('600px', '80%', None)
    """
    if width is None:
        return None
    if isinstance(width, bool) or not isinstance(width, (int, float, str)):
        raise ValueError(f"width must be a number of pixels or a CSS length such as "
                         f"'100%' or '600px', got {width!r}")
    if isinstance(width, (int, float)):
        if not 0 < width < 1e6:
            raise ValueError(f"width must be a positive number of pixels, got {width!r}")
        return f"{width:g}px"
    text = width.strip()
    if not _CSS_WIDTH.fullmatch(text) or float(_CSS_WIDTH.fullmatch(text).group(1)) <= 0:
        raise ValueError(f"width must be a CSS length such as '100%', '600px' or '40em', "
                         f"got {width!r}")
    return text if _CSS_WIDTH.fullmatch(text).group(3) else text + "px"


def script_json(value) -> str:
    """``value`` as JSON that is safe inside an HTML ``<script>`` element: ``<``, ``>``,
    ``&`` and the line separators U+2028/U+2029 (and every other non-ASCII character)
    are written as ``\\uXXXX`` escapes, so no ``</script>`` or ``<!--`` can appear."""
    text = json.dumps(value, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def inline_svg(svg: str, prefix: str, width: str | None = None) -> str:
    """Graphviz's SVG made fit to embed in HTML next to others.

    The XML prologue, doctype and comments go; every tag is checked (only the elements
    Graphviz writes, no ``on...`` attribute, no link other than ``#id``); each ``id`` and
    reference to one gets ``prefix``; the root scales to the width available
    (``max-width:100%; height:auto``), or to ``width`` (CSS) if given (which may be
    wider than the page: the element holding it then scrolls sideways).

    Raises
    ------
    RenderError
        If the SVG holds anything else (it never should: Graphviz escapes text).
    """
    start = svg.find("<svg")
    if start < 0:
        raise RenderError("the renderer returned no SVG to embed")
    body = re.sub(r"<!--.*?-->", "", svg[start:], flags=re.S)
    out, pos, root_done = [], 0, False
    for m in _TAG.finditer(body):
        text = body[pos:m.start()]
        if "<" in text:
            raise RenderError("the drawing's SVG has markup that is not a tag")
        out.append(text)
        pos = m.end()
        closing, name, attrs = m.group(1), m.group(2), m.group(3)
        if name.lower() not in _SVG_TAGS:
            raise RenderError(f"the drawing's SVG has a <{name}> element, not embedded")
        if closing:
            out.append(m.group(0))
            continue
        self_closing = attrs.rstrip().endswith("/")
        pieces = []
        if not root_done and name == "svg":
            style = ("max-width:100%;height:auto" if width is None else
                     f"width:{width};height:auto")
            pieces.append(f' style="{style}"')
            root_done = True
        for a in _ATTR.finditer(attrs.rstrip().rstrip("/")):
            if name == "svg" and a.group(1).lower() == "style":
                continue  # (the root's style is ours)
            pieces.append(" " + _safe_attribute(a.group(1), a.group(2), prefix))
        out.append(f"<{name}{''.join(pieces)}{' /' if self_closing else ''}>")
    tail = body[pos:]
    if "<" in tail:
        raise RenderError("the drawing's SVG has markup that is not a tag")
    out.append(tail.rstrip())
    return "".join(out)


def _safe_attribute(name: str, value: str | None, prefix: str) -> str:
    """One attribute as embedded: ids prefixed, references to them too; refused if it
    could run or load anything."""
    low = name.lower()
    if low.startswith("on"):
        raise RenderError(f"the drawing's SVG has a {name} attribute, not embedded")
    if value is None:
        return name
    quote = value[0] if value[:1] in ("'", '"') else '"'
    inner = value[1:-1] if value[:1] in ("'", '"') else value
    if low == "id":
        inner = f"{prefix}-{inner}"
    elif low in ("href", "xlink:href"):
        if not inner.startswith("#"):
            raise RenderError("the drawing's SVG links outside itself, not embedded")
        inner = f"#{prefix}-{inner[1:]}"
    else:
        if low in _PAINT and re.search(r"url\(\s*['\"]?\s*[^#'\"\s]|expression\(|script:",
                                       inner, re.I):
            raise RenderError(f"the drawing's SVG refers outside itself in {name}, "
                              f"not embedded")
        inner = re.sub(r"url\(#([^)]*)\)", lambda m: f"url(#{prefix}-{m.group(1)})", inner)
    return f"{name}={quote}{inner}{quote}"


def diagram_html(svg: str, width: str | None = None) -> str:
    """One drawing as an HTML fragment: its SVG, with ids of its own, scaled to the
    column (or shown ``width`` wide, scrolling sideways if that is wider)."""
    return (f'<div class="symgrad-drawing" style="max-width:100%;overflow-x:auto">'
            f"{inline_svg(svg, new_id(), width)}</div>")


_BUTTON = ("font:inherit;margin:0 .4em .4em 0;padding:.15em .6em;cursor:pointer")

_SCRIPT = """(function () {
  var root = document.getElementById(%(id)s);
  if (!root || root.getAttribute("data-symgrad-ready")) { return; }
  root.setAttribute("data-symgrad-ready", "1");
  var captions = %(captions)s;
  var frames = [], k = 0, timer = null, i;
  var kids = root.querySelector(".symgrad-frames").children;
  for (i = 0; i < kids.length; i++) { frames.push(kids[i]); }
  var caption = root.querySelector(".symgrad-caption");
  var playButton = root.querySelector("[data-action=play]");
  function show() {
    for (var j = 0; j < frames.length; j++) {
      frames[j].style.display = j === k ? "block" : "none";
    }
    caption.textContent = captions[k];
  }
  function go(d) { k = Math.max(0, Math.min(frames.length - 1, k + d)); show(); }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playButton.textContent = "Play";
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (k >= frames.length - 1) { k = 0; show(); }
    playButton.textContent = "Pause";
    timer = setInterval(function () {
      if (k >= frames.length - 1) { stop(); } else { go(1); }
    }, %(delay)d);
  }
  root.querySelector("[data-action=previous]").addEventListener("click", function () {
    stop(); go(-1);
  });
  root.querySelector("[data-action=next]").addEventListener("click", function () {
    stop(); go(1);
  });
  playButton.addEventListener("click", play);
  root.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight") { stop(); go(1); e.preventDefault(); }
    if (e.key === "ArrowLeft") { stop(); go(-1); e.preventDefault(); }
  });
  show();
  if (%(focus)s) { root.focus(); }
})();"""


def player_html(svgs: Sequence[str], captions: Sequence[str], *, width: str | None = None,
                delay_ms: int = 1200, focus: bool = False) -> str:
    """The step player as an HTML fragment (for a notebook's output, or any page).

    Parameters
    ----------
    svgs : sequence of str
        One SVG per frame (Graphviz's output).
    captions : sequence of str
        What each frame shows; plain text (never markup).
    width : str, optional
        CSS width of the frames (default: their own size, shrunk to the column's width
        if wider; a width wider than the column scrolls sideways).
    delay_ms : int
        Time between frames when playing.
    focus : bool
        Take the keyboard focus on load (arrow keys then step the player).
    """
    if len(svgs) != len(captions) or not svgs:
        raise ValueError("a player needs one caption per frame and at least one frame")
    pid = new_id()
    frames = "".join(
        f'<div class="symgrad-frame" style="display:{"block" if i == 0 else "none"};'
        f'overflow-x:auto">'
        f"{inline_svg(s, f'{pid}-f{i}', width)}</div>" for i, s in enumerate(svgs))
    script = _SCRIPT % {"id": script_json(pid), "captions": script_json(list(captions)),
                        "delay": int(delay_ms), "focus": "true" if focus else "false"}
    return (
        f'<div id="{pid}" class="symgrad-player" tabindex="0" '
        f'style="font-family:Helvetica,Arial,sans-serif;max-width:100%;outline:none">'
        f'<div class="symgrad-controls">'
        f'<button type="button" data-action="previous" style="{_BUTTON}">'
        f"&#9664; Previous</button>"
        f'<button type="button" data-action="next" style="{_BUTTON}">Next &#9654;</button>'
        f'<button type="button" data-action="play" style="{_BUTTON}">Play</button>'
        f'<span class="symgrad-caption" aria-live="polite">{html.escape(captions[0])}</span>'
        f"</div>"
        f'<div class="symgrad-frames">{frames}</div>'
        f"<script>{script}</script></div>")


def player_page(svgs: Sequence[str], captions: Sequence[str], *,
                title: str = "symgrad: backward, step by step") -> str:
    """A whole HTML page holding one player (``steps.html``); works offline."""
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title></head>\n"
            f'<body style="margin:1em">\n{player_html(svgs, captions, focus=True)}\n'
            f"</body></html>\n")
