"""Generators of hostile and random input for symgrad's surfaces, and the one oracle they
are judged by: every input ends in an exit status of the contract (0 done, 1 wrong, 2 bad
input as one clear line, 3 undecided), never an internal error (70), a traceback or a
hang; nothing typed is ever executed, user text reaches the terminal escaped (no raw
control character), and memory stays bounded.

Strategies (:data:`STRATEGIES`, picked at random by :func:`fuzz`):

* ``command`` -- random and mutated expressions through ``diff``, ``check``, ``draw``;
* ``manifest``, ``npy``, ``zip`` -- crafted ``symgrad.save`` files for ``symgrad.load``:
  a valid file with its manifest, a ``.npy`` header or the archive changed; the load
  returns data or raises one ``LoadError``, within :data:`LOAD_MEMORY` (tracemalloc);
* ``toml`` -- problem files for ``check --batch``: deep nesting, huge strings, hostile
  names, wrong types, bytes that are not UTF-8;
* ``sizes`` -- large shapes and values, within and beyond the limits of
  :mod:`symgrad.symbolic.budget` (Kronecker chains, outer products, matrix products,
  determinants, Hessians, long ``--at`` vectors): an answer or one line with exit 2;
* ``names`` -- control characters, huge names and hostile text in ``--wrt``, ``-o``
  names, variables and batch problem names;
* ``signal`` -- a real ``symgrad`` process sent SIGINT or SIGTERM at a random moment:
  exit 130/143 (or its own status if it ended first) and no process of its session left.

The process's peak memory is checked after every input (:data:`PROCESS_MEMORY`).
Used by tests/fuzz/test_fuzz.py (a fixed, short sample) and bench/fuzz.py (as long as you
like: ``python bench/fuzz.py --minutes 30``).
"""
from __future__ import annotations

import copy
import io
import json
import os
import pathlib
import random
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile

import numpy as np
from click.testing import CliRunner

import symgrad
from symgrad.errors import LoadError
from symgrad_cli.main import cli

FUNCTIONS = ["sin", "cos", "tanh", "exp", "log", "sqrt", "sigmoid", "relu", "abs", "atan",
             "cosh", "softplus", "log1p", "erf", "asinh", "sum", "mean", "norm", "logsumexp",
             "dot", "max", "det", "trace", "sign", "ln", "sec"]
ATOMS = ["x", "y", "z", "w", "A", "0", "1", "2.5", "1e-10", "1e300", "pi", "e", "-1",
         "0.1", "1000", "x.T"]
NOISE = ["(", ")", "**", "*", "+", "-", "/", "@", ",", ".", "^", "'", '"', "__import__",
         "os.system('echo hi')", "lambda", "[", "]", "{", "}", "\\", "\x00", "é", "∂", " ",
         "--help", "-o", "x=", ";", "#", "\n", "1" * 400, "(" * 60, ")" * 60]
HOSTILE = ["__import__('os').system('touch /tmp/pwned')", "exec('1')", "eval('1')",
           "open('/etc/passwd')", "x.__class__", "().__class__.__bases__", "x**(2**100)",
           "x*(y*0+10)**(y*0+5000)", "sin(0)**x", "tanh(" * 120 + "x" + ")" * 120,
           "x + (y*0+0.5)**((y*0+10)**(y*0+100))", "-tanh(x)", "--", "-", "", " ",
           "1/0", "log(0)", "sqrt(-1)", "0**0", "x**-1000", "exp(exp(exp(x)))"]


def expression(rng: random.Random, depth: int = 0) -> str:
    """A random expression of the grammar (sometimes ill-typed, sometimes wrong)."""
    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice(ATOMS)
    if r < 0.6:
        op = rng.choice(["+", "-", "*", "/", "**", "@"])
        return f"({expression(rng, depth + 1)} {op} {expression(rng, depth + 1)})"
    f = rng.choice(FUNCTIONS)
    args = [expression(rng, depth + 1) for _ in range(2 if f == "dot" else 1)]
    return f"{f}({', '.join(args)})"


def mutate(rng: random.Random, text: str) -> str:
    """``text`` with a few random insertions, deletions and noise."""
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        k = rng.randint(0, len(chars))
        if rng.random() < 0.5 and chars:
            del chars[min(k, len(chars) - 1)]
        else:
            chars[k:k] = rng.choice(NOISE)
    return "".join(chars)


def value(rng: random.Random) -> str:
    return rng.choice(["4", "-0.5", "[1,2,3]", "[[1,2],[3,4]]", "[0]", "nan", "inf", "1e400",
                       "[1,", "x", "[[1,2],[3]]", "-1e-300", "[]", "2"])


def command(rng: random.Random) -> list:
    """A random command line for diff, check or draw."""
    pick = rng.random()
    expr = rng.choice(HOSTILE) if pick < 0.15 else (
        mutate(rng, expression(rng)) if pick < 0.45 else expression(rng))
    at = []
    for v in rng.sample(["x", "y", "z", "A", "w"], rng.randint(0, 3)):
        at += ["--at", f"{v}={value(rng)}"]
    kind = rng.random()
    if kind < 0.5:
        extra = ["--order", str(rng.choice([1, 2, 3]))] if rng.random() < 0.2 else []
        return ["diff", expr, *at, *extra, *(["--json"] if rng.random() < 0.3 else [])]
    if kind < 0.85:
        claim = mutate(rng, expr) if rng.random() < 0.5 else expression(rng)
        return ["check", expr, "--grad", f"x={claim}", *at, "--samples", "3",
                "--timeout", "5"]
    return ["draw", expr, *at, "-o", rng.choice(["-", "out.dot", "out.xyz", ""]),
            "--format", "dot"]


#: The input being run (what a hang report names).
CURRENT: dict = {}
#: Control characters that must never reach the terminal raw (newline and tab aside).
_RAW = {chr(c) for c in [*range(0, 9), *range(11, 32), 0x7F, *range(0x80, 0xA0)]} | {
    "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u202a", "\u202b", "\u202d"}


def run_one(args: list) -> tuple[bool, str]:
    """Whether ``args`` ended as the contract says, and what happened."""
    CURRENT["input"] = args
    r = CliRunner().invoke(cli, args)
    return judge(r.exit_code, r.exception, r.output)


def judge(code: int, exception, text: str) -> tuple[bool, str]:
    """The contract's judgement of a command that ended with ``code`` (``exception``
    raised, ``text`` its output): ``(ok, what happened)``."""
    ok = code in (0, 1, 2, 3) and (exception is None or isinstance(exception, SystemExit))
    if "internal error" in text or "Traceback" in text:
        ok = False
    raw = sorted({c for c in text if c in _RAW})
    if raw:
        ok = False
        text += f" [raw control characters: {raw!r}]"
    if code == 2 and not text.startswith("Usage"):  # (click's usage errors aside)
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        # one line, or a line with the text and a caret under the column
        ok = ok and 1 <= len(lines) <= 3 and lines[0].startswith("symgrad: error")
    return ok, f"exit {code}: {text[-300:]!r}"


def fuzz(seed: int, n: int | None = None, seconds: float | None = None,
         strategies: tuple | None = None, counts: dict | None = None,
         on_failure=None) -> tuple[int, list]:
    """Run ``n`` inputs (or for ``seconds``), each from a strategy picked at random (by
    :data:`WEIGHTS`) among ``strategies`` (default: all); returns (count, failures),
    each failure ``(input, what happened)``, also passed to ``on_failure`` at once;
    ``counts`` (a Counter) gets the inputs per strategy."""
    rng = random.Random(seed)
    names = list(strategies or STRATEGIES)
    weights = [WEIGHTS[k] for k in names]
    failures, count = [], 0
    end = None if seconds is None else time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as scratch:
        while (n is None or count < n) and (end is None or time.monotonic() < end):
            kind = rng.choices(names, weights)[0]
            before = _peak()
            CURRENT.clear()
            try:
                with _guard(HANG):
                    given, ok, what = STRATEGIES[kind](rng, pathlib.Path(scratch))
            except _Hang:
                given, ok, what = CURRENT.get("input", kind), False, \
                    f"still running after {HANG} s"
            except Exception as err:  # noqa: BLE001 - the oracle's own failure is one too
                given, ok, what = kind, False, f"fuzzer: {type(err).__name__}: {err}"
            if _peak() > PROCESS_MEMORY >= before:
                ok, what = False, f"peak memory {_peak() >> 20} MB; {what}"
            count += 1
            if counts is not None:
                counts[kind] += 1
            if not ok:
                failures.append(((kind, given), what))
                if on_failure is not None:
                    on_failure(failures[-1])
    return count, failures


#: An input still running after this many seconds is a hang (a guard, far above the
#: bounded commands' ~10 s: not a measure of speed).
HANG = 180


class _Hang(BaseException):
    """The guard's alarm (a BaseException: no ``except Exception`` of a command eats it)."""


class _guard:
    """SIGALRM after ``seconds`` raises :class:`_Hang` in this (main) thread."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds

    def __enter__(self):
        self.old = signal.signal(signal.SIGALRM, self._ring)
        signal.alarm(self.seconds)

    def __exit__(self, *exc) -> None:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)

    @staticmethod
    def _ring(signum, frame):
        raise _Hang


#: The most memory this process may reach (its peak RSS) while fuzzing.
PROCESS_MEMORY = 1 << 30
#: The most memory one ``symgrad.load`` may allocate (its files are at most a few MB).
LOAD_MEMORY = 64 << 20


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _command(rng: random.Random, scratch: pathlib.Path):
    args = command(rng)
    os.chdir(scratch)
    return (args, *run_one(args))


# -- files: symgrad.save archives ------------------------------------------------------------
_DTYPES = ["float32", "float64", "float16", "int64", "int32", "bool"]
HOSTILE_VALUES = ["__class__", "__builtins__", "np", "__loader__", "os", "", "float32\x00",
                  -1, 10 ** 12, 2 ** 63, 1e308, None, True, [], {}, "0", "../../etc/passwd",
                  "x" * 100_000, {"tensor": 0}, [[[]]], -0.0]


def _data(rng: random.Random, depth: int = 0):
    """A random object save accepts: tensors, numbers, strings, dtypes, containers."""
    r = rng.random()
    if depth > 3 or r < 0.4:
        shape = tuple(rng.randint(0, 4) for _ in range(rng.randint(0, 3)))
        dtype = getattr(symgrad, rng.choice(_DTYPES))
        return symgrad.zeros(shape, dtype=dtype) + (1 if dtype != symgrad.bool else 0)
    if r < 0.55:
        return rng.choice([1, -2.5, float("nan"), "text", None, symgrad.float64,
                           symgrad.device("cpu"), True])
    items = [_data(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if r < 0.7:
        return items
    if r < 0.8:
        return tuple(items)
    return {f"k{i}": v for i, v in enumerate(items)}


def saved(rng: random.Random) -> bytes:
    buf = io.BytesIO()
    symgrad.save(_data(rng), buf)
    return buf.getvalue()


def _members(raw: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def _archive(members: dict, method=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _mutate_json(rng: random.Random, node):
    """``node`` with one value somewhere replaced by a hostile one."""
    if isinstance(node, dict) and node and rng.random() < 0.7:
        key = rng.choice(list(node))
        if rng.random() < 0.3:
            at = rng.choice([key, "dtype", "tensor", "format", "__reduce__", "object",
                             "requires_grad", "ordered", "float"])
            node[at] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
        else:
            node[key] = _mutate_json(rng, node[key])
        return node
    if isinstance(node, list) and node and rng.random() < 0.7:
        i = rng.randrange(len(node))
        node[i] = _mutate_json(rng, node[i])
        return node
    return copy.deepcopy(rng.choice(HOSTILE_VALUES))


def _manifest(rng: random.Random) -> bytes:
    members = _members(saved(rng))
    r = rng.random()
    if r < 0.15:  # nested far deeper than any container may be
        depth = rng.choice([65, 1000, 100_000])
        text = '{"format": 1, "object": ' + '{"list": [' * depth + "1" + "]}" * depth + "}"
    elif r < 0.25:  # a huge string
        text = json.dumps({"format": 1, "object": "x" * rng.choice([10 ** 6, 17 * 2 ** 20])})
    elif r < 0.35:  # one member referenced many times
        text = json.dumps({"format": 1, "object": {"list": [{"tensor": 0, "dtype": "float32"}]
                                                   * rng.choice([2, 400])}})
    elif r < 0.45:  # not JSON, or JSON of the wrong kind
        text = rng.choice(["", "[", "null", "[1, 2]", '{"format": 99}', "\x00" * 9,
                           '{"format": 1}', '{"format": 1, "object": NaN}'])
    else:
        manifest = json.loads(members["symgrad.json"])
        for _ in range(rng.randint(1, 3)):
            manifest = _mutate_json(rng, manifest)
        text = json.dumps(manifest)
    members["symgrad.json"] = text.encode("utf-8", "surrogatepass")
    return _archive(members)


def _npy_header(descr, shape, fortran=False, raw: str | None = None) -> bytes:
    text = raw if raw is not None else (
        f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}")
    text += " " * (-(len(text) + 11) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin-1")


def _npy(rng: random.Random) -> bytes:
    members = _members(saved(rng))
    arrays = [k for k in members if k.endswith(".npy")]
    if not arrays:
        members = _members(_archive_of(symgrad.ones(3)))
        arrays = [k for k in members if k.endswith(".npy")]
    name = rng.choice(arrays)
    r = rng.random()
    if r < 0.5:
        descr = rng.choice(["<f4", "<f8", "<c16", "<M8[s]", "|O", "<U10", "|S3", "<f4",
                            [("a", "<f4")], ">f8", "<i8", "|b1", "<f2", "<q", "<V8", "x"])
        shape = rng.choice([(3,), (10 ** 12,), (2 ** 62, 4), (-1,), (), (0,), (3, 0),
                            (1,) * 70, ("x",), (3.5,)])
        data = b"\x00" * rng.choice([0, 12, 24, 4096])
        members[name] = _npy_header(descr, shape, rng.random() < 0.2) + data
    elif r < 0.7:
        members[name] = _npy_header(None, None, raw=rng.choice([
            "[1, 2]", "{}", "{'descr': '<f4'}", "{'descr': '<f4', 'shape': (3,), "
            "'fortran_order': False, 'extra': 1}", "__import__('os')", "{" * 500,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "9" * 4000 + ",)}"]))
    elif r < 0.85:  # a truncated or padded member
        data = members[name]
        members[name] = data[:rng.randint(0, len(data))] if rng.random() < 0.6 else \
            data + b"\x00" * rng.randint(1, 5000)
    else:  # a header claiming a longer header than the member
        members[name] = b"\x93NUMPY" + bytes([rng.choice([1, 2, 3, 9]), 0]) + \
            struct.pack("<H" if rng.random() < 0.5 else "<I", 65535) + b"{"
    return _archive(members)


def _archive_of(obj) -> bytes:
    buf = io.BytesIO()
    symgrad.save(obj, buf)
    return buf.getvalue()


def _zip(rng: random.Random) -> bytes:
    raw = saved(rng)
    r = rng.random()
    if r < 0.3:  # bytes flipped anywhere
        b = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if r < 0.45:
        return raw[:rng.randint(0, len(raw))]
    members = _members(raw)
    if r < 0.6:  # a compression bomb: many zeros declared as a small tensor's data
        name = rng.choice([k for k in members if k.endswith(".npy")] or ["0.npy"])
        members[name] = _npy_header("<f4", (rng.choice([4, 2 ** 24]),)) + \
            b"\x00" * rng.choice([16, 2 ** 24])
        return _archive(members, zipfile.ZIP_DEFLATED)
    if r < 0.75:  # members missing or extra
        if rng.random() < 0.5 and len(members) > 1:
            members.pop(rng.choice([k for k in members if k != "symgrad.json"]))
        else:
            members[rng.choice(["../x.npy", "999.npy", "symgrad.json/..", "a" * 300])] = b""
        return _archive(members)
    return rng.choice([b"", b"PK\x05\x06" + b"\x00" * 18, b"\x80\x02}q\x00.",
                       b"not a zip", os.urandom(rng.randint(1, 400))])


def judge_load(raw: bytes) -> tuple[bool, str]:
    """Whether ``symgrad.load`` of ``raw`` gave data or one LoadError, within
    :data:`LOAD_MEMORY`."""
    tracemalloc.start()
    try:
        out = symgrad.load(io.BytesIO(raw))
        what, ok = f"loaded {type(out).__name__}", _only_data(out)
    except LoadError as err:
        text = str(err)
        what, ok = f"LoadError: {text[:200]}", "\n" not in text and 0 < len(text) < 2000
    except Exception as err:  # noqa: BLE001 - any other exception is a failure
        what, ok = f"{type(err).__name__}: {str(err)[:200]}", False
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if peak > LOAD_MEMORY:
        ok, what = False, f"{peak >> 20} MB allocated; {what}"
    return ok, what


_PLAIN = (int, float, str, bool, type(None), symgrad.Tensor, symgrad.dtype, symgrad.device)


def _only_data(obj) -> bool:
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif not isinstance(v, _PLAIN):
            return False
    return True


def _file_strategy(make):
    def run(rng: random.Random, scratch: pathlib.Path):
        raw = make(rng)
        ok, what = judge_load(raw)
        return f"{len(raw)} bytes, sha {hash(raw) & 0xFFFFFFFF:08x}", ok, what
    return run


# -- files: TOML problem sets for check --batch ----------------------------------------------
HOSTILE_NAMES = ["\x1b]0;pwned\x07", "\x1b[2J", "a\rb", "\x00", "\u202egnp.exe", "\x9b31m",
                 "\x7f", "x\ny", "\\", '\\"', "\x0b\x0c", "<img src=x onerror=alert(1)>",
                 "名前", "x" * 100_000, "--help", "-o", "%s%n", "${HOME}", "\udcff"]
# ("\udcff": a byte of argv that is not UTF-8, as Python decodes it)


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (any character, escaped as TOML asks)."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 32 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF:
            out.append(f"\\u{ord(c):04x}" if not 0xD800 <= ord(c) <= 0xDFFF else "?")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def toml_file(rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.12:  # nested arrays or inline tables, within and past the limit (32)
        depth = rng.choice([3, 31, 33, 900, 100_000])
        opening, closing = ("[", "]") if rng.random() < 0.5 else ("{a=", "}")
        return f"x = {opening * depth}1{closing * depth}\n".encode()
    if r < 0.2:  # a huge string
        return ('[[problem]]\nname = "big"\nexpr = "' + "x+" * rng.choice([10 ** 4, 10 ** 6])
                + 'x"\ngrad = {x = "1"}\n').encode()
    if r < 0.28:
        return rng.choice([b"\xff\xfe[[problem]]", b"[[problem]]\nexpr = \"\xc3\x28\"",
                           b"[[problem]\n", b"problem = 3", b"[[problem]]\nexpr = 1",
                           b"[[problem]]\ngrad = 2", b"", b"[[problem]]\nat = {x = []}",
                           b"[[problem]]\nexpr='x'\ngrad={y='1'}", b"\x00" * 50])
    lines = []
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(HOSTILE_NAMES) if rng.random() < 0.5 else f"p{rng.randint(0, 99)}"
        expr = rng.choice(HOSTILE) if rng.random() < 0.15 else expression(rng)
        claim = mutate(rng, expr) if rng.random() < 0.5 else expression(rng)
        lines += ["[[problem]]", f"name = {_toml_string(name)}",
                  f"expr = {_toml_string(expr)}",
                  f"grad = {{ {rng.choice(['x', 'y', 'A'])} = {_toml_string(claim)} }}"]
        if rng.random() < 0.4:
            lines.append(f"at = {{ x = {_toml_string(value(rng))} }}")
    return ("\n".join(lines) + "\n").encode()


def _toml(rng: random.Random, scratch: pathlib.Path):
    path = scratch / "problems.toml"
    path.write_bytes(toml_file(rng))
    args = ["check", "--batch", str(path), "--samples", "2", "--timeout", "3"]
    if rng.random() < 0.2:
        args += ["--jobs", "2"]
    os.chdir(scratch)
    return (args, *run_one(args))


# -- sizes ----------------------------------------------------------------------------------
def _kron_chain(k: int, name: str = "A") -> str:
    return "sum(" + "kron(" * (k - 1) + name + f", {name})" * (k - 1) + ")"


def size_command(rng: random.Random) -> list:
    """A command whose work grows with a size: within or beyond the limits."""
    n = rng.choice([1, 2, 3, 5, 8, 20, 48, 100, 101, 1000])
    k = rng.randint(1, 24)
    exprs = [(_kron_chain(k), {"A": "2,2"}), (_kron_chain(min(k, 4)), {"A": f"{n},{n}"}),
             ("sum(outer(x, x))", {"x": str(n)}), ("det(A)", {"A": f"{n},{n}"}),
             ("sum(inverse(A))", {"A": f"{n},{n}"}), ("sum((A @ x - b)**2)",
                                                    {"A": f"{n},{n}", "x": str(n),
                                                     "b": str(n)}),
             ("sum(A @ A @ A)", {"A": f"{n},{n}"}), ("logsumexp(x)", {"x": str(n)}),
             ("sum(diag(x))", {"x": str(n)}), ("sum(x*x)", {"x": str(n)}),
             ("trace(kron(A, A))", {"A": f"{n},{n}"}), ("dot(x, x)", {"x": str(n)})]
    expr, shapes = rng.choice(exprs)
    args = [expr]
    at = rng.random() < 0.3 and len(shapes) == 1 and "," not in next(iter(shapes.values()))
    for var, dims in shapes.items():
        if at:  # the values themselves (up to 2,400 numbers: the parser's token limit)
            count = min(int(dims), rng.choice([3, 100, 2400, 3000]))
            args += ["--at", f"{var}=[" + ",".join(str(rng.randint(1, 9))
                                                  for _ in range(count)) + "]"]
        else:
            args += ["--shape", f"{var}={dims}"]
    kind = rng.random()
    limits = []
    if rng.random() < 0.2:  # (lowered: raised limits allow any amount of work, by design)
        limits = [rng.choice(["--max-elements", "--max-terms"]),
                  str(rng.choice([1, 10, 1000, 3000]))]
    if kind < 0.55:
        extra = rng.choice([[], ["--order", "2"], ["--elements"], ["--json"], ["--latex"]])
        if "--order" in extra and rng.random() < 0.3:
            limits += ["--max-hessian", str(rng.choice([1, 100]))]
        return ["diff", *args, *extra, *limits]
    if kind < 0.85:
        return ["check", *args, "--grad", f"{next(iter(shapes))}=1", "--samples", "2",
                "--timeout", "3", *[a for a in limits if "hessian" not in a]]
    return ["draw", *args, "-o", "out.dot",
            *(limits if limits and limits[0] == "--max-elements" else [])]


def _sizes(rng: random.Random, scratch: pathlib.Path):
    args = size_command(rng)
    os.chdir(scratch)
    return (args, *run_one(args))


# -- names ----------------------------------------------------------------------------------
def name_command(rng: random.Random) -> list:
    name = rng.choice(HOSTILE_NAMES + ["x", "y"])
    var = rng.choice(["x", "x" * rng.choice([200, 5000, 9000]), "ε", "x_1" * 50])
    expr = rng.choice([f"sin({var})*y", f"{var}**2", f"tanh({var} + y)"])
    r = rng.random()
    if r < 0.35:
        return ["diff", expr, "--wrt", name, *rng.choice([[], ["--json"], ["--at", "y=2"]])]
    if r < 0.6:
        out = rng.choice([name + ".svg", name, "g.svg", "a" * 251 + ".svg",
                          "a" * 300 + ".dot", "nodir/" + name + ".dot", "-", ".svg"])
        return ["draw", expr, "-o", out, *rng.choice([[], ["--json"], ["--format", "dot"]])]
    if r < 0.8:
        return ["check", expr, "--grad", f"{name}=1", "--at", f"{name}=3"]
    return ["diff", expr, "--at", f"{var}={name}", "--shape", f"{name}=3"]


def _names(rng: random.Random, scratch: pathlib.Path):
    args = name_command(rng)
    os.chdir(scratch)
    return (args, *run_one(args))


# -- signals --------------------------------------------------------------------------------
SIGNAL_COMMANDS = [
    ["diff", "--simplify", "tanh(tanh(x*y)*tanh(y*z))*exp(sin(x*z))"],
    ["diff", "sum((A @ x - b)**2)", "--shape", "A=20,20", "--shape", "x=20", "--shape",
     "b=20"],
    ["check", "x**2*sin(x)", "--grad", "x=2*x*sin(x) + x**2*cos(x)"],
    ["draw", " + ".join(f"tanh(x{i})*y" for i in range(12)), "-o", "g.svg"],
]


def _session(sid: int) -> list:
    """The live processes of session ``sid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2:].split()
            if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
                found.append(int(entry))
    return found


def _catches(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGINT and SIGTERM (from /proc)."""
    try:
        text = pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(ln.split()[1] for ln in text.splitlines() if ln.startswith("SigCgt")), 16)
    return all(mask >> (s - 1) & 1 for s in (signal.SIGINT, signal.SIGTERM))


def _signal(rng: random.Random, scratch: pathlib.Path):
    args = rng.choice(SIGNAL_COMMANDS)
    sig = rng.choice([signal.SIGINT, signal.SIGTERM])
    delay = rng.uniform(0.0, 3.0)
    proc = subprocess.Popen([sys.executable, "-m", "symgrad_cli.main", *args], cwd=scratch,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    given = (args, sig.name, round(delay, 2))
    CURRENT["input"] = given
    try:
        # (from the moment symgrad's handlers are in place: before it, Python itself is
        # starting, and a signal ends it as the default action does -- or, for SIGINT,
        # with a KeyboardInterrupt in whatever it is importing)
        end = time.monotonic() + 60
        while proc.poll() is None and not _catches(proc.pid) and \
                time.monotonic() < end:
            time.sleep(0.005)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(sig)
        try:
            err = proc.communicate(timeout=60)[1].decode(errors="replace")
        except subprocess.TimeoutExpired:
            return given, False, "still running 60 s after the signal"
        end = time.monotonic() + 5
        while _session(proc.pid) and time.monotonic() < end:
            time.sleep(0.05)
        left = _session(proc.pid)
        code = proc.returncode
        ok = code in (0, 1, 2, 3, 128 + sig) and not left and "Traceback" not in err
        if code == 128 + sig:
            ok = ok and len(err.strip().splitlines()) == 1
        return given, ok, f"exit {code}, {len(left)} left: {err[-200:]!r}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


STRATEGIES = {"command": _command, "manifest": _file_strategy(_manifest),
              "npy": _file_strategy(_npy), "zip": _file_strategy(_zip), "toml": _toml,
              "sizes": _sizes, "names": _names, "signal": _signal}
#: How often each strategy is picked (a signal costs seconds of a real process).
WEIGHTS = {"command": 30, "manifest": 12, "npy": 12, "zip": 8, "toml": 10, "sizes": 12,
           "names": 12, "signal": 2}
