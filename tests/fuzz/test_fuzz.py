"""A fixed sample of the fuzzer (tests/fuzz/fuzzing.py): random and hostile command lines
end as the contract says, and nothing typed is executed."""
from __future__ import annotations

import os

import pytest

from fuzzing import HOSTILE, fuzz, run_one


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
    count, failures = fuzz(seed, n=40)
    assert count == 40
    assert failures == [], failures[:3]


@pytest.mark.parametrize("args", [
    ["diff", "sin(0)**x", "--at", "x=[0]"],  # complex infinity in a compiled step
    ["check", "--", "--grad", "x=1"],         # after --, everything is an argument
    ["diff", "(pi * det((1e300 / log(x.T))))", "--order", "3"],  # numpy's overflow warning
    # (the matrix algebra's Hessians: a constant term when factoring a sum)
    ["diff", "atan((w + sign(ln(log1p(1e300)))))", "--order", "2"],
    ["diff", "(abs(sqrt((z @ (z - 2.5)))) + tanh(sum(2.5)))", "--order", "2", "--json"],
    # (expansions in the matrix algebra have one budget per canonical form: a 30-minute
    # fuzz run found a Hessian whose repeated expansions ran without end)
    ["diff", "sum((x+1)*(x+2)*(x+3)*(x+4)*(x+5)*(x+6)*(x+7)*(x+8)*(x+9)*(x+10))",
     "--order", "2"],
    # (a power too large to compute, met first when printing f)
    ["diff", "x + (y*0+0.5)**((y*0+10)**(y*0+100))"],
    # (a trigonometric function of a number past the floats' range: SymPy's reduction
    # modulo pi recursed without end)
    ["diff", "sec(exp(relu(((1e300 / w) @ w))))"],
])
def test_found_by_the_fuzzer(args, tmp_path):
    os.chdir(tmp_path)
    ok, what = run_one(args)
    assert ok, what
