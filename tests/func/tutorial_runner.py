"""Run a tutorial script with ``torch`` bound to PyTorch or to symgrad, and compare prints.

Not a test module: :mod:`test_tutorials` uses it, and so can a person checking a tutorial
by hand (``python tests/func/tutorial_runner.py path/to/tutorial.py``: PyTorch's output,
symgrad's, and whether they agree).

* ``import torch``, ``import torch.nn as nn``, ``from torch.func import ...``,
  ``from torch.utils.benchmark import Timer`` inside the script reach the chosen library,
  and ``import functorch`` (the package PyTorch's wheel ships) symgrad's
  :mod:`symgrad.functorch`;
* random draws (``randn``, ``rand``, ``randint``) are the same numpy draws in both
  libraries, and ``nn.Linear``/``nn.Conv2d`` parameters start from the same draws;
* timings are masked (a Measurement's text and "Performance delta" percentages), and
  ``Timer.timeit(n)`` may be capped at a few runs (``timer_cap``);
* ``device = 'cuda'`` is read as the CPU (both libraries are CPU builds here).
"""
from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import re
import sys
import types

import numpy as np

_MEASUREMENT = re.compile(
    r"<torch\.utils\.benchmark\.utils\.common\.Measurement object at 0x[0-9a-f]+>.*?"
    r"\d+ threads?(\n  WARNING:[^\n]*\n[^\n]*)?", re.S)
_DELTA = re.compile(r"Performance delta: [0-9.]+ percent")
_CUDA = re.compile(r"""device = ['"]cuda['"]""")


def mask(text: str) -> str:
    """Timings out of ``text``."""
    return _DELTA.sub("Performance delta: ? percent", _MEASUREMENT.sub("<Measurement>", text))


class _Draws:
    """``randn``/``rand``/``randint`` of ``lib`` drawing from one numpy generator."""

    def __init__(self, lib, seed: int = 0) -> None:
        self.lib = lib
        self.gen = np.random.default_rng(seed)

    @staticmethod
    def _size(size: tuple) -> tuple:
        if len(size) == 1 and not isinstance(size[0], int):
            size = tuple(size[0])
        return tuple(size)

    def _tensor(self, values, dtype, requires_grad=False):
        t = self.lib.tensor(values, dtype=dtype or self.lib.get_default_dtype())
        return t.requires_grad_() if requires_grad else t

    def manual_seed(self, seed):
        self.gen = np.random.default_rng(seed)
        return self.lib.manual_seed(seed)

    def randn(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return self._tensor(self.gen.standard_normal(self._size(size)), dtype, requires_grad)

    def rand(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return self._tensor(self.gen.random(self._size(size)), dtype, requires_grad)

    def randint(self, *args, size=None, dtype=None, device=None, **kw):
        low, high = (0, args[0]) if len(args) in (1, 2) and size is not None or len(args) == 2 \
            else (args[0], args[1])
        size = size if size is not None else args[-1]
        return self.lib.tensor(self.gen.integers(low, high, tuple(size)),
                               dtype=dtype or self.lib.int64)

    def init(self, tensor, *args, **kwargs):
        """Any ``nn.init`` filling: a uniform draw of the same bound in both libraries."""
        fan_in = int(np.prod(tensor.shape[1:])) if tensor.dim() > 1 else tensor.shape[0]
        bound = 1 / np.sqrt(max(fan_in, 1))
        with self.lib.no_grad():
            tensor.copy_(self.lib.tensor(self.gen.uniform(-bound, bound, tuple(tensor.shape)),
                                         dtype=tensor.dtype))
        return tensor


def _proxy(lib, draws: _Draws | None, timer_cap: int | None) -> types.ModuleType:
    top = types.ModuleType("torch")
    top.__getattr__ = lambda name: getattr(lib, name)
    for name in ("randn", "rand", "randint", "manual_seed") if draws is not None else ():
        setattr(top, name, getattr(draws, name))
    if timer_cap is not None:
        benchmark = importlib.import_module(lib.__name__ + ".utils.benchmark")

        class Timer(benchmark.Timer):
            def timeit(self, number: int = 1000000):
                return super().timeit(min(number, timer_cap))
        top.utils = types.SimpleNamespace(benchmark=types.SimpleNamespace(Timer=Timer),
                                          data=getattr(lib.utils, "data", None))
    return top


@contextlib.contextmanager
def _same_init(lib, draws: _Draws):
    """Layers start from the same draws in both libraries."""
    init = lib.nn.init
    saved = {n: getattr(init, n) for n in ("kaiming_uniform_", "uniform_")}
    init.kaiming_uniform_ = lambda t, *a, **k: draws.init(t)
    init.uniform_ = lambda t, *a, **k: draws.init(t)
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(init, n, f)


def run(source: str, lib, *, timer_cap: int | None = None, own_draws: bool = False) -> str:
    """What ``source`` prints with ``torch`` bound to ``lib`` (timings masked).  With
    ``own_draws`` the library's own generator and layer initialisation are used (symgrad's
    are PyTorch's: the same seed gives the same draws), else both draw from numpy."""
    draws = None if own_draws else _Draws(lib)
    top = _proxy(lib, draws, timer_cap)
    real_import = builtins.__import__

    def importer(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "functorch" and lib.__name__ != "torch":  # (the package torch ships)
            return importlib.import_module(lib.__name__ + ".functorch")
        if name == "torch" or name.startswith("torch."):
            if name == "torch":
                return top
            if name == "torch.utils.benchmark" and timer_cap is not None:
                return top.utils.benchmark if fromlist else top
            module = importlib.import_module(lib.__name__ + name[5:])
            return module if fromlist else top
        return real_import(name, globals, locals, fromlist, level)

    namespace = {"__name__": "__main__",
                 "__builtins__": dict(vars(builtins), __import__=importer)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), (
            contextlib.nullcontext() if draws is None else _same_init(lib, draws)):
        exec(compile(_CUDA.sub("device = 'cpu'", source), "<tutorial>", "exec"), namespace)
    return mask(out.getvalue())


if __name__ == "__main__":  # a tutorial checked by hand
    import symgrad
    import torch

    text = open(sys.argv[1], encoding="utf-8").read()
    want, got = run(text, torch, own_draws=True), run(text, symgrad, own_draws=True)
    print("---- torch\n" + want + "---- symgrad\n" + got)
    print("SAME" if want == got else "DIFFERENT")
