"""``symgrad check --batch`` over a class's answers (issue 21, item 5): the readers (JSON
Lines, CSV, JSON), the summary of mistakes, Gradescope's and PrairieLearn's results.json
checked structurally, streamed JSON Lines, the per-answer time limit, and hostile files
(one line naming file and line, nothing written).  The checks run once (a module fixture
and two command runs); everything else reuses them."""
from __future__ import annotations

import json
import pathlib
import shlex

import pytest
from click.testing import CliRunner

from symgrad._util import children
from symgrad.checking import batch
from symgrad_cli.main import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
ANSWERS = [  # two students, one mistake made twice (checked once: the cache)
    {"student": "ada", "problem": "1a", "expr": "x**2*sin(x)",
     "grad": {"x": "2*x*sin(x) + x**2*cos(x)"}, "points": 2},
    {"student": "ada", "problem": "1b", "expr": "sin(x**2)", "grad": {"x": "cos(x**2)"}},
    {"student": "bob", "problem": "1b", "expr": "sin(x**2)", "grad": {"x": "cos(x**2)"}},
    {"student": "bob", "problem": "1c", "expr": "exp(-x)", "grad": {"x": "exp(-x)"},
     "at": {"x": 0.5}},
]


def write_jsonl(path: pathlib.Path, records) -> pathlib.Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    path = write_jsonl(tmp_path_factory.mktemp("b") / "a.jsonl", ANSWERS)
    results = list(batch.check_answers(batch.read_answers(str(path)), samples=4,
                                       timeout=5.0, time_limit=None))
    summary = batch.Summary()
    for r in results:
        summary.add(r)
    return results, summary


def invoke(*args):
    r = CliRunner().invoke(cli, ["check", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def test_verdicts_scores_and_summary_counts(checked):
    results, summary = checked
    assert [r["verdict"] for r in results] == ["correct", "wrong", "wrong", "wrong"]
    assert [r["score"] for r in results] == [2.0, 0.0, 0.0, 0.0]
    assert [(r["line"], r["student"], r["problem"]) for r in results] == [
        (1, "ada", "1a"), (2, "ada", "1b"), (3, "bob", "1b"), (4, "bob", "1c")]
    d = summary.as_dict()
    assert (d["answers"], d["correct"], d["wrong"], d["undecided"], d["error"]) == \
        (4, 1, 3, 0, 0)
    assert (d["score"], d["max_score"]) == (2.0, 5.0)
    mistakes = summary.mistakes()
    assert mistakes[0] == ("1b", "x: missing factor 2*x", 2)  # one line a variable
    assert len(mistakes) == 2 and mistakes[1][0] == "1c" and "sign" in mistakes[1][1]
    assert "  1b: x: missing factor 2*x: 2 answers" in summary.lines()


def test_gradescope_results_structure(checked):
    results, summary = checked
    doc = json.loads(json.dumps(batch.gradescope_results(results, summary)))
    assert isinstance(doc["score"], float) and doc["score"] == 2.0
    assert doc["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
    assert len(doc["tests"]) == 4
    for t in doc["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output", "visibility", "status"}
        assert isinstance(t["name"], str) and isinstance(t["output"], str)
        assert 0 <= t["score"] <= t["max_score"]
        assert t["status"] in ("passed", "failed")
    assert sum(t["score"] for t in doc["tests"]) == doc["score"]
    assert "missing factor 2*x" in doc["tests"][1]["output"]


def test_prairielearn_results_structure(checked):
    results, summary = checked
    doc = json.loads(json.dumps(batch.prairielearn_results(results, summary)))
    assert doc["gradable"] is True
    assert 0.0 <= doc["score"] <= 1.0 and doc["score"] == pytest.approx(2 / 5)
    assert isinstance(doc["message"], str) and "1 correct, 3 wrong" in doc["message"]
    for t in doc["tests"]:
        assert set(t) >= {"name", "points", "max_points", "message", "output"}
        assert 0 <= t["points"] <= t["max_points"]


def test_csv_and_json_read_as_jsonl(tmp_path):
    jsonl = write_jsonl(tmp_path / "a.jsonl", ANSWERS)
    (tmp_path / "a.json").write_text(json.dumps({"answers": ANSWERS}))
    rows = ["student,problem,expr,grad.x,at.x,points"] + [
        ",".join([a["student"], a["problem"], a["expr"], a["grad"]["x"],
                  str(a.get("at", {}).get("x", "")), str(a.get("points", 1))])
        for a in ANSWERS]
    (tmp_path / "a.csv").write_text("\n".join(rows) + "\n")
    want = [a[1:] for a in batch.read_answers(str(jsonl))]
    for name in ("a.csv", "a.json"):
        assert [a[1:] for a in batch.read_answers(str(tmp_path / name))] == want


def test_cli_jsonl_streams_and_gradescope_file(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", ANSWERS[1:3] + [dict(ANSWERS[1],
                                                                  problem="\x1b]0;x\x07")])
    r = invoke("--batch", str(path), "--format", "jsonl", "--samples", "2")
    assert r.exit_code == 1
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(lines) == 4 and all(x["verdict"] == "wrong" for x in lines[:3])
    assert lines[-1]["summary"]["mistakes"][0]["answers"] == 2  # (per problem name)
    assert "\x1b" not in r.stdout and "\\u001b" in r.stdout
    text = invoke("--batch", str(path), "--samples", "2").stdout
    assert "\x1b]" not in text and "\\x1b]0;x\\x07" in text
    out = tmp_path / "results.json"
    r = invoke("--batch", str(write_jsonl(tmp_path / "one.jsonl", ANSWERS[:2])),
               "--format", "gradescope", "--output", str(out), "--samples", "2")
    assert r.exit_code == 1 and r.stdout == ""
    doc = json.loads(out.read_text())
    assert doc["score"] == 2.0 and [t["status"] for t in doc["tests"]] == \
        ["passed", "failed"]


def test_grader_formats_need_one_student(tmp_path):
    out = tmp_path / "results.json"
    r = invoke("--batch", str(write_jsonl(tmp_path / "a.jsonl", ANSWERS)), "--format",
               "prairielearn", "--output", str(out))
    assert r.exit_code == 2 and "several students" in r.stderr and not out.exists()


def _spin(*args):
    while True:
        pass


def test_time_limit_kills_a_slow_answer(monkeypatch):
    monkeypatch.setattr(batch, "_outcome", _spin)  # (the child inherits it: fork)
    a = batch.Answer(1, "p", None, "x**2", {"x": "2*x"}, {}, 1.0)
    out = batch.check_one(a, time_limit=0.5)
    assert out["verdict"] == "undecided" and "time limit of 0.5 s" in out["message"]


HOSTILE = {
    "junk.jsonl": (b"\x00\xff\xfe\x80garbage\n", "line 1: not UTF-8"),
    "huge.jsonl": (b'{"expr": "x", "grad": {"x": "1"}}\n"' + b"a" * (batch.MAX_LINE + 10)
                   + b'"\n', "line 2: longer than"),
    "deep.jsonl": (b"\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 2: JSON nested"),
    "deep.json": (b"[" * 100_000 + b"]" * 100_000, "nested 100000 deep"),
    "bad.jsonl": (b'{"expr": "x**2", "grad": {"x": "2*x"}}\n{"expr": \n',
                  "line 2: not valid"),
    "types.jsonl": (b'{"expr": "x**2", "grad": 3}\n', "line 1: grad must be an object"),
    "keys.jsonl": (b'{"expr": "x**2", "grad": {"x": "2*x"}, "evil": 1}\n',
                   "line 1: unknown key 'evil'"),
    "bad.csv": (b"expr,grad.x\nx**2,2*x,extra\n", "line 2: 3 cells"),
    "nohead.csv": (b"a,b\n", "line 1: a header with expr"),
    "junk.csv": (b"expr,grad.x\n\xff\xfe,1\n", "line 2: not UTF-8"),
    "bad.json": (b'[{"expr": "x"},\n oops]', "line 2: not valid JSON"),
    "empty.jsonl": (b"\n\n", "no answers"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_one_line(tmp_path, name):
    data, words = HOSTILE[name]
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "results.json"
    out.write_text("before")
    r = invoke("--batch", str(path), "--format", "gradescope", "--output", str(out))
    assert r.exit_code == 2, r.output
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output
    assert str(path) in r.stderr and words in r.stderr, r.stderr
    assert out.read_text() == "before"  # whole or not at all
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".sg")] == []


def test_readme_examples_run(tmp_path):
    """Each ``symgrad check --batch examples/answers...`` command of the README."""
    readme = (ROOT / "README.md").read_text()
    commands = [line.strip().lstrip("$ ") for line in readme.splitlines()
                if line.strip().lstrip("$ ").startswith("symgrad check --batch examples/ans")]
    assert {c.split()[3] for c in commands} >= {"examples/answers.jsonl",
                                                "examples/answers.csv"}
    formats = set()
    for command in commands:
        args = [a.replace("results.json", str(tmp_path / "results.json"))
                for a in shlex.split(command)[2:]]
        args = [str(ROOT / a) if a.startswith("examples/") else a for a in args]
        r = invoke(*args)
        assert r.exit_code in (0, 1), r.output
        fmt = args[args.index("--format") + 1] if "--format" in args else "text"
        formats.add(fmt)
        if "--output" in args:
            doc = json.loads((tmp_path / "results.json").read_text())
            assert doc["tests"] and ("gradable" in doc or "score" in doc)
        elif fmt == "text":
            assert "5 answers: 2 correct, 3 wrong" in r.stdout  # (as the README says)
            assert "1b chain rule: x: missing factor 2*x: 2 answers" in r.stdout
    assert formats >= {"text", "gradescope", "prairielearn", "jsonl"}


def test_reading_is_lazy_and_the_cache_bounded(tmp_path, monkeypatch):
    """Constant memory: answers are read one at a time (the first comes before a bad
    second line is seen), and identical answers are reused from a bounded cache."""
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(ANSWERS[0]) + "\n{oops\n")
    answers = batch.read_answers(str(path))
    assert next(answers).problem == "1a"
    with pytest.raises(batch.BatchFileError, match="line 2"):
        next(answers)
    calls = []

    def outcome(answer, samples, timeout):
        calls.append(answer.problem)
        return {"verdict": "correct", "diagnosis": [], "message": "", "report": None}

    monkeypatch.setattr(batch, "_outcome", outcome)
    monkeypatch.setattr(batch, "CACHE_SIZE", 2)
    a, b, c = (batch.Answer(k, name, None, f"x**{k}", {"x": "1"}, {}, 1.0)
               for k, name in enumerate("abc", 2))
    results = list(batch.check_answers([a, a, b, c, a], time_limit=None))
    assert calls == ["a", "b", "c", "a"] and len(results) == 5


def test_jobs_give_the_same_results_in_order(checked, tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", ANSWERS + ANSWERS[:2])
    results = list(batch.check_answers(batch.read_answers(str(path)), samples=4,
                                       timeout=5.0, time_limit=20.0, jobs=2))
    want = [(r["line"], r["verdict"], r["diagnosis"]) for r in checked[0]]
    assert [(r["line"], r["verdict"], r["diagnosis"]) for r in results] == \
        want + [(5, *want[0][1:]), (6, *want[1][1:])]


def test_jobs_stop_every_child_when_the_batch_stops_early(monkeypatch):
    monkeypatch.setattr(batch, "_outcome", _spin)
    answers = [batch.Answer(k, "p", None, f"x**{k}", {"x": "1"}, {}, 1.0)
               for k in range(2, 6)]
    results = batch.check_answers(answers, time_limit=0.5, jobs=3)
    first = next(results)
    assert first["verdict"] == "undecided" and "time limit" in first["message"]
    results.close()  # (the two still running are killed and reaped)
    assert children() == []
