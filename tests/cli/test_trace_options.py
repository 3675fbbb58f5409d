"""``symgrad draw`` and ``symgrad trace`` have the same drawing options (one definition),
and a binary format is never written to a terminal (tried on a real pseudo-terminal)."""
from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from symgrad_cli.draw import draw
from symgrad_cli.main import cli
from symgrad_cli.trace import trace

SHARED = ("--format", "--steps", "--theme", "--rankdir", "--local", "--legend")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")

LESSON = textwrap.dedent("""
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = torch.randn(2, 4)
    loss = ((model(x) - torch.ones(2, 3)) ** 2).mean()
    loss.backward()
""")


def _options(command) -> dict:
    return {p.opts[0]: p for p in command.params if p.opts[0].startswith("--")}


def test_draw_and_trace_share_one_definition_of_the_drawing_options():
    d, t = _options(draw), _options(trace)
    for name in SHARED:
        assert name in d and name in t, name
        a, b = d[name], t[name]
        assert (a.opts, a.secondary_opts, a.default, a.help, a.name) == (
            b.opts, b.secondary_opts, b.default, b.help, b.name), name
        assert getattr(a.type, "choices", None) == getattr(b.type, "choices", None)
    assert d["--rankdir"].default == "auto"
    assert d["--local"].secondary_opts == ["--no-local"]
    assert d["--legend"].secondary_opts == ["--no-legend"]


@pytest.fixture
def lesson(tmp_path):
    path = tmp_path / "lesson.py"
    path.write_text(LESSON)
    return path


def _trace(*args):
    r = CliRunner().invoke(cli, ["trace", *map(str, args)])
    assert r.exit_code == 0, r.output
    return r


def test_trace_takes_theme_rankdir_local_and_legend(lesson, tmp_path):
    out = tmp_path / "a.dot"
    _trace(lesson, "--var", "loss", "-o", out, "--rankdir", "TB", "--theme", "dark",
           "--no-legend", "--no-local")
    src = out.read_text()
    assert "rankdir=TB" in src and "legend" not in src and "∂/∂" not in src
    from symgrad.drawing.themes import THEMES
    assert f'bgcolor="{THEMES["dark"].bg}"' in src
    _trace(lesson, "--var", "loss", "-o", out, "--rankdir", "lr")
    src = out.read_text()
    assert "rankdir=LR" in src and "legend" in src and "∂/∂" in src  # the defaults


def test_trace_auto_direction_puts_a_small_mlp_top_to_bottom(lesson, tmp_path):
    out = tmp_path / "a.dot"
    _trace(lesson, "--var", "loss", "-o", out)
    assert "rankdir=TB" in out.read_text()


@needs_dot
def test_trace_steps_writes_a_frame_per_backward_step(lesson, tmp_path):
    out, frames = tmp_path / "loss.svg", tmp_path / "frames"
    r = _trace(lesson, "--var", "loss", "-o", out, "--steps", frames, "--json")
    import json
    written = json.loads(r.output)["frames"]
    steps = sorted(p.name for p in frames.glob("step_*.svg"))
    assert len(steps) == len(written) - 1 >= 10  # every node runs once, plus step 0
    assert (frames / "steps.html").exists()


def test_trace_steps_of_several_tensors_is_one_clear_line(lesson, tmp_path):
    r = CliRunner().invoke(cli, ["trace", str(lesson), "--var", "loss", "--var", "x",
                                 "-o", str(tmp_path / "a.svg"), "--steps", "fr"])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "one --var" in r.output


def _run_on_terminal(args: list) -> tuple[int, bytes, bytes]:
    """Run ``python -m symgrad ARGS`` with its standard output on a pseudo-terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "symgrad", *args], stdout=slave,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the program ended
            break
        if not chunk:
            break
        seen += chunk
    err = proc.stderr.read()
    code = proc.wait(timeout=120)
    os.close(master)
    return code, seen, err


@pytest.mark.parametrize("fmt", ["png", "pdf"])
def test_binary_output_refuses_a_terminal(fmt):
    code, seen, err = _run_on_terminal(["draw", "x*y", "--at", "x=1", "--at", "y=2",
                                        "-o", "-", "--format", fmt])
    assert code == 2
    assert seen == b""  # not one byte of the image reached the terminal
    text = err.decode()
    assert text.count("\n") == 1
    assert (f"refusing to write {fmt.upper()} to a terminal; redirect to a file or use "
            "-o FILE") in text


def test_trace_binary_output_refuses_a_terminal(lesson):
    code, seen, err = _run_on_terminal(["trace", str(lesson), "-o", "-", "--format", "png"])
    assert code == 2 and seen == b"" and b"refusing to write PNG" in err


def test_text_output_still_goes_to_a_terminal():
    code, seen, err = _run_on_terminal(["draw", "x*y", "-o", "-", "--format", "dot"])
    assert code == 0 and b"digraph" in seen, err


@needs_dot
def test_binary_output_through_a_pipe_is_written():
    proc = subprocess.run([sys.executable, "-m", "symgrad", "draw", "x*y", "--at", "x=1",
                           "--at", "y=2", "-o", "-", "--format", "png"],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout[:8] == b"\x89PNG\r\n\x1a\n"
