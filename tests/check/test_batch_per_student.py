"""``symgrad check --batch --output-dir``: one grader results.json per student (Gradescope
grades one submission a file; a course exporting a whole class needs one each), and the
class's summary beside them.  Student names are data: no name leaves the directory or
meets another's.  One command run; every assertion reads its files."""
from __future__ import annotations

import json
import pathlib

import pytest
from click.testing import CliRunner

from symgrad.checking.batch import student_directory
from symgrad_cli.main import cli

ANSWERS = [
    {"student": "ada@uni.edu", "problem": "1", "expr": "sin(x**2)",
     "grad": {"x": "2*x*cos(x**2)"}, "points": 2},
    {"student": "ada@uni.edu", "problem": "2", "expr": "x*log(x)", "grad": {"x": "1/x"}},
    {"student": "../evil", "problem": "1", "expr": "sin(x**2)", "grad": {"x": "cos(x**2)"},
     "points": 2},
    {"student": "Bo Li", "problem": "2", "expr": "x*log(x)", "grad": {"x": "log(x) + 1"}},
    {"student": "_summary.json", "problem": "2", "expr": "x*log(x)",
     "grad": {"x": "log(x)"}},
]


def run(tmp_path, fmt, *extra, answers=ANSWERS):
    src = tmp_path / "class.jsonl"
    src.write_text("".join(json.dumps(a) + "\n" for a in answers))
    out = tmp_path / "graded"
    r = CliRunner().invoke(cli, ["check", "--batch", str(src), "--format", fmt,
                                 "--output-dir", str(out), "--samples", "2", "--timeout",
                                 "5", *extra])
    return r, out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return run(tmp_path_factory.mktemp("g"), "gradescope")


def test_one_gradescope_results_json_per_student(graded):
    r, out = graded
    assert r.exit_code == 1, r.output  # (some answers are wrong)
    dirs = sorted(p.name for p in out.iterdir())
    assert dirs == sorted(["ada@uni.edu", "%2E.%2Fevil", "Bo%20Li", "%5Fsummary.json",
                           "_summary.json"])
    assert not (out.parent / "evil").exists()
    ada = json.loads((out / "ada@uni.edu" / "results.json").read_text())
    assert ada["score"] == 2.0
    assert [(t["name"], t["status"], t["max_score"]) for t in ada["tests"]] == [
        ("1", "passed", 2.0), ("2", "failed", 1.0)]
    assert "the product rule" in ada["tests"][1]["output"]
    evil = json.loads((out / "%2E.%2Fevil" / "results.json").read_text())
    assert evil["score"] == 0.0 and "missing factor 2*x" in evil["tests"][0]["output"]
    bo = json.loads((out / "Bo%20Li" / "results.json").read_text())
    assert bo["score"] == 1.0 and bo["tests"][0]["status"] == "passed"


def test_the_class_summary_counts_every_student(graded):
    _, out = graded
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["students"] == 4
    assert (summary["answers"], summary["correct"], summary["wrong"]) == (5, 2, 3)
    assert summary["score"] == 3.0 and summary["max_score"] == 7.0
    assert {m["problem"] for m in summary["mistakes"]} == {"1", "2"}


def test_prairielearn_per_student(tmp_path):
    r, out = run(tmp_path, "prairielearn", answers=ANSWERS[:2])
    assert r.exit_code == 1, r.output
    res = json.loads((out / "ada@uni.edu" / "results.json").read_text())
    assert res["gradable"] is True and res["score"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("args, words", [
    (["--format", "json"], "--output-dir goes with --batch FILE and --format gradescope"),
    (["--format", "gradescope", "--output", "x.json"], "and not with --output"),
])
def test_output_dir_with_the_wrong_options_is_one_line(tmp_path, args, words):
    src = tmp_path / "a.jsonl"
    src.write_text(json.dumps(ANSWERS[0]) + "\n")
    r = CliRunner().invoke(cli, ["check", "--batch", str(src), "--output-dir",
                                 str(tmp_path / "o"), *args])
    assert r.exit_code == 2 and words in r.output, r.output
    assert "Traceback" not in r.output and not (tmp_path / "o").exists()


def test_an_answer_without_a_student_is_refused_before_any_check(tmp_path):
    r, out = run(tmp_path, "gradescope", answers=[ANSWERS[0], {
        "problem": "3", "expr": "x**2", "grad": {"x": "2*x"}}])
    assert r.exit_code == 2 and "line 2: no student" in r.output, r.output
    assert not out.exists()


@pytest.mark.parametrize("name, folder", [
    ("ada", "ada"), ("..", "%2E."), (".", "%2E"), ("a/b", "a%2Fb"), ("", "%00"),
    ("x\x00y", "x%00y"), ("élève", "%C3%A9l%C3%A8ve"), (7, "7"),
])
def test_student_directory_names(name, folder):
    assert student_directory(name) == folder
