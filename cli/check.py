"""``symgrad check``: is a hand-derived gradient right?  One, or a whole problem set."""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import stat
import sys

import click
import numpy as np

from symgrad._util import start_child, stop
from symgrad.checking import batch as answers_batch
from symgrad.checking import check as run_check
from symgrad.checking.jacobians import check_jacobian
from symgrad.symbolic.budget import limits

from ._common import (DONE, FAILED, UNDECIDED, CheckFailed, ExpressionCommand,
                      InputError, assignments, echo_json,
                      load_expression, parse_at, parse_shapes, style)
from ._limits import limit_options
from ._terminal import json_text, terminal_text

try:  # --batch reads TOML: the standard library from Python 3.11, tomli before
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

__all__ = ["check"]

_COLOURS = {"correct": "green", "wrong": "red", "undecided": "yellow"}


def _parse_grads(items: tuple, variables: list) -> dict:
    return {name: load_expression(text, what=f"--grad {name}") for name, text in
            assignments("--grad", items, variables, '--grad x="2*x"')}


def _run(expression: str, grads: dict, at: dict, samples: int, timeout: float,
         shapes: dict | None = None):
    try:
        return run_check(expression, grads, at=at or None, samples=samples, timeout=timeout,
                         shapes=shapes)
    except (ValueError, TypeError) as err:
        raise InputError(err.pretty() if hasattr(err, "pretty") else str(err)) from None


def _exit(verdicts: list) -> int:
    if "wrong" in verdicts:
        return FAILED
    if "undecided" in verdicts:
        return UNDECIDED
    return DONE


#: The largest problem file --batch reads (a class's few thousand answers fit in 1 MB).
MAX_BATCH_BYTES = 16 * 2 ** 20
#: The default of --max-problems: more problems than a class's problem set has.
MAX_PROBLEMS = 10_000
#: The deepest nesting of arrays and inline tables a problem file may have (a problem set
#: needs three: [[problem]], at = {...}, a matrix's "[[1, 2], [3, 4]]" is a string).
MAX_TOML_DEPTH = 32
#: Memory one --jobs worker may take (SymPy and its simplification child).
JOB_MEMORY = 512 * 2 ** 20

# TOML strings (all four kinds) and comments: brackets in them are not nesting.
_TOML_SKIP = re.compile(rb'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
                        rb"|'[^'\n]*'|#[^\n]*", re.S)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def toml_depth(raw: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings and comments, found without
    parsing (tomllib recurses once per level: 900 levels exhaust Python's stack).

    Examples
    --------
    >>> toml_depth(b'[[problem]]\\nat = {x = "[[[1]]]"}  # [[[[')
    2
    >>> toml_depth(b"a = " + b"[" * 900 + b"]" * 900)
    900
    """
    brackets = _NOT_BRACKET.sub(b"", _TOML_SKIP.sub(b"", raw))
    depth = deepest = 0
    for piece in range(0, len(brackets), 2 ** 20):  # (numpy: 16 MB of brackets in 0.1 s)
        a = np.frombuffer(brackets[piece:piece + 2 ** 20], dtype=np.uint8)
        level = depth + np.cumsum(np.where((a == 0x5B) | (a == 0x7B), 1, -1),
                                  dtype=np.int64)
        deepest = max(deepest, int(level.max()))
        depth = int(level[-1])
    return deepest


def _read_regular(path: str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the regular file ``path``: a FIFO (which would wait
    for a writer) or a device (``/dev/zero`` never ends) is refused before it is read."""
    shown = terminal_text(path)
    if "\x00" in path:  # (os refuses it with a ValueError)
        raise InputError(f"{shown}: a file name cannot contain a NUL character")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise InputError(f"{shown}: not a regular file (a FIFO or a device is never "
                             "read)")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # (swapped in meanwhile)
                raise InputError(f"{shown}: not a regular file")
            return f.read(limit + 1)
    except OSError as err:
        raise InputError(f"{shown}: {err.strerror}") from None


def _load_batch(path: str, max_problems: int = MAX_PROBLEMS) -> list:
    raw = _read_regular(path, MAX_BATCH_BYTES)
    shown = terminal_text(path)
    if len(raw) > MAX_BATCH_BYTES:
        raise InputError(f"{shown}: larger than {MAX_BATCH_BYTES // 2 ** 20} MB, the limit "
                         "for a problem file (split it)")
    depth = toml_depth(raw)
    if depth > MAX_TOML_DEPTH:
        raise InputError(f"{shown}: arrays or tables nested {depth} deep; the limit is "
                         f"{MAX_TOML_DEPTH}")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise InputError(f"{shown}: line {line}: not UTF-8 text (byte "
                         f"0x{raw[err.start]:02x})") from None
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"{shown}: not valid TOML: {err}") from None
    problems = data.get("problem")
    if not isinstance(problems, list) or not problems:
        raise InputError(f"{shown}: expected [[problem]] tables with expr = ... and "
                         "grad = {x = ...}")
    if len(problems) > max_problems:
        raise InputError(f"{shown}: {len(problems)} problems, more than the limit of "
                         f"{max_problems} (raise it with --max-problems)")
    return [_problem(k, p) for k, p in enumerate(problems, 1)]


def job_count(asked: int) -> int:
    """``--jobs`` capped by the cores this process may use and the memory available
    (:data:`JOB_MEMORY` a worker)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        free = JOB_MEMORY * cores
    return max(1, min(asked, cores, free // JOB_MEMORY))


def _problem(k: int, p) -> tuple:
    """``(name, expr, grads, at, error)`` of one [[problem]]; a malformed one keeps its
    place with an error naming the key at fault (the batch goes on)."""
    if not isinstance(p, dict):
        return (f"#{k}", "", {}, {}, f"problem #{k}: expected a table with expr = \"...\" "
                                      f"and grad = {{VAR = \"...\"}}, not {type(p).__name__}")
    name = str(p.get("name", f"#{k}"))
    expr, grad, at = p.get("expr"), p.get("grad"), p.get("at", {})
    for key, value, kind in (("expr", expr, str), ("grad", grad, dict), ("at", at, dict)):
        if not isinstance(value, kind):
            want = '"..."' if kind is str else '{VAR = "..."}'
            return (name, expr if isinstance(expr, str) else "", {}, {},
                    f"problem {name}: key {key} must be {want}, not {type(value).__name__}")
    return (name, expr, {key: str(v) for key, v in grad.items()},
            {key: str(v) for key, v in at.items()}, None)


def _one(job: tuple) -> tuple:
    """``(verdict, report, error)`` of one distinct problem (in a worker with --jobs)."""
    name, text, grad_texts, at_texts, samples, timeout = job
    try:
        expr = load_expression(text, what=f"problem {name}")
        grads = _parse_grads(tuple(f"{k}={v}" for k, v in grad_texts), expr.variables)
        at = parse_at(tuple(f"{k}={v}" for k, v in at_texts), expr.variables)
        report = _run(text, grads, at, samples, timeout)
        return report.verdict, report, None
    except InputError as err:
        return "error", None, err.format_message()
    except Exception as err:  # noqa: BLE001 - one problem's failure is its own entry
        return "error", None, f"internal error: {type(err).__name__}: {err}"


def _worker(conn, jobs: list, first: int, step: int) -> None:
    for i in range(first, len(jobs), step):
        conn.send((i, _one(jobs[i])))
    conn.close()


def _in_processes(jobs: list, n: int, bar) -> list:
    """``_one`` of every job, in ``n`` worker processes (tracked, each leading a process
    group with the symbolic children it starts: on any exit, SIGINT and SIGTERM included,
    every one is killed)."""
    out: list = [None] * len(jobs)
    workers = []
    try:
        for w in range(n):
            parent, child = multiprocessing.Pipe(duplex=False)
            workers.append((start_child(_worker, (child, jobs, w, n)), parent))
            child.close()
        for proc, parent in workers:
            while True:
                try:
                    i, result = parent.recv()
                except EOFError:
                    break
                out[i] = result
                bar.update(1)
            proc.join()
    finally:
        for proc, parent in workers:
            stop(proc)
            parent.close()
    for i, result in enumerate(out):
        if result is None:  # a worker that died: the problem gets an error entry
            out[i] = ("error", None, "internal error: the worker checking it stopped")
    return out


def _batch(path: str, samples: int, timeout: float, as_json: bool, jobs: int = 1,
           max_problems: int = MAX_PROBLEMS) -> None:
    problems = _load_batch(path, max_problems)
    # Identical answers (a class gives many) are checked once, and distinct ones in
    # ``jobs`` processes; the results are the same whatever ``jobs`` is.
    keys, distinct = [], {}
    for name, text, grad_texts, at_texts, error in problems:
        key = None if error is not None else (
            text, tuple(sorted(grad_texts.items())), tuple(sorted(at_texts.items())))
        keys.append(key)
        if key is not None and key not in distinct:
            distinct[key] = (name, key[0], key[1], key[2], samples, timeout)
    show_bar = sys.stderr.isatty() and not as_json
    with click.progressbar(length=len(distinct), label="checking", file=sys.stderr,
                           hidden=not show_bar) as bar:
        jobs = min(job_count(jobs), len(distinct))
        if jobs > 1:
            outcomes = _in_processes(list(distinct.values()), jobs, bar)
        else:
            outcomes = []
            for job in distinct.values():
                outcomes.append(_one(job))
                bar.update(1)
    checked = dict(zip(distinct, outcomes))
    results = []
    for (name, text, _, _, error), key in zip(problems, keys):
        if key is None:
            results.append((name, text, "error", None, error))
        else:
            verdict, report, err = checked[key]
            results.append((name, text, verdict, report, err))
    verdicts = [r[2] for r in results]
    if as_json:
        echo_json({"problems": [
            {"name": n, "expression": t, "verdict": v,
             **({"report": r.as_dict()} if r is not None else {"error": e})}
            for n, t, v, r, e in results],
            "summary": {v: verdicts.count(v) for v in
                        ("correct", "wrong", "undecided", "error")}})
    else:
        names = [terminal_text(r[0]) for r in results]  # (user text: shown, never obeyed)
        width = max(len(n) for n in names)
        for shown, (name, text, verdict, report, error) in zip(names, results):
            line = f"{shown.ljust(width)}  {style(verdict.ljust(9), fg=_COLOURS.get(verdict))}"
            detail = error or "; ".join(report.diagnosis) if verdict != "correct" else ""
            click.echo(f"{line}  {terminal_text(text)}" +
                       (f"   ({terminal_text(detail)})" if detail else ""))
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in
                           ("correct", "wrong", "undecided", "error") if v in verdicts)
        click.echo(f"\n{len(results)} problems: {counts}")
    code = FAILED if "error" in verdicts else _exit(verdicts)
    if code:
        raise CheckFailed(code)


@click.command(cls=ExpressionCommand)
@click.argument("expression", required=False)
@click.option("--grad", "grad_items", multiple=True, metavar="VAR=EXPR",
              help="The gradient you derived for VAR (repeatable).")
@click.option("--jacobian", "jacobian_items", multiple=True, metavar="VAR=EXPR",
              help="The Jacobian you derived for VAR, of a vector function too "
                   "(repeatable): output elements × VAR's elements, x=\"diag(cos(x))\".")
@click.option("--at", "at_items", multiple=True, metavar="VAR=VALUE",
              help="A point to check at; also fixes vector/matrix shapes (repeatable).")
@click.option("--shape", "shape_items", multiple=True, metavar="VAR=DIMS",
              help="The shape of a variable without --at: A=n,m or x=m (repeatable). "
                   "A claim in vector form is checked for every size anyway.")
@click.option("--samples", type=click.IntRange(0, 10_000), default=10, show_default=True,
              help="Random points checked besides --at.")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=1.5,
              show_default=True, help="Seconds of CPU time allowed for symbolic proofs "
              "(a check stays within about 3 s, whatever the machine's load; raise it for "
              "large expressions).")
@click.option("--batch", "batch", type=click.Path(dir_okay=False), default=None,
              help="Check a whole problem set (TOML, [[problem]] tables).")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="With --batch: check the problems or answers in this many processes "
                   "(at most one per core, and as many as the free memory allows).")
@click.option("--max-problems", type=click.IntRange(1), default=MAX_PROBLEMS,
              show_default=True, help="With --batch: the most problems a file may hold.")
@click.option("--format", "out_format", default=None,
              type=click.Choice(["text", "json", "jsonl", "gradescope", "prairielearn"]),
              help="With --batch: the report's form: JSON Lines (one answer a line, as "
                   "each is checked), Gradescope's or PrairieLearn's results.json.")
@click.option("--output", "output", type=click.Path(dir_okay=False), default=None,
              help="With --batch: write the report to this file (whole or not at all).")
@click.option("--output-dir", "output_dir", type=click.Path(file_okay=False), default=None,
              help="With --batch and --format gradescope or prairielearn: one "
                   "results.json per student, DIR/<student>/results.json, and the "
                   "class's summary in DIR/_summary.json.")
@click.option("--time-limit", "time_limit", type=click.FloatRange(0.5, 3600), default=None,
              help="With --batch: seconds of CPU time one answer's check may take (then "
                   "undecided; 20x that in wall time is a safety net) [default: 10 for "
                   "answer files].")
@click.option("--json", "as_json", is_flag=True, help="JSON report on stdout.")
@limit_options("elements", "terms")
def check(expression: str | None, grad_items: tuple, jacobian_items: tuple, at_items: tuple,
          shape_items: tuple, samples: int,
          timeout: float, batch: str | None, jobs: int, max_problems: int, out_format,
          output, output_dir, time_limit, as_json: bool, max_elements: int,
          max_terms: int) -> None:
    """Check a hand-derived gradient of EXPRESSION: symbolically (SymPy), then
    numerically at the given and random points. A wrong gradient gets a counterexample
    and a diagnosis. Exit status: 0 correct, 1 wrong, 3 undecided, 2 bad input (also
    work past --max-elements or --max-terms, estimated before it is done).

    \b
    Examples:
      symgrad check "sin(dot(x,y))" --grad x="cos(dot(x,y))*y" --at x=[1,2,3] --at y=[5,6,7]
      symgrad check "x**2*sin(x)" --grad x="2*x*sin(x)"
      symgrad check "x.T @ A @ x" --grad x="(A + A.T) @ x" --shape A=n,n --shape x=n
      symgrad check "sin(x)" --jacobian x="diag(cos(x))" --shape x=n
      symgrad check --batch problems.toml --json
      symgrad check --batch answers.jsonl --format gradescope --output results.json
      symgrad check --batch class.jsonl --format gradescope --output-dir graded

    \b
    A problem set (TOML):
      [[problem]]
      name = "1a"
      expr = "sin(dot(x, y))"
      grad = { x = "cos(dot(x, y))*y" }
      at = { x = "[1, 2, 3]", y = "[5, 6, 7]" }

    \b
    A class's answers (JSON Lines, one a line; also CSV with grad.x columns, or JSON):
      {"student": "ada", "problem": "1b", "expr": "sin(x**2)", "grad": {"x": "cos(x**2)"}}
    """
    with limits(max_elements=max_elements, max_terms=max_terms):  # (batch workers fork)
        if jacobian_items:
            _check_jacobian(expression, grad_items, jacobian_items, at_items, shape_items,
                            samples, batch, as_json)
            return
        if output_dir is not None and (out_format not in ("gradescope", "prairielearn")
                                       or output or not batch):
            raise InputError("--output-dir goes with --batch FILE and --format gradescope "
                             "or prairielearn (and not with --output)")
        if batch and (out_format not in (None, "text", "json") or output or time_limit
                      or answers_batch.answer_format(batch)):
            if expression or grad_items or at_items or shape_items:
                raise InputError("--batch with an answer file or --format: give no "
                                 "EXPRESSION, --grad, --at or --shape with it")
            _answers(batch, out_format or ("json" if as_json else "text"), output, samples,
                     timeout, time_limit or 10.0, max_problems, job_count(jobs), output_dir)
            return
        if output or out_format not in (None, "text", "json"):
            raise InputError("--format and --output go with --batch FILE")
        _check(expression, grad_items, at_items, shape_items, samples, timeout, batch, jobs,
               max_problems, as_json or out_format == "json")


def _toml_answers(path: str, max_problems: int) -> list:
    out = []
    for k, (name, expr, grads, at, error) in enumerate(_load_batch(path, max_problems), 1):
        if error is not None:
            raise InputError(f"{terminal_text(path)}: {error}")
        out.append(answers_batch.Answer(k, name, None, expr, grads, at, 1.0))
    return out


def _answers(path: str, fmt: str, output, samples: int, timeout: float, time_limit: float,
             max_problems: int, jobs: int = 1, output_dir: str | None = None) -> None:
    """--batch over an answer file (or a problem set in a grader's format): the file is
    read twice, once to find a bad line before anything is checked, once to check; the
    answers stream through, the report goes out as they are checked."""
    if answers_batch.answer_format(path) is None:
        listed = _toml_answers(path, max_problems)
        read = lambda: iter(listed)  # noqa: E731
    else:
        read = lambda: answers_batch.read_answers(path)  # noqa: E731
    count, students = 0, set()
    try:
        for a in read():
            count += 1
            if count > max_problems:
                raise InputError(f"{terminal_text(path)}: more than {max_problems} answers "
                                 "(raise the limit with --max-problems)")
            if output_dir is not None and a.student is None:
                raise InputError(f"{terminal_text(path)}: line {a.line}: no student "
                                 "(--output-dir writes one results.json per student)")
            if a.student is not None and len(students) < 2:
                students.add(a.student)
        if not count:
            raise InputError(f"{terminal_text(path)}: no answers")
        if fmt in ("gradescope", "prairielearn") and len(students) > 1 and not output_dir:
            raise InputError(f"{terminal_text(path)}: a {fmt} results.json grades one "
                             "submission, and this file has answers of several students "
                             "(split it by student, or give --output-dir)")
        summary = answers_batch.Summary()
        if output_dir is not None:
            results = _stream(read(), fmt, None, summary, samples, timeout, time_limit,
                              jobs)
            answers_batch.write_per_student(output_dir, fmt, results, summary)
        else:
            with _sink(output) as write:
                results = _stream(read(), fmt, write, summary, samples, timeout,
                                  time_limit, jobs)
                _finish(fmt, write, results, summary)
    except answers_batch.BatchFileError as err:
        raise InputError(str(err)) from None
    except OSError as err:
        raise InputError(f"{terminal_text(output or path)}: {err.strerror}") from None
    verdicts = [v for v, n in summary.verdicts.items() if n]
    code = FAILED if "error" in verdicts else _exit(verdicts)
    if code:
        raise CheckFailed(code)


class _sink:
    """Where the report goes: stdout, or a file written whole or not at all."""

    def __init__(self, output) -> None:
        self.output, self.ctx = output, None

    def __enter__(self):
        if self.output is None:
            return click.echo
        if "\x00" in self.output:
            raise InputError("an output name cannot contain a NUL character")
        self.ctx = answers_batch.atomic_output(self.output)
        f = self.ctx.__enter__()
        return lambda text: f.write(text + "\n")

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc) if self.ctx else False


def _json_line(obj, indent=None) -> str:
    return json_text(json.dumps(obj, indent=indent, ensure_ascii=False))


def _stream(answers, fmt: str, write, summary, samples, timeout, time_limit,
            jobs: int) -> list:
    """Each answer checked and written at once (text, jsonl); the results kept only for
    the whole-document formats."""
    kept = []
    for r in answers_batch.check_answers(answers, samples, timeout, time_limit, jobs):
        summary.add(r)
        if fmt == "jsonl":
            write(_json_line(r))
        elif fmt == "text":
            detail = "" if r["verdict"] == "correct" else (
                "; ".join(r["diagnosis"]) or r["message"].splitlines()[0])
            who = f"{r['student']}  " if r["student"] is not None else ""
            write(terminal_text(f"{r['line']:>5}  {who}{r['problem']}  ") +
                  style(r["verdict"].ljust(9), fg=_COLOURS.get(r["verdict"])) +
                  terminal_text(f"  {r['expression']}" + (f"   ({detail})" if detail
                                                          else "")))
        else:
            kept.append(r)
    return kept


def _finish(fmt: str, write, results: list, summary) -> None:
    if fmt == "jsonl":
        write(_json_line({"summary": summary.as_dict()}))
    elif fmt == "text":
        write("")
        for line in summary.lines():
            write(terminal_text(line))
    elif fmt == "json":
        write(_json_line({"answers": results, "summary": summary.as_dict()}, indent=2))
    else:
        make = {"gradescope": answers_batch.gradescope_results,
                "prairielearn": answers_batch.prairielearn_results}[fmt]
        write(_json_line(make(results, summary), indent=2))


def _check_jacobian(expression, grad_items, jacobian_items, at_items, shape_items, samples,
                    batch, as_json) -> None:
    if batch or grad_items:
        raise InputError("--jacobian checks one claimed Jacobian: give no --grad or "
                         "--batch with it")
    if not expression:
        raise InputError("missing EXPRESSION; see symgrad check --help")
    expr = load_expression(expression)
    claims = {name: load_expression(text, what=f"--jacobian {name}") for name, text in
              assignments("--jacobian", jacobian_items, expr.variables,
                          '--jacobian x="diag(cos(x))"')}
    at = parse_at(at_items, expr.variables)
    shapes = parse_shapes(shape_items, expr.variables, at)
    try:
        report = check_jacobian(expr, claims, at=at or None, samples=samples, shapes=shapes)
    except (ValueError, TypeError) as err:
        raise InputError(err.pretty() if hasattr(err, "pretty") else str(err)) from None
    _show(report, as_json)


def _check(expression, grad_items, at_items, shape_items, samples, timeout, batch, jobs,
           max_problems, as_json) -> None:
    if batch:
        if expression or grad_items or at_items or shape_items:
            raise InputError("--batch checks a problem file: give no EXPRESSION, --grad, "
                             "--at or --shape with it")
        _batch(batch, samples, timeout, as_json, jobs, max_problems)
        return
    if not expression:
        raise InputError("missing EXPRESSION (or --batch FILE); see symgrad check --help")
    if not grad_items:
        raise InputError("give the gradient to check: --grad VAR=EXPR")
    expr = load_expression(expression)
    grads = _parse_grads(grad_items, expr.variables)
    at = parse_at(at_items, expr.variables)
    shapes = parse_shapes(shape_items, expr.variables, at)
    report = _run(expression, grads, at, samples, timeout, shapes)
    _show(report, as_json)


def _show(report, as_json: bool) -> None:
    if as_json:
        echo_json(report.as_dict())
    else:
        text = terminal_text(report.text(), newlines=True)
        head, _, rest = text.partition(":")
        click.echo(style(head, fg=_COLOURS.get(report.verdict), bold=True) + ":" + rest)
    if report.exit_code:
        raise CheckFailed(report.exit_code)
