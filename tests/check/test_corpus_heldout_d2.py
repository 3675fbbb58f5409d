"""Issue 21: a held-out set of hand-derived gradients written as students write them
(``corpus_heldout_d2.json``), each wrong answer's diagnosis judged as a strict teacher
would (good / fair / bad / none) before and after the changes it prompted.

Calculus: the chain rule, product and quotient rules, the power rule off by one (or
applied to an exponential), log/exp, trigonometric signs (d cos = -sin), inverse
trigonometric functions, sqrt, abs, relu, leaky ReLU and Huber pieces; ML: tanh' written
without its square or left out, sigmoid' signs and exponential forms, softmax's Jacobian
(its diagonal alone), MSE's 2/N, L2 regularisation's factor 2, binary cross-entropy in
p and in logits, matrix calculus (x.T A x without symmetrising, traces, norms, logdet's
inverse transpose); and right answers in unusual forms.

Judged (92 wrong): before good 66, fair 10, bad 4, none 12, 1 false verdict (a right
``inverse(A.T)`` for ``logdet(A)`` called wrong at a point with det(A) < 0); after good
87, fair 4, bad 0, none 1, 0 false, 0 undecided.  A second, fresh set written after those
changes (``fresh_wrong``, 40; ``fresh_right``, 10), judged on its first run: good 33,
fair 5, none 2, 0 false, 0 undecided; after two more slips (sigmoid' left out, an extra
square): good 35, fair 5.  Each verdict is asserted, and for every answer judged good the
words that make it good.  Same budget as the issue-21 corpus (5 s of CPU time for the
proofs, three samples)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import case_id, check_case

BUDGET = 5.0
DATA = json.loads((Path(__file__).parent / "corpus_heldout_d2.json").read_text("utf-8"))
WRONG, RIGHT = DATA["wrong"] + DATA["fresh_wrong"], DATA["right"] + DATA["fresh_right"]


def _at_most_three_alike(cases: list) -> list:
    """The cases run: at most three with the same good diagnosis (``wrong sign: the
    claimed gradient is the negative of the true one`` is judged good 19 times; the rest
    are recorded in the data, within the new tests' time budget)."""
    seen: Counter = Counter()
    out = []
    for c in cases:
        key = tuple(c["keys"])
        seen[key] += 1
        if not key or seen[key] <= 3:
            out.append(c)
    return out


RUN = _at_most_three_alike(WRONG)


def run(case):
    return check_case(case, BUDGET)


def test_the_judgement_counts_are_what_the_docstring_says():
    first, fresh = DATA["wrong"], DATA["fresh_wrong"]
    assert Counter(c["before"] for c in first) == {"good": 66, "fair": 10, "bad": 4,
                                                   "none": 12}
    assert Counter(c["after"] for c in first) == {"good": 87, "fair": 4, "none": 1}
    assert Counter(c["before"] for c in fresh) == {"good": 33, "fair": 5, "none": 2}
    assert Counter(c["after"] for c in fresh) == {"good": 35, "fair": 5}
    assert all(c["keys"] for c in WRONG if c["after"] == "good")
    assert all("note" in c for c in WRONG if c["after"] != "good")
    assert (len(first), len(DATA["right"]), len(fresh), len(DATA["fresh_right"])) == \
        (92, 33, 40, 10)
    assert len(RUN) == 107


@pytest.mark.parametrize("case", RUN, ids=map(case_id, RUN))
def test_wrong_answers_are_caught_and_named(case):
    r = run(case)
    assert r.verdict == "wrong", r.text()
    assert all(v["symbolic"] != "timeout" for v in r.variables.values()), r.notes
    for key in case["keys"]:
        assert any(d.startswith(key) for d in r.diagnosis), (key, r.diagnosis)
    assert not any(d.startswith("claimed - true", d.find(": ") + 2) for d in r.diagnosis) \
        or case["after"] == "none", r.diagnosis


@pytest.mark.parametrize("case", RIGHT, ids=map(case_id, RIGHT))
def test_right_answers_in_unusual_forms_are_proved(case):
    r = run(case)
    assert r.verdict == "correct", r.text()
    assert r.counterexample is None and not r.diagnosis
