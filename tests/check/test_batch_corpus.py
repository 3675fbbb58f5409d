"""More of the checker's corpus (issue 21, "Done when"), run as a class's batch: one JSON
Lines file of answers, each kind of diagnosis of item 4 a few times and right answers
beside them, checked once through ``check --batch``'s engine; each answer's verdict and
diagnosis words asserted, and the summary's count of each mistake.  The symbolic budget
is 5 s (CPU time) so that a busy machine gives an idle one's verdicts."""
from __future__ import annotations

import json

import pytest

from symgrad.checking import batch

#: (problem, expression, claimed gradients, point or None, verdict, words in the
#: diagnosis or None)
CORPUS = [
    ("sign", "cos(3*x)", {"x": "3*sin(3*x)"}, None, "wrong",
     "wrong sign: the claimed gradient is the negative"),
    ("sign of a term", "x**2 - sin(x)", {"x": "2*x + cos(x)"}, None, "wrong",
     "wrong sign of the term -cos(x)"),
    ("missing term", "exp(x) + x**3", {"x": "exp(x)"}, None, "wrong",
     "missing term 3*x**2"),
    ("extra term", "x*log(x)", {"x": "log(x) + 1 + x"}, None, "wrong", "extra term x"),
    ("chain rule", "exp(sin(x))", {"x": "exp(sin(x))"}, None, "wrong",
     "cos(x) is the derivative of the inner sin(x)"),
    ("chain rule", "log(x**2 + 1)", {"x": "1/(x**2 + 1)"}, None, "wrong",
     "missing factor 2*x"),
    ("chain rule", "tanh(3*x)", {"x": "1 - tanh(3*x)**2"}, None, "wrong",
     "missing factor 3"),
    ("chain rule", "sin(2*x)", {"x": "cos(2*x)"}, None, "wrong", "missing factor 2"),
    ("transpose", "y.T @ A @ x", {"A": "outer(x, y)"}, None, "wrong",
     "transposed: the claimed gradient is the transpose"),
    ("symmetrise", "x.T @ A @ x", {"x": "2*A@x"}, None, "wrong",
     "right only when A is symmetric"),
    ("variable", "x*y**2", {"x": "2*x*y"}, None, "wrong",
     "wrong variable: this is the derivative with respect to y, not x"),
    ("size", "mean(exp(x))", {"x": "exp(x)"}, {"x": [0.5, 1.0, 2.0]}, "wrong",
     "missing factor 1/numel(x)"),
    ("branch", "abs(x)**3", {"x": "3*x**2"}, None, "wrong",
     "right for x > 0, wrong for x < 0"),
    ("branch", "hardtanh(x)", {"x": "1"}, None, "wrong", "drops a branch"),
    ("region", "relu(x - 1)", {"x": "1"}, None, "wrong", "right for x > 1, wrong for x < 1"),
    ("right", "log(sigmoid(x))", {"x": "1 - sigmoid(x)"}, None, "correct", None),
    ("right", "softplus(x)", {"x": "sigmoid(x)"}, None, "correct", None),
    ("right", "x**x", {"x": "x**x*(log(x) + 1)"}, None, "correct", None),
    ("right", "sqrt(x)", {"x": "1/(2*sqrt(x))"}, None, "correct", None),
]


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    with open(path, "w") as f:
        for problem, expr, grads, at, _, _ in CORPUS:
            record = {"problem": problem, "expr": expr, "grad": grads}
            if at is not None:
                record["at"] = at
            f.write(json.dumps(record) + "\n")
    results = list(batch.check_answers(batch.read_answers(str(path)), timeout=5.0,
                                       time_limit=None))
    summary = batch.Summary()
    for r in results:
        summary.add(r)
    return results, summary


@pytest.mark.parametrize("k", range(len(CORPUS)), ids=[c[1] for c in CORPUS])
def test_verdict_and_diagnosis(checked, k):
    problem, expr, _, _, verdict, words = CORPUS[k]
    r = checked[0][k]
    assert (r["line"], r["problem"], r["expression"]) == (k + 1, problem, expr)
    assert r["verdict"] == verdict, r["message"]
    if words is None:
        assert r["diagnosis"] == [] and r["score"] == 1.0
    else:
        assert any(words in d for d in r["diagnosis"]), r["diagnosis"]
        assert "claimed - true" not in " | ".join(r["diagnosis"])  # (a named mistake)


def test_summary_counts_each_mistake(checked):
    summary = checked[1]
    d = summary.as_dict()
    assert (d["answers"], d["correct"], d["wrong"], d["undecided"], d["error"]) == \
        (19, 4, 15, 0, 0)
    counts = {(p, m.split(":")[1].strip()): n for p, m, n in summary.mistakes()}
    assert counts[("chain rule", "missing factor 2*x")] == 1
    assert sum(n for (p, _), n in counts.items() if p == "chain rule") == 4  # one each
    assert sum(counts.values()) == 15  # one main mistake per wrong answer
