"""Issue 21: ``check --batch --time-limit`` bounds each answer by its check's own CPU
time, not by wall time, so a class's results do not depend on the machine's load:
waiting for a core costs nothing, work past the limit ends the answer's process
(``undecided``, the message says "of CPU time"), and a far longer wall time
(:func:`symgrad.checking.batch.wall_limit`) is only a safety net.

Bounded work, no timed assertions: the CPU time of the finished children is read from
``getrusage(RUSAGE_CHILDREN)``."""
from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from symgrad._util import children
from symgrad.checking import batch
from symgrad_cli.main import cli

resource = pytest.importorskip("resource")
REAL = batch._outcome
SQUARE = batch.Answer(1, "p", None, "x**2", {"x": "2*x"}, {}, 1.0)


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def _spin(*args):
    while True:
        pass


def _nap_then_check(answer, samples, timeout):
    time.sleep(1.0)  # (no CPU for a second, as on a loaded machine)
    return REAL(answer, samples, timeout)


def _asleep(*args):
    time.sleep(60)


def test_work_past_the_limit_ends_the_answer(monkeypatch):
    monkeypatch.setattr(batch, "_outcome", _spin)  # (the child inherits it: fork)
    before = _children_cpu()
    out = batch.check_one(SQUARE, time_limit=0.5)
    used = _children_cpu() - before
    assert out["verdict"] == "undecided", out
    assert out["message"] == "undecided: not settled within the time limit of 0.5 s of " \
        "CPU time"
    assert 0.4 <= used <= 0.5 + 0.5, used  # (the answer's own CPU time: bounded work)
    assert children() == []


def test_waiting_for_a_core_is_not_work(monkeypatch):
    # (under the old wall-clock limit, 0.5 s, this answer was "undecided")
    monkeypatch.setattr(batch, "_outcome", _nap_then_check)
    out = batch.check_one(SQUARE, samples=2, timeout=2.0, time_limit=0.5)
    assert out["verdict"] == "correct", out["message"]


def test_the_wall_clock_safety_net_still_holds(monkeypatch):
    assert batch.wall_limit(10) == 200 and batch.wall_limit(0.1) == 10
    monkeypatch.setattr(batch, "_outcome", _asleep)
    monkeypatch.setattr(batch, "wall_limit", lambda limit: 0.3)
    out = batch.check_one(SQUARE, time_limit=5)
    assert out["verdict"] == "undecided"
    assert out["message"] == "undecided: not settled within 0.3 s of wall time (a busy " \
        "machine; the time limit is 5 s of CPU time)"
    assert children() == []


def test_the_command_line_limit_is_cpu_time(monkeypatch, tmp_path):
    monkeypatch.setattr(batch, "_outcome", _spin)
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"expr": "x**2", "grad": {"x": "2*x"}}) + "\n")
    before = _children_cpu()
    r = CliRunner().invoke(cli, ["check", "--batch", str(path), "--time-limit", "0.5",
                                 "--json"])
    used = _children_cpu() - before
    assert "not settled within the time limit of 0.5 s of CPU time" in r.output, r.output
    assert used <= 0.5 + 0.5, used
    assert children() == []
