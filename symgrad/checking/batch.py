"""A class's answers checked at once (``symgrad check --batch``): reading answer files
(JSON Lines, CSV, JSON) one answer at a time, each answer checked within a time limit,
a summary of the mistakes across answers, and the results files course platforms read
(Gradescope's ``results.json``, PrairieLearn's external-grader ``results.json``).

An answer is a record with ``expr`` (the function), ``grad`` (variable -> claimed
gradient), and optionally ``at`` (variable -> value), ``problem`` (its name),
``student`` (an id) and ``points`` (what it is worth, 1 by default).  In CSV the
gradients and values are columns ``grad.x``, ``at.x``, ...

Everything is bounded: a line of at most :data:`MAX_LINE` bytes, JSON nested at most
:data:`MAX_DEPTH` deep, a whole-file JSON document of at most :data:`MAX_JSON_BYTES`;
identical answers (a class gives many) are checked once while they stay among the last
:data:`CACHE_SIZE` distinct ones, so that memory stays constant however long the file.
A bad file raises :class:`BatchFileError`, one line naming the file and the line.

Examples
--------
>>> s = Summary()
>>> s.add({"problem": "1b", "verdict": "wrong", "diagnosis": ["x: missing factor 2*x"],
...        "score": 0, "points": 1})
>>> s.mistakes()
[('1b', 'x: missing factor 2*x', 1)]
"""
from __future__ import annotations

import collections
import csv
import json
import multiprocessing
import os
import re
import stat
import time
import urllib.parse
from typing import Iterable, Iterator

from .._util import _CPU_ENDS, _limit_cpu, atomic_file, start_child, stop
from ..errors import SymgradError
from .checker import check
from .decision import MIN_WALL, WALL_FACTOR
from .report import CORRECT, UNDECIDED, WRONG

__all__ = ["BatchFileError", "Answer", "FORMATS", "answer_format", "read_answers",
           "count_answers", "check_answers", "check_one", "wall_limit", "Summary",
           "gradescope_results", "prairielearn_results", "atomic_output", "write_per_student",
           "student_directory", "MAX_LINE", "MAX_DEPTH", "MAX_JSON_BYTES", "CACHE_SIZE"]

#: The longest line (bytes) of a JSON Lines or CSV answer file.
MAX_LINE = 2 ** 20
#: The deepest nesting of a JSON answer (an answer needs 2: {"grad": {...}}; a matrix
#: value "[[1, 2], [3, 4]]" as a list needs 4).
MAX_DEPTH = 16
#: The largest whole-file JSON document (a JSON Lines file has no limit: it streams).
MAX_JSON_BYTES = 16 * 2 ** 20
#: Distinct answers remembered for reuse (identical answers are checked once).
CACHE_SIZE = 2048
#: Input formats by file name ending.
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".json": "json"}
_KEYS = {"expr", "grad", "at", "problem", "student", "points"}
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[^\[\]{}"]+')


class BatchFileError(SymgradError, ValueError):
    """An answer file that cannot be read: one line naming the file and the line."""


class Answer(tuple):
    """``(line, problem, student, expr, grads, at, points)`` of one answer."""

    __slots__ = ()
    _fields = ("line", "problem", "student", "expr", "grads", "at", "points")

    def __new__(cls, line, problem, student, expr, grads, at, points):
        return super().__new__(cls, (line, problem, student, expr, grads, at, points))

    def __getattr__(self, name):
        try:
            return self[self._fields.index(name)]
        except ValueError:
            raise AttributeError(name) from None


def answer_format(path: str) -> str | None:
    """The input format of ``path`` by its ending (``None``: not an answer file)."""
    return FORMATS.get(os.path.splitext(str(path))[1].lower())


def _depth(text: str) -> int:
    depth = deepest = 0
    for ch in _BRACKETS.sub("", text):
        depth += 1 if ch in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _text_map(where: str, key: str, value) -> dict:
    if not isinstance(value, dict):
        raise BatchFileError(f"{where}: {key} must be an object {{\"VAR\": \"...\"}}, not "
                             f"{type(value).__name__}")
    out = {}
    for var, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float, list)):
            raise BatchFileError(f"{where}: {key}.{var} must be text, a number or a list")
        out[str(var)] = v if isinstance(v, str) else json.dumps(v)
    return out


def _answer(where: str, line: int, k: int, record) -> Answer:
    """One answer from a record (a dict), its types checked."""
    if not isinstance(record, dict):
        raise BatchFileError(f"{where}: an answer must be an object with \"expr\" and "
                             f"\"grad\", not {type(record).__name__}")
    unknown = sorted(set(record) - _KEYS)
    if unknown:
        raise BatchFileError(f"{where}: unknown key {unknown[0]!r} (keys: "
                             f"{', '.join(sorted(_KEYS))})")
    expr = record.get("expr")
    if not isinstance(expr, str) or not expr.strip():
        raise BatchFileError(f"{where}: \"expr\" must be the function's text")
    grads = _text_map(where, "grad", record.get("grad"))
    if not grads:
        raise BatchFileError(f"{where}: \"grad\" names no variable")
    at = _text_map(where, "at", record.get("at", {}))
    points = record.get("points", 1)
    if isinstance(points, str):
        try:
            points = float(points)
        except ValueError:
            points = None
    if isinstance(points, bool) or not isinstance(points, (int, float)) or \
            not 0 <= points < 1e9:
        raise BatchFileError(f"{where}: \"points\" must be a number >= 0")
    student = record.get("student")
    return Answer(line, str(record.get("problem", f"#{k}")),
                  None if student in (None, "") else str(student), expr, grads, at,
                  float(points))


def _regular(path: str):
    if "\x00" in str(path):
        raise BatchFileError(f"{path!r}: a file name cannot contain a NUL character")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise BatchFileError(f"{path}: not a regular file (a FIFO or a device is "
                                 "never read)")
        return open(path, "rb")  # noqa: SIM115 - closed by the caller's with
    except OSError as err:
        raise BatchFileError(f"{path}: {err.strerror}") from None


def _lines(path: str) -> Iterator[tuple]:
    """``(number, text)`` of each line, one at a time, bounded and decoded."""
    with _regular(path) as f:
        number = 0
        while True:
            raw = f.readline(MAX_LINE + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE:
                raise BatchFileError(f"{path}: line {number}: longer than "
                                     f"{MAX_LINE // 2 ** 20} MB")
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise BatchFileError(f"{path}: line {number}: not UTF-8 text (byte "
                                     f"0x{raw[err.start]:02x})") from None


def _json(where: str, text: str):
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise BatchFileError(f"{where}: JSON nested {depth} deep; the limit is {MAX_DEPTH}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise BatchFileError(f"{where}: not valid JSON: {err.msg} (column "
                             f"{err.colno})") from None
    except (RecursionError, ValueError) as err:
        raise BatchFileError(f"{where}: not valid JSON: {err}") from None


def _jsonl(path: str) -> Iterator[Answer]:
    k = 0
    for number, text in _lines(path):
        if not text.strip():
            continue
        k += 1
        where = f"{path}: line {number}"
        yield _answer(where, number, k, _json(where, text))


def _csv(path: str) -> Iterator[Answer]:
    lines = (text for _, text in _lines(path))
    old = csv.field_size_limit()
    csv.field_size_limit(MAX_LINE)
    try:
        reader = csv.reader(lines)
        try:
            header = next(reader, None)
        except csv.Error as err:
            raise BatchFileError(f"{path}: line 1: not valid CSV: {err}") from None
        if not header or "expr" not in header:
            raise BatchFileError(f"{path}: line 1: a header with expr, grad.VAR (one column "
                                 "a variable) and optionally at.VAR, problem, student, "
                                 "points")
        k = 0
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                raise BatchFileError(f"{path}: line {reader.line_num}: not valid CSV: "
                                     f"{err}") from None
            if not any(cell.strip() for cell in row):
                continue
            k += 1
            where = f"{path}: line {reader.line_num}"
            if len(row) != len(header):
                raise BatchFileError(f"{where}: {len(row)} cells, the header has "
                                     f"{len(header)}")
            record: dict = {}
            for name, cell in zip(header, row):
                if cell == "":
                    continue
                kind, dot, var = name.partition(".")
                if dot and kind in ("grad", "at"):
                    record.setdefault(kind, {})[var] = cell
                else:
                    record[name] = cell
            record.setdefault("grad", {})
            yield _answer(where, reader.line_num, k, record)
    finally:
        csv.field_size_limit(old)


def _whole_json(path: str) -> Iterator[Answer]:
    with _regular(path) as f:
        raw = f.read(MAX_JSON_BYTES + 1)
    if len(raw) > MAX_JSON_BYTES:
        raise BatchFileError(f"{path}: larger than {MAX_JSON_BYTES // 2 ** 20} MB, the "
                             "limit of a JSON document (use JSON Lines: .jsonl)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise BatchFileError(f"{path}: line {line}: not UTF-8 text (byte "
                             f"0x{raw[err.start]:02x})") from None
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise BatchFileError(f"{path}: JSON nested {depth} deep; the limit is {MAX_DEPTH}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise BatchFileError(f"{path}: line {err.lineno}: not valid JSON: {err.msg} "
                             f"(column {err.colno})") from None
    except (RecursionError, ValueError) as err:
        raise BatchFileError(f"{path}: not valid JSON: {err}") from None
    if isinstance(data, dict) and set(data) == {"answers"}:
        data = data["answers"]
    if not isinstance(data, list):
        raise BatchFileError(f"{path}: expected a list of answers (or {{\"answers\": "
                             "[...]}})")
    for k, record in enumerate(data, 1):
        yield _answer(f"{path}: answer #{k}", k, k, record)


def read_answers(path: str, fmt: str | None = None) -> Iterator[Answer]:
    """The answers of ``path`` one at a time (JSON Lines and CSV in constant memory).

    Raises
    ------
    BatchFileError
        A file that cannot be read, or a record of the wrong form (naming its line).
    """
    fmt = fmt or answer_format(path)
    reader = {"jsonl": _jsonl, "csv": _csv, "json": _whole_json}.get(fmt)
    if reader is None:
        raise BatchFileError(f"{path}: unknown answer format (name it .jsonl, .csv, .json "
                             "or .toml)")
    return reader(path)


def count_answers(answers: Iterable) -> int:
    """How many answers there are, every one read and validated (a first pass: a bad
    line is found before any answer is checked)."""
    return sum(1 for _ in answers)


def _outcome(answer: Answer, samples: int, timeout: float) -> dict:
    """What :func:`check` says of one answer, as plain data."""
    try:
        report = check(answer.expr, dict(answer.grads), at=dict(answer.at) or None,
                       samples=samples, timeout=timeout)
    except (ValueError, TypeError) as err:
        msg = err.pretty() if hasattr(err, "pretty") else str(err)
        return {"verdict": "error", "diagnosis": [], "message": msg.splitlines()[0]
                if msg else type(err).__name__, "report": None}
    except RecursionError:
        return {"verdict": "error", "diagnosis": [], "report": None,
                "message": "expression nested too deep"}
    return {"verdict": report.verdict, "diagnosis": list(report.diagnosis),
            "message": report.text(), "report": json.loads(report.to_json(indent=None))}


def _child(conn, answer, samples, timeout, cpu=None) -> None:
    if cpu is not None:  # (ended after that much of its own CPU time)
        _limit_cpu(cpu)
    try:
        conn.send(_outcome(answer, samples, timeout))
    except Exception as err:  # noqa: BLE001 - reported as this answer's error
        conn.send({"verdict": "error", "diagnosis": [], "report": None,
                   "message": f"internal error: {type(err).__name__}"})
    conn.close()


def wall_limit(time_limit: float) -> float:
    """The wall-clock safety net of an answer whose check may take ``time_limit`` s of
    its own CPU time: only a machine that gives it almost no CPU reaches it."""
    return max(WALL_FACTOR * time_limit, MIN_WALL)


def _undecided(why: str) -> dict:
    return {"verdict": UNDECIDED, "diagnosis": [], "report": None,
            "message": f"undecided: {why}"}


class _Slot:
    """One distinct answer's check: running in a child (``proc``, ``conn``, until
    ``deadline``), or done (``outcome``)."""

    __slots__ = ("outcome", "proc", "conn", "deadline")

    def __init__(self, answer, samples, timeout, time_limit) -> None:
        self.outcome = self.proc = self.conn = self.deadline = None
        self.conn, child = multiprocessing.Pipe(duplex=False)
        try:
            self.proc = start_child(_child, (child, answer, samples, timeout,
                                             time_limit or None))
        finally:
            child.close()
        if time_limit:
            self.deadline = (time.monotonic() + wall_limit(time_limit), time_limit)

    def result(self) -> dict:
        """The outcome, waited for (until the deadline: then the child is killed)."""
        if self.outcome is not None:
            return self.outcome
        try:
            wait = None if self.deadline is None else \
                max(0.0, self.deadline[0] - time.monotonic())
            if self.conn.poll(wait):
                try:
                    self.outcome = self.conn.recv()
                except EOFError:
                    self.proc.join(1.0)
                    self.outcome = _undecided(
                        f"not settled within the time limit of {self.deadline[1]:g} s "
                        "of CPU time") if self.deadline and \
                        self.proc.exitcode in _CPU_ENDS else \
                        {"verdict": "error", "diagnosis": [], "report": None,
                         "message": "internal error: the check stopped"}
            else:
                self.outcome = _undecided(
                    f"not settled within {wall_limit(self.deadline[1]):g} s of wall time "
                    f"(a busy machine; the time limit is {self.deadline[1]:g} s of CPU "
                    "time)")
        finally:
            stop(self.proc)
            self.conn.close()
        return self.outcome

    def cancel(self) -> None:
        if self.outcome is None:
            stop(self.proc)
            self.conn.close()


def check_one(answer: Answer, samples: int = 10, timeout: float = 1.5,
              time_limit: float | None = 10.0) -> dict:
    """The outcome of one answer: ``verdict``, ``diagnosis``, ``message``, ``report``.
    With ``time_limit`` it runs in a child process ended after that many seconds of its
    own CPU time (its symbolic worker has its own bound, see
    :data:`~symgrad.checking.decision.CPU_FACTOR`), or, as a safety net, after
    :func:`wall_limit` s of wall time (with its own children): the answer is then
    ``undecided``, with a message saying so.  Waiting for a core costs nothing, so a
    busy machine gives the outcomes an idle one gives."""
    if not time_limit:
        return _outcome(answer, samples, timeout)
    return _Slot(answer, samples, timeout, time_limit).result()


def check_answers(answers: Iterable, samples: int = 10, timeout: float = 1.5,
                  time_limit: float | None = 10.0, jobs: int = 1) -> Iterator[dict]:
    """Each answer's result, in order, as soon as it is known: the answer's fields
    (``line``, ``problem``, ``student``, ``expression``, ``grad``, ``points``) and its
    outcome (``verdict``, ``diagnosis``, ``message``, ``report``) and ``score``
    (``points`` if correct, else 0).  Identical answers are checked once.  With
    ``jobs`` > 1, up to that many distinct answers are checked at once (each in its own
    child, within ``time_limit``), the results still in order; at most ``4 * jobs``
    answers are held."""
    cache: collections.OrderedDict = collections.OrderedDict()
    window: collections.deque = collections.deque()  # (answer, slot), oldest first
    running: list = []
    try:
        for a in answers:
            key = (a.expr, tuple(sorted(a.grads.items())), tuple(sorted(a.at.items())))
            slot = cache.get(key)
            if slot is None:
                while window and (len(running) >= jobs or len(window) >= 4 * jobs):
                    yield _result(*window.popleft(), running)
                if jobs > 1:
                    slot = _Slot(a, samples, timeout, time_limit)
                    running.append(slot)
                else:
                    slot = _Slot.__new__(_Slot)
                    slot.outcome = check_one(a, samples, timeout, time_limit)
                cache[key] = slot
                if len(cache) > CACHE_SIZE:
                    cache.popitem(last=False)
            else:
                cache.move_to_end(key)
            window.append((a, slot))
            while window and (window[0][1].outcome is not None or
                              len(window) >= 4 * jobs):
                yield _result(*window.popleft(), running)
        while window:
            yield _result(*window.popleft(), running)
    finally:
        for slot in running:  # (stopped early: no child outlives the batch)
            slot.cancel()


def _result(a: Answer, slot: _Slot, running: list) -> dict:
    outcome = slot.result()
    if slot in running:
        running.remove(slot)
    return {"line": a.line, "problem": a.problem, "student": a.student,
            "expression": a.expr, "grad": dict(a.grads), "points": a.points,
            "score": a.points if outcome["verdict"] == CORRECT else 0.0, **outcome}


class Summary:
    """Counts over results: verdicts, points, and each mistake (a problem's diagnosis
    line) with the number of answers that made it (memory: one entry a distinct
    mistake)."""

    def __init__(self) -> None:
        self.verdicts: collections.Counter = collections.Counter()
        self.score = self.points = 0.0
        self.students: set = set()
        self._mistakes: collections.Counter = collections.Counter()

    def add(self, result: dict) -> None:
        """Count one result of :func:`check_answers`."""
        self.verdicts[result["verdict"]] += 1
        self.score += result["score"]
        self.points += result["points"]
        if result.get("student") is not None and len(self.students) <= 1:
            self.students.add(result["student"])
        if result["verdict"] == WRONG:  # (a variable's first line: its main mistake)
            seen = set()
            for line in result["diagnosis"] or ["(no diagnosis)"]:
                var = line.split(":", 1)[0]
                if var in result.get("grad", ()):
                    if var in seen:
                        continue
                    seen.add(var)
                self._mistakes[(result["problem"], line)] += 1

    def mistakes(self) -> list:
        """``(problem, mistake, answers)``, the most frequent first."""
        return [(p, m, n) for (p, m), n in
                sorted(self._mistakes.items(), key=lambda kv: (-kv[1], kv[0]))]

    def as_dict(self) -> dict:
        return {"answers": sum(self.verdicts.values()),
                **{v: self.verdicts[v] for v in (CORRECT, WRONG, UNDECIDED, "error")},
                "score": self.score, "max_score": self.points,
                "mistakes": [{"problem": p, "mistake": m, "answers": n}
                             for p, m, n in self.mistakes()]}

    def lines(self) -> list:
        """The summary for people: counts, then one line a mistake."""
        total = sum(self.verdicts.values())
        counts = ", ".join(f"{self.verdicts[v]} {v}" for v in
                           (CORRECT, WRONG, UNDECIDED, "error") if self.verdicts[v])
        out = [f"{total} answers: {counts or 'none'}"]
        for p, m, n in self.mistakes():
            out.append(f"  {p}: {m}: {n} answer{'s' if n != 1 else ''}")
        return out


def _output(result: dict) -> str:
    if result["verdict"] == CORRECT:
        return "correct"
    if result["verdict"] == "error":
        return f"could not be checked: {result['message']}"
    return result["message"]


def gradescope_results(results: list, summary: Summary) -> dict:
    """Gradescope's autograder ``results.json`` for one submission: ``score`` (the
    total), ``output``, ``visibility`` and one test an answer (``name``, ``number``,
    ``score``, ``max_score``, ``status``, ``output``, ``visibility``)."""
    tests = [{"name": r["problem"], "number": str(k), "score": r["score"],
              "max_score": r["points"],
              "status": "passed" if r["verdict"] == CORRECT else "failed",
              "output": _output(r), "visibility": "visible"}
             for k, r in enumerate(results, 1)]
    return {"score": summary.score, "output": "\n".join(summary.lines()),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


def prairielearn_results(results: list, summary: Summary) -> dict:
    """PrairieLearn's external-grader ``results.json``: ``gradable``, ``score`` (0 to
    1, the fraction of the points), ``message`` and one test an answer (``name``,
    ``points``, ``max_points``, ``message``, ``output``)."""
    tests = [{"name": r["problem"], "points": r["score"], "max_points": r["points"],
              "message": r["verdict"], "output": _output(r)} for r in results]
    return {"gradable": True,
            "score": summary.score / summary.points if summary.points else 0.0,
            "message": summary.lines()[0], "output": "\n".join(summary.lines()),
            "tests": tests}


def atomic_output(path: str):
    """A text file that becomes ``path`` whole when the block ends without an error,
    and is removed otherwise."""
    return atomic_file(path, "w", encoding="utf-8", newline="\n")


def student_directory(student) -> str:
    """A student's name as one safe directory name: letters, digits and ``@+-.``
    are kept, every other character (``/``, a space, a leading ``.`` or ``_``) is
    percent-encoded, so no name can leave the output directory or meet another's.

    Examples
    --------
    >>> student_directory("ada@uni.edu"), student_directory("../x"), student_directory("Bo Li")
    ('ada@uni.edu', '%2E.%2Fx', 'Bo%20Li')
    """
    text = str(student)
    out = urllib.parse.quote(text, safe="@+-.")
    if out[:1] in (".", "_"):
        out = f"%{ord(out[0]):02X}" + out[1:]
    return out or "%00"


def write_per_student(directory: str, fmt: str, results: list, summary: Summary) -> dict:
    """One grader results.json per student (``fmt``: "gradescope" or "prairielearn") in
    ``directory/<student>/results.json``, each written whole or not at all, and the
    class's summary (verdicts and the most frequent mistakes) in
    ``directory/_summary.json``.  Returns student -> the path written."""
    make = {"gradescope": gradescope_results, "prairielearn": prairielearn_results}[fmt]
    by_student: dict = {}
    for r in results:
        by_student.setdefault(r["student"], []).append(r)
    os.makedirs(directory, exist_ok=True)
    written = {}
    for student, rs in by_student.items():
        own = Summary()
        for r in rs:
            own.add(r)
        folder = os.path.join(directory, student_directory(student))
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "results.json")
        with atomic_output(path) as f:
            f.write(json.dumps(make(rs, own), indent=2, ensure_ascii=False) + "\n")
        written[student] = path
    with atomic_output(os.path.join(directory, "_summary.json")) as f:
        f.write(json.dumps({"students": len(by_student), **summary.as_dict()}, indent=2,
                           ensure_ascii=False) + "\n")
    return written
