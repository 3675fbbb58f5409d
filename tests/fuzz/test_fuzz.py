"""A fixed sample of the fuzzer (tests/fuzz/fuzzing.py): random and hostile command lines,
crafted files for ``symgrad.load`` and ``check --batch``, sizes past the limits, hostile
names and a signal end as the contract says, and nothing typed is executed."""
from __future__ import annotations

import io
import json
import os
import random
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import symgrad
import symgrad.errors
from click.testing import CliRunner
from fuzzing import (HOSTILE, _kron_chain, _npy_header, _only_data, fuzz, judge,
                     judge_load, run_one, size_command)
from symgrad_cli.main import cli


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_expressions(text, tmp_path):
    os.chdir(tmp_path)
    for args in (["diff", text], ["check", text, "--grad", "x=1", "--samples", "3"],
                 ["draw", text, "-o", "g.dot"]):
        ok, what = run_one(args)
        assert ok, (args, what)
    assert not os.path.exists("/tmp/pwned")


@pytest.mark.parametrize("seed", range(4))
def test_random_command_lines(seed, tmp_path):
    os.chdir(tmp_path)
    count, failures = fuzz(seed, n=25, strategies=("command",))
    assert count == 25
    assert failures == [], failures[:3]


# (a sample of each strategy: cheap ones many times, the others a few)
@pytest.mark.parametrize("strategy,n", [("manifest", 40), ("npy", 40), ("zip", 30),
                                        ("toml", 6), ("names", 15), ("signal", 1)])
def test_each_strategy(strategy, n, tmp_path):
    os.chdir(tmp_path)
    count, failures = fuzz(7, n=n, strategies=(strategy,))
    assert count == n
    assert failures == [], failures[:3]


def test_sizes_past_the_limits_are_one_line(tmp_path):
    """The sizes strategy's inputs past a limit (the quick ones): exit 2, one line."""
    os.chdir(tmp_path)
    rng = random.Random(5)
    past = [["diff", _kron_chain(12), "--shape", "A=2,2"],
            ["draw", _kron_chain(3), "--shape", "A=100,100", "-o", "g.dot"],
            ["check", "det(A)", "--grad", "A=1", "--shape", "A=48,48"]]
    past += [a for a in (size_command(rng) for _ in range(300))
             if not any(x.startswith("--max") for x in a) and any(
                 x.endswith(("=100,100", "=1000,1000", "=101,101", "=1000", "=101"))
                 for x in a)][:6]
    assert len(past) == 9
    for args in past:
        ok, what = run_one(args)
        assert ok and "exit 2" in what, (args, what)


def test_the_oracles_see_a_failure():
    """The judges catch what they look for: a raw escape, a traceback, an internal
    error, a refusal of several lines, a load that builds something other than data."""
    assert judge(0, None, "∂f/∂x = 2*x\n")[0]
    assert judge(2, None, "symgrad: error: --wrt \\x1b: not a variable\n")[0]
    assert not judge(2, None, "symgrad: error: --wrt \x1b]0;t\x07: not a variable\n")[0]
    assert not judge(0, None, "name \u202eevil\n")[0]
    assert not judge(70, None, "symgrad: internal error: MemoryError\n")[0]
    assert not judge(2, None, "symgrad: error: a\nb\nc\nd\n")[0]
    assert not judge(1, ValueError("x"), "")[0]
    buf = io.BytesIO()
    symgrad.save({"w": symgrad.ones(2), "n": [1, "a", None]}, buf)
    assert judge_load(buf.getvalue()) == (True, "loaded dict")
    ok, what = judge_load(b"not a zip")
    assert ok and what.startswith("LoadError: ")
    assert _only_data({"a": [symgrad.ones(1), (2.0, None)]})
    assert not _only_data({"a": [os]}) and not _only_data([{symgrad.ones: 1}])
    header = _npy_header("<f4", (3,))
    assert header.startswith(b"\x93NUMPY\x01\x00") and len(header) % 64 == 0
    assert np.lib.format.read_array(io.BytesIO(header + bytes(12))).shape == (3,)


def _patched(raw: bytes, local: int, central: int, value: int) -> bytes:
    """``raw`` (a zip) with a 2-byte field of every local header (at offset ``local``)
    and central directory entry (at ``central``) set to ``value``."""
    b = bytearray(raw)
    for signature, at in ((b"PK\x03\x04", local), (b"PK\x01\x02", central)):
        i = b.find(signature)
        while i != -1:
            b[i + at:i + at + 2] = struct.pack("<H", value)
            i = b.find(signature, i + 4)
    return bytes(b)


@pytest.mark.parametrize("field,local,central,value", [
    ("compression method 99", 8, 10, 99),     # (was NotImplementedError)
    ("flag bit 5, patched data", 6, 8, 0x20),  # (was NotImplementedError)
    ("encrypted", 6, 8, 0x1),                  # (was RuntimeError)
    ("zip version 20.7", 4, 6, 207),           # (was NotImplementedError)
])
def test_load_found_by_the_fuzzer(field, local, central, value):
    buf = io.BytesIO()
    symgrad.save({"w": symgrad.ones(3)}, buf)
    with pytest.raises(symgrad.errors.LoadError, match="damaged|not a valid|not written by"):
        symgrad.load(io.BytesIO(_patched(buf.getvalue(), local, central, value)))


def test_a_huge_npy_shape_is_one_short_line():
    """(found by the fuzzer: the refusal repeated the 4,000-digit size)"""
    buf = io.BytesIO()
    symgrad.save(symgrad.ones(3), buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["0.npy"] = _npy_header("<f4", (10 ** 4000,)) + bytes(12)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(symgrad.errors.LoadError) as err:
        symgrad.load(io.BytesIO(out.getvalue()))
    assert "about 10^4000 bytes" in str(err.value) and len(str(err.value)) < 300


def test_a_name_that_is_not_utf8_is_escaped_in_json(tmp_path):
    """A byte of argv that is not UTF-8 (Python's "\\udcff") came out raw: the JSON was
    not UTF-8 (found by the fuzzer's names)."""
    os.chdir(tmp_path)
    ok, what = run_one(["draw", "tanh(x + y)", "-o", "\udcff.dot", "--json"])
    assert ok, what
    result = CliRunner().invoke(cli, ["draw", "tanh(x + y)", "-o", "\udcff.dot", "--json"])
    assert json.loads(result.output)["output"] == "\udcff.dot"
    assert "\\udcff" in result.output and os.path.exists("\udcff.dot")


def _main_with(tmp_path, source: str, imports: str = "os, signal"):
    """``symgrad_cli.main.main([])`` in a fresh interpreter (in ``tmp_path``) whose command
    is the ``run(args, prog_name)`` that ``source`` defines after ``import <imports>,
    symgrad_cli.main as m``."""
    code = f"import {imports}, symgrad_cli.main as m\n{source}m._run = run\nm.main([])\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)


def test_a_signal_that_python_wraps_is_still_a_signal(tmp_path):
    """SIGTERM while a module defined a dataclass reached main as "RuntimeError: Error
    calling __set_name__" (exit 70; found by the fuzzer's signals): exit 143, one line."""
    r = _main_with(tmp_path, (
        "class Field:\n"
        "    def __set_name__(self, owner, name):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "def run(args, prog_name):\n"
        "    class Estimate:\n"
        "        shapes = Field()\n"
    ))
    assert r.returncode == 143, r.stderr
    assert r.stderr == "symgrad: terminated (SIGTERM)\n"


def test_a_signal_whose_cleanup_failed_is_still_a_signal(tmp_path):
    """SIGINT inside importlib's module lock left it to fail with a KeyError of its own
    (exit 70, "internal error: KeyError: 1397..."; found under load): the KeyError came
    from the signal, so the command ends as interrupted, exit 130, one line."""
    r = _main_with(tmp_path, (
        "def run(args, prog_name):\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        for _ in range(1000): pass\n"
        "    finally:\n"
        "        {}[139740114713472]\n"
    ))
    assert (r.returncode, r.stderr) == (130, "symgrad: interrupted (SIGINT)\n")


@pytest.mark.parametrize("then", ["draw", "return"])
def test_a_signal_a_library_swallowed_still_ends_the_command(tmp_path, then):
    """SIGINT while numpy.random's Cython module set itself up was swallowed there (no
    line, nothing printed): the command went on, wrote its drawing and ended with exit 0
    (found by a sweep of signal moments under load; CI failed on it).  Now the signal is
    raised again before outputs are committed (none written) or when the command is done:
    exit 130, one line."""
    r = _main_with(tmp_path, (
        "from symgrad_cli.main import cli\n"
        "def run(args, prog_name):\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        for _ in range(1000): pass\n"
        "    except BaseException:\n"
        "        pass  # (as a library that swallows everything)\n"
        f"    if {then == 'draw'!r}:\n"
        "        cli.main(['draw', 'sin(x)', '-o', 'g.svg'], standalone_mode=False)\n"
        "    print('done')\n"
        "    return 0\n"
    ))
    assert (r.returncode, r.stderr) == (130, "symgrad: interrupted (SIGINT)\n")
    assert list(tmp_path.iterdir()) == []  # (no drawing, no temporary file)


@pytest.mark.parametrize("where", ["__del__", "weakref callback"])
def test_a_signal_python_cannot_raise_is_delivered_again(tmp_path, where):
    """SIGINT while importlib ran a weakref callback was printed as "Exception ignored" and
    lost: the command went on (found by the signal tests under load).  Now it ends the
    command as any other: exit 130, one line, nothing after it runs."""
    r = _main_with(tmp_path, (
        "class Thing:\n"
        "    pass\n"
        "def hit(*_):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    for _ in range(1000): pass  # (the handler runs here)\n"
        f"if {where == '__del__'}: Thing.__del__ = hit\n"
        "def run(args, prog_name):\n"
        "    t = Thing()\n"
        "    keep = weakref.ref(t, hit)\n"
        "    del t\n"
        "    gc.collect()\n"
        "    print('went on')\n"
        "    return 0\n"
    ), imports="gc, os, signal, weakref")
    assert (r.returncode, r.stdout, r.stderr) == (130, "", "symgrad: interrupted (SIGINT)\n")


def test_an_output_name_with_nul_is_one_line(tmp_path):
    """(found by the fuzzer's names: ValueError "embedded null byte" from os)"""
    os.chdir(tmp_path)
    for name in ("\x00", "a\x00.svg"):
        ok, what = run_one(["draw", "sin(x)*y", "-o", name])
        assert ok and "exit 2" in what and "NUL" in what, what
