"""``torch.utils.benchmark``, as far as PyTorch's tutorials use it: ``Timer`` with
``timeit``, ``blocked_autorange`` and ``adaptive_autorange``, and a ``Measurement`` that
prints as PyTorch's (statement, median, IQR, runs) and has ``times``, ``mean``,
``median`` and ``iqr``.

Only Python statements are timed (``language="python"``), on the calling thread.

Examples
--------
>>> from symgrad.utils.benchmark import Timer
>>> m = Timer("x + 1", globals={"x": 1}).timeit(10)
>>> print(repr(m).splitlines()[1:]) # doctest: +ELLIPSIS
['x + 1', '  ... ns', '  1 measurement, 10 runs , 1 thread']
"""
from __future__ import annotations

import math
import textwrap
import timeit as _timeit
from typing import Callable

import numpy as np

__all__ = ["Timer", "Measurement"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def select_unit(t: float) -> tuple[str, float]:
    """The unit that shows ``t`` seconds with one to three digits before the point."""
    power = math.floor(math.log10(t) // 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(power, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


class Measurement:
    """The times of one statement: ``raw_times`` of blocks of ``number_per_run`` runs."""

    def __init__(self, number_per_run: int, raw_times: list, stmt: str, setup: str = "pass",
                 label=None, sub_label=None, description=None, num_threads: int = 1,
                 metadata=None) -> None:
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.stmt, self.setup, self.label = stmt, setup, label
        self.sub_label, self.description = sub_label, description
        self.num_threads, self.metadata = num_threads, metadata

    @property
    def times(self) -> list:
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q: float) -> float:
        return float(np.quantile(np.sort(self.times), q))

    @property
    def median(self) -> float:
        return self._quantile(0.5)

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        return self._quantile(0.75) - self._quantile(0.25)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                + textwrap.indent(self.stmt, "  "))

    def _summary(self) -> str:
        setup = ("" if self.setup in ("pass", "") else
                 f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup
                 else f"setup: {self.setup}")
        sections = [self.title, self.description or "", setup]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)

    def _warnings(self) -> list:
        if len(self.times) < 2 or self.meets_confidence(_IQR_WARN_THRESHOLD):
            return []
        why = ("This suggests significant environmental influence."
               if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD)
               else "This could indicate system fluctuation.")
        return [f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of "
                f"the median measurement.\n           {why}"]

    def __repr__(self) -> str:
        n = len(self.times)
        unit, scale = select_unit(self.median)
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {id(self):#x}>",
                 self._summary(),
                 f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._quantile(0.25) / scale:.2f} to "
                         f"{self._quantile(0.75) / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} "
                     f"thread{'s' if self.num_threads > 1 else ''}")
        return "\n".join(lines + self._warnings())

    __str__ = __repr__


class Timer:
    """Times a Python statement (``stmt``, run after ``setup`` in ``globals``).

    Examples
    --------
    >>> from symgrad.utils.benchmark import Timer
    >>> m = Timer("sum(range(10))").blocked_autorange(min_run_time=0.01)
    >>> m.median > 0
    True
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable = _timeit.default_timer, globals: dict | None = None,
                 label=None, sub_label=None, description=None, env=None,
                 num_threads: int = 1, language="python") -> None:
        if str(getattr(language, "value", language)).lower() not in ("python", "py"):
            raise ValueError(f"Invalid language `{language}`: only Python is supported.")
        self._spec = dict(stmt=stmt, setup=setup, label=label, sub_label=sub_label,
                          description=description, num_threads=num_threads)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer,
                                    globals=dict(globals or {}))

    def _measure(self, number: int, raw: list) -> Measurement:
        return Measurement(number, raw, **self._spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """``stmt`` run ``number`` times (after ``max(number // 100, 2)`` warm-up runs, as
        PyTorch's)."""
        self._timer.timeit(number=max(number // 100, 2))
        return self._measure(number, [self._timer.timeit(number=number)])

    def _block_size(self, min_run_time: float) -> int:
        number = 1
        while True:
            t = self._timer.timeit(number=number)
            if t >= max(min_run_time / 100, 1e-4) or number >= 1_000_000:
                return number
            number *= 10

    def blocked_autorange(self, callback: Callable | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs, each long enough to hide the timer's cost, until
        ``min_run_time`` seconds were spent."""
        number = self._block_size(min_run_time)
        raw, total = [], 0.0
        while total < min_run_time or not raw:
            t = self._timer.timeit(number=number)
            raw.append(t)
            total += t
            if callback is not None:
                callback(number, t)
        return self._measure(number, raw)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback: Callable | None = None
                           ) -> Measurement:
        """Blocks of runs until the IQR is within ``threshold`` of the median (or
        ``max_run_time`` passed)."""
        number = self._block_size(0.05)
        raw, total = [], 0.0
        while True:
            t = self._timer.timeit(number=number)
            raw.append(t)
            total += t
            if callback is not None:
                callback(number, t)
            m = self._measure(number, raw)
            if total >= max_run_time or (total >= min_run_time and len(raw) > 3
                                         and m.meets_confidence(threshold)):
                return m
