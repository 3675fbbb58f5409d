"""The outcome of a check: :class:`Report`, the verdicts, and the checker's errors.

Examples
--------
>>> r = Report(WRONG, "x**2", {}, 1, None, ["x: missing factor 2"], [])
>>> r.exit_code, bool(r)
(1, False)
"""
from __future__ import annotations

import json

import numpy as np

from ..errors import SymgradError

__all__ = ["Report", "CORRECT", "WRONG", "UNDECIDED", "CheckError", "CheckTypeError",
           "number_text", "listify", "shape_mismatches"]

CORRECT, WRONG, UNDECIDED = "correct", "wrong", "undecided"
_EXIT = {CORRECT: 0, WRONG: 1, UNDECIDED: 3}


class CheckError(SymgradError, ValueError):
    """A check that cannot run: a gradient for a variable the expression does not have,
    a claimed gradient using unknown variables, a negative number of samples, ...

    Examples
    --------
    >>> import symgrad
    >>> try:
    ...     symgrad.check("x**2", {"y": "2*x"})
    ... except CheckError as err:
    ...     print(err)
    'y' is not a variable of 'x**2' (variables: x)
    """


class CheckTypeError(SymgradError, TypeError):
    """An argument of :func:`~symgrad.check` of the wrong type (``None`` for a value)."""


class Report:
    """The outcome of :func:`~symgrad.check` or :func:`~symgrad.verify`.

    Attributes
    ----------
    verdict : str
        ``"correct"``, ``"wrong"`` or ``"undecided"``.
    expression : str
    variables : dict
        Per variable checked: ``claimed`` and ``true`` (text; for vectors and matrices
        also ``true_vector``, the vector form when the grammar can write it), ``symbolic``
        (``"equal"``, ``"not equal"`` (proved), ``"not shown equal"``, ``"timeout"``,
        ``"skipped"``), ``numeric``
        (``"agree"`` / ``"differ"``) and ``max_error``.
    points : int
        How many points were compared numerically.
    counterexample : dict or None
        ``point`` (variable -> value), ``variable``, ``claimed``, ``true``.
    diagnosis : list of str
    notes : list of str
    finite_differences : dict or None
        Per variable, central finite differences at the first point (``value``) and
        whether they agree with reverse mode (``agrees_with_reverse_mode``).

    Examples
    --------
    >>> import symgrad
    >>> r = symgrad.check("x**3", {"x": "3*x"}, at={"x": 2})
    >>> print(r.text())  # doctest: +NORMALIZE_WHITESPACE
    WRONG: gradient of x**3
      d/dx: claimed 3*x
            true    3*x**2
            symbolic: not equal; numeric: differ at 11 point(s), max error 17.0215
      counterexample: at x=2: d/dx claimed 6, true 12
      diagnosis: x: missing factor x
    >>> r.exit_code, r.as_dict()["counterexample"]["true"]
    (1, 12.0)
    """

    def __init__(self, verdict: str, expression: str, variables: dict, points: int,
                 counterexample: dict | None, diagnosis: list, notes: list,
                 finite_differences: dict | None = None) -> None:
        self.verdict = verdict
        self.expression = expression
        self.variables = variables
        self.points = points
        self.counterexample = counterexample
        self.diagnosis = diagnosis
        self.notes = notes
        self.finite_differences = finite_differences

    @property
    def ok(self) -> bool:
        """Whether the verdict is ``correct``."""
        return self.verdict == CORRECT

    @property
    def exit_code(self) -> int:
        """0 correct, 1 wrong, 3 undecided (the CLI's exit status)."""
        return _EXIT[self.verdict]

    def __bool__(self) -> bool:
        return self.ok

    def as_dict(self) -> dict:
        """Every field, as a dict (what :meth:`to_json` writes)."""
        return {"verdict": self.verdict, "expression": self.expression,
                "variables": self.variables, "points": self.points,
                "counterexample": self.counterexample, "diagnosis": self.diagnosis,
                "notes": self.notes, "finite_differences": self.finite_differences}

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (arrays as nested lists)."""
        return json.dumps(self.as_dict(), indent=indent, default=_jsonable)

    def text(self) -> str:
        """The report for people: the verdict, each variable, counterexample, diagnosis."""
        head = {CORRECT: "correct", WRONG: "WRONG", UNDECIDED: "undecided"}[self.verdict]
        out = [f"{head}: gradient of {self.expression}"]
        for name, v in self.variables.items():
            pad = " " * len(name)
            out.append(f"  d/d{name}: claimed {v['claimed']}")
            if v.get("true_vector") is not None:  # (per element: in the JSON report)
                out.append(f"  {pad}     true    {v['true_vector']}")
            elif v.get("true") is not None:
                out.append(f"  {pad}     true    {v['true']}")
            every = " for every size" if v.get("every_size") == "proved" else ""
            out.append(f"  {pad}     symbolic: {v['symbolic']}{every}; numeric: "
                       f"{v['numeric']} at {self.points} point(s), max error "
                       f"{number_text(v['max_error'])}")
        if self.counterexample:
            c = self.counterexample
            at = ", ".join(f"{k}={number_text(v)}" for k, v in c["point"].items())
            digits = _digits_apart(c.get("claimed"), c.get("true"))
            claimed = c.get("why") if c.get("claimed") is None else \
                number_text(c["claimed"], digits) + (f" ({c['why']})" if c.get("why") else "")
            out.append(f"  counterexample: at {at}: d/d{c['variable']} claimed "
                       f"{claimed}, true {number_text(c['true'], digits)}")
        for d in self.diagnosis:
            out.append(f"  diagnosis: {d}")
        for n in self.notes:
            out.append(f"  note: {n}")
        return "\n".join(out)

    __str__ = text

    def __repr__(self) -> str:
        return f"<Report {self.verdict}: {self.expression}>"


def _jsonable(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return str(x)


def number_text(v, digits: int = 6) -> str:
    """A number or array in a report's text: six significant digits (or ``digits``),
    ``-`` for None.

    Examples
    --------
    >>> number_text(2.0), number_text([1, 0.5]), number_text(None)
    ('2', '[1, 0.5]', '-')
    >>> number_text(4.000001, _digits_apart(4.000001, 4.0))
    '4.000001'
    """
    if v is None:
        return "-"
    a = np.asarray(v, dtype=float)
    if a.ndim == 0:
        return f"{float(a):.{digits}g}"
    return "[" + ", ".join(number_text(x, digits) for x in a) + "]"


def _digits_apart(a, b) -> int:
    """The fewest significant digits (6 to 17) at which ``a`` and ``b`` print apart."""
    if a is None or b is None:
        return 6
    for n in range(6, 18):
        if number_text(a, n) != number_text(b, n):
            return n
    return 6


def listify(v) -> float | list:
    """A number or array as a float or nested lists of floats (JSON-ready).

    Examples
    --------
    >>> listify(np.float32(2)), listify(np.eye(2))
    (2.0, [[1.0, 0.0], [0.0, 1.0]])
    """
    a = np.asarray(v, dtype=np.float64)
    return float(a) if a.ndim == 0 else a.tolist()


def shape_mismatches(shape_bad: dict) -> list:
    """``x: wrong shape: ...`` for each ``variable -> (claimed shape, true shape)``, in
    words without sizes (the shapes were found at a size the counterexample shown may
    not have: only what holds at every size is said)."""
    out = []
    for k, (got, want) in shape_bad.items():
        got, want = tuple(got), tuple(want)
        if len(got) == 2 and got == want[::-1]:
            words = f"the claimed gradient has the shape of {k}.T, not that of {k}"
        elif len(got) != len(want):
            words = f"the claimed gradient is {_rank(got)}, but {k} is {_rank(want)}"
        else:
            words = (f"the claimed gradient does not have the shape of {k} (its sizes are "
                     "those of other dimensions)")
        out.append(f"{k}: wrong shape: {words}")
    return out


def _rank(shape: tuple) -> str:
    """``a scalar``, ``a vector``, ``a matrix`` or ``a tensor of 3 dimensions``."""
    return {0: "a scalar", 1: "a vector", 2: "a matrix"}.get(
        len(shape), f"a tensor of {len(shape)} dimensions")
