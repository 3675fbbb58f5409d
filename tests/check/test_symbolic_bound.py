"""Issue 21: the symbolic step is bounded by its worker's own CPU time, not by wall time,
so a check's result does not depend on the machine's load: waiting for a core costs
nothing, work past the bound ends the worker (a profiling timer between Python steps,
RLIMIT_CPU inside a long C call), and a far longer wall time is only a safety net.

Bounded work, no timed assertions: the CPU time of the finished workers is read from
``getrusage(RUSAGE_CHILDREN)`` (work done, whatever the load)."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import symgrad
from symgrad._util import children, run_with_timeout
from symgrad.checking import decision
from symgrad_cli.main import cli

resource = pytest.importorskip("resource")


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def _own_children() -> list:
    """Processes whose parent is this one (from /proc; [] where there is none)."""
    me, out = str(os.getpid()), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            out.append(stat.parent.name)
    return out


def _spin():
    n = 0
    while True:
        n += 1


def _nap(seconds):
    time.sleep(seconds)
    return "done"


def test_python_work_past_the_bound_ends_the_worker():
    before = _children_cpu()
    assert run_with_timeout(_spin, (), 60, cpu=0.3) == ("timeout", "cpu")
    used = _children_cpu() - before
    assert 0.25 <= used <= 0.3 + 0.5, used
    assert children() == [] and _own_children() == []


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_CPU as Linux enforces it")
def test_a_long_c_call_is_ended_by_the_kernel():
    # (sum over a range runs in C: no Python signal handler runs until it returns)
    before = _children_cpu()
    assert run_with_timeout(sum, (range(10 ** 13),), 60, cpu=0.1) == ("timeout", "cpu")
    assert _children_cpu() - before <= 2.5  # (RLIMIT_CPU: 1 s, then SIGKILL at 2 s)
    assert children() == [] and _own_children() == []


def test_waiting_is_not_work():
    # a worker that gets no CPU for a while (a busy machine: here, asleep) is not ended
    assert run_with_timeout(_nap, (0.6,), 60, cpu=0.1) == ("ok", "done")
    # the wall-clock safety net still holds
    assert run_with_timeout(_nap, (30,), 0.3, cpu=10) == ("timeout", None)
    assert children() == []


def _tanh_chain(depth: int) -> tuple[str, str]:
    """``tanh(x + tanh(x + ... tanh(x)))`` and its derivative with every sech² written
    in exponentials: right, but costly to prove."""
    f, g, prev = "tanh(x)", "1 - tanh(x)**2", "tanh(x)"
    for _ in range(depth - 1):
        arg = f"x + {prev}"
        f = prev = f"tanh({arg})"
        g = f"4/(exp({arg}) + exp(-({arg})))**2*(1 + {g})"
    return f, g


def test_an_expensive_claim_ends_undecided_at_its_bound():
    f, g = _tanh_chain(4)
    before = _children_cpu()
    out = CliRunner().invoke(cli, ["check", f, "--grad", f"x={g}", "--samples", "2",
                                   "--timeout", "0.2"])
    used = _children_cpu() - before
    assert out.exit_code == 3, out.output
    assert out.output.startswith("undecided: gradient of tanh(x + tanh(")
    assert "  note: symbolic simplification reached its bound (0.4 s of CPU time)\n" in \
        out.output
    assert "symbolic: timeout" in out.output
    assert used <= 0.4 + 0.5, used  # (the worker's CPU time: bounded work)
    assert children() == [] and _own_children() == []


def test_a_busy_machine_gives_the_verdict_an_idle_one_gives(monkeypatch):
    job = decision.symbolic_job

    def slow_start(*args):  # (no CPU for a second, as on a loaded machine)
        time.sleep(1.0)
        return job(*args)
    monkeypatch.setattr(decision, "symbolic_job", slow_start)
    # (under the old wall-time kill, 3 x 0.3 s, this was "undecided")
    r = symgrad.check("x**2*sin(x)", {"x": "x*(2*sin(x) + x*cos(x))"}, samples=2,
                      timeout=0.3)
    assert r.verdict == "correct", r.text()
