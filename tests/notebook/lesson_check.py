"""Run ``examples/lesson.ipynb`` headless (nbclient, a real IPython kernel) and say what is
wrong with its outputs.

Used by ``tests/notebook/test_notebook.py`` and, in a fresh virtual environment made from
the wheel with no Graphviz ``dot`` on ``PATH``, by ``tools/wheel_smoke.py``.  It needs only
symgrad, nbclient, nbformat and ipykernel (no pytest, no torch), so it also runs as a
script::

    python tests/notebook/lesson_check.py examples/lesson.ipynb [--workdir DIR]

which prints one line per problem and exits 1 if there is any, 0 otherwise.

The cells are found by their tags (cell metadata ``tags``), not by position:

``values``
    prints ``label = number(s)`` lines; compared with :data:`EXPECTED` (PyTorch 2.13's
    values, kept here so the check needs no torch) and, in the test, with the same cells
    run under real PyTorch.
``drawing``
    displays ``symgrad.draw(f)``: an ``image/svg+xml`` or ``text/html`` output whose
    *visible* text (the SVG ``<text>`` elements) names every node of ``f``'s graph.
``player``
    displays ``symgrad.draw_steps(...)`` inline: a ``text/html`` output naming the nodes
    of that graph; no two players on the page share an element ``id``.
"""
from __future__ import annotations

import argparse
import base64
import html
import json
import math
import pathlib
import re
import sys
import urllib.parse

__all__ = ["EXPECTED", "DRAWING_NAMES", "PLAYER_NAMES", "execute", "problems",
           "printed_values", "visible_text", "decoded_html", "compare_values"]

NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "examples" / "lesson.ipynb"

#: What the ``values`` cells print, label -> numbers (PyTorch 2.13, float32).  ``x.grad``
#: is printed twice: before the step players (40, 3) and after them, unchanged, since
#: ``draw_steps`` never changes the user's tensors.
EXPECTED = {
    "f": [80.0],
    "a @ a": [7.0, 10.0, 15.0, 22.0],
    "a.sum()": [10.0],
    "a.mean(dim=0)": [2.0, 3.0],
    "x.grad": [40.0],
    "y.grad": [3.0],
    "step 0: loss": [6.3125],
    "step 1: loss": [1.066562533378601],
    "step 2: loss": [0.22624057531356812],
    "weight": [-0.027750004082918167, 0.18275001645088196],
    "bias": [0.3617500066757202],
}
#: How many times each label is printed (every other label once).
REPEATS = {"x.grad": 2, "y.grad": 2}

#: The nodes of the drawn ``f = 5 * x**2 + 3 * torch.sin(y)`` after ``f.backward()``.
DRAWING_NAMES = ["AddBackward0", "MulBackward0", "PowBackward0", "SinBackward0",
                 "AccumulateGrad", "grad = 40", "grad = 3"]
#: The nodes each step player must name, in the order of the ``player`` cells.
PLAYER_NAMES = [["AddBackward0", "MulBackward0", "ExpBackward0", "AccumulateGrad"],
                ["PowBackward0", "SubBackward0", "AccumulateGrad"]]

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)")
_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)
_TAG = re.compile(r"<[^>]+>")
_DATA_URI = re.compile(r"data:image/svg\+xml(;base64)?,([A-Za-z0-9+/=%._~:;,!*'()-]+)")
_ID = re.compile(r"""\bid\s*=\s*["']([^"']+)["']""")


def execute(path: str | pathlib.Path = NOTEBOOK, workdir: str | pathlib.Path | None = None,
            timeout: int = 180):
    """Execute the notebook in a fresh kernel (working directory ``workdir``) and return it.

    An error in a cell does not stop the run: it is recorded as the cell's ``error``
    output, which :func:`problems` reports.
    """
    import nbclient  # why: optional test dependencies, loaded only to run a notebook
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    where = str(workdir if workdir is not None else pathlib.Path(path).resolve().parent)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     allow_errors=True,
                                     resources={"metadata": {"path": where}})
    client.execute()
    return nb


def _tagged(nb, tag: str) -> list:
    return [c for c in nb.cells
            if c.cell_type == "code" and tag in c.get("metadata", {}).get("tags", [])]


def _stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def printed_values(text: str) -> list[tuple[str, list[float]]]:
    """``label = numbers`` lines of printed text, in order.

    Examples
    --------
    >>> printed_values("x.grad = 40.0\\nweight = [[-0.5, 2.0]]\\n")
    [('x.grad', [40.0]), ('weight', [-0.5, 2.0])]
    """
    out = []
    for line in text.splitlines():
        label, sep, rest = line.partition(" = ")
        if sep:
            out.append((label.strip(), [float(n) for n in _NUMBER.findall(rest)]))
    return out


def compare_values(got: list[tuple[str, list[float]]], want: list[tuple[str, list[float]]],
                   what: str, rel: float = 1e-6) -> list[str]:
    """Problems where two lists of printed values differ (labels in order, numbers close).

    Examples
    --------
    >>> compare_values([("f", [80.0])], [("f", [80.0000001])], "torch")
    []
    >>> compare_values([("f", [81.0])], [("f", [80.0])], "torch")
    ['f = [81.0], torch: [80.0]']
    """
    if [g[0] for g in got] != [w[0] for w in want]:
        return [f"printed labels {[g[0] for g in got]}, {what}: {[w[0] for w in want]}"]
    bad = []
    for (label, g), (_, w) in zip(got, want):
        if len(g) != len(w) or not all(math.isclose(a, b, rel_tol=rel, abs_tol=rel)
                                       for a, b in zip(g, w)):
            bad.append(f"{label} = {g}, {what}: {w}")
    return bad


def decoded_html(text: str) -> str:
    """HTML with the SVG it embeds as data URIs (base64 or percent-encoded) appended and
    JSON string escapes undone, so that the drawn labels can be searched.

    Examples
    --------
    >>> svg = base64.b64encode(b"<text>AddBackward0</text>").decode()
    >>> uri = "data:image/svg+xml;base64," + svg
    >>> "AddBackward0" in decoded_html(f'<img src="{uri}">')
    True
    """
    parts = [text]
    for b64, payload in _DATA_URI.findall(text):
        try:
            raw = (base64.b64decode(payload).decode("utf-8", "replace") if b64
                   else urllib.parse.unquote(payload))
        except ValueError:
            continue
        parts.append(raw)
    joined = "\n".join(parts)
    joined = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), joined)
    return joined.replace("\\/", "/").replace('\\"', '"')


def visible_text(svg: str) -> list[str]:
    """The text an SVG shows: the content of its ``<text>`` elements, entities decoded
    (tooltips such as ``<title>`` and ``xlink:title`` are not shown, so not counted).

    Examples
    --------
    >>> visible_text('<svg><title>n1</title><text x="1">grad &#61; 40</text></svg>')
    ['grad = 40']
    """
    return [html.unescape(_TAG.sub("", t)).replace("\xa0", " ").strip()
            for t in _TEXT.findall(svg)]


def _display_outputs(cell) -> list[dict]:
    return [o.get("data", {}) for o in cell.get("outputs", [])
            if o.get("output_type") in ("display_data", "execute_result")]


def _drawing_problems(cell) -> list[str]:
    shown = [d.get("image/svg+xml") or d.get("text/html") for d in _display_outputs(cell)]
    shown = ["".join(s) if isinstance(s, list) else s for s in shown if s]
    if not shown:
        kinds = [sorted(d) for d in _display_outputs(cell)]
        return [f"drawing cell: no image/svg+xml or text/html output (outputs: {kinds})"]
    texts = " | ".join(t for s in shown for t in visible_text(decoded_html(s)))
    missing = [n for n in DRAWING_NAMES if n not in texts]
    if missing:
        return [f"drawing cell: visible text lacks {missing} (shows: {texts[:300]!r})"]
    return []


def _player_problems(cells) -> list[str]:
    out = []
    if len(cells) != len(PLAYER_NAMES):
        out.append(f"{len(cells)} player cells, expected {len(PLAYER_NAMES)}")
    ids_seen: dict[str, int] = {}
    for k, (cell, names) in enumerate(zip(cells, PLAYER_NAMES), 1):
        pages = [d["text/html"] for d in _display_outputs(cell) if "text/html" in d]
        pages = ["".join(p) if isinstance(p, list) else p for p in pages]
        if not pages:
            plain = [d.get("text/plain", "") for d in _display_outputs(cell)]
            out.append(f"player {k}: no text/html output (shows {plain!r})")
            continue
        page = decoded_html("\n".join(pages))
        missing = [n for n in names if n not in page]
        if missing:
            out.append(f"player {k}: its HTML does not name {missing}")
        for ident in set(_ID.findall("\n".join(pages))):
            if ident in ids_seen and ids_seen[ident] != k:
                out.append(f"players {ids_seen[ident]} and {k} share the element id "
                           f"{ident!r} (two players on one page would break)")
            ids_seen.setdefault(ident, k)
    return out


def problems(nb) -> list[str]:
    """Everything wrong with an executed lesson notebook (empty when all is right)."""
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None:
            out.append(f"cell {i} did not run")
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                out.append(f"cell {i} raised {o.get('ename')}: {o.get('evalue')}")
            elif o.get("output_type") == "stream" and o.get("name") == "stderr":
                out.append(f"cell {i} wrote to stderr: {o.get('text', '')[:200]!r}")
    values = [v for c in _tagged(nb, "values") for v in printed_values(_stream_text(c))]
    counts: dict[str, int] = {}
    for label, _ in values:
        counts[label] = counts.get(label, 0) + 1
    want = {label: REPEATS.get(label, 1) for label in EXPECTED}
    if counts != want:
        out.append(f"labels printed {counts}, expected {want}")
    for label, got in values:
        if label in EXPECTED:
            out += compare_values([(label, got)], [(label, EXPECTED[label])], "expected")
    drawings = _tagged(nb, "drawing")
    if len(drawings) != 1:
        out.append(f"{len(drawings)} cells tagged 'drawing', expected 1")
    out += [p for c in drawings for p in _drawing_problems(c)]
    out += _player_problems(_tagged(nb, "player"))
    return out


def torch_source(nb) -> str:
    """The ``values`` cells as one script for real PyTorch (``import symgrad as torch``
    becomes ``import torch``): the oracle for :data:`EXPECTED`."""
    cells = [c.source for c in _tagged(nb, "values")]
    script = "\n\n".join(cells)
    return script.replace("import symgrad as torch", "import torch")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", nargs="?", default=str(NOTEBOOK))
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args(argv)
    nb = execute(args.notebook, args.workdir)
    found = problems(nb)
    for p in found:
        print("notebook:", p)
    cells = sum(1 for c in nb.cells if c.cell_type == "code")
    print(json.dumps({"code_cells": cells, "problems": len(found)}))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
