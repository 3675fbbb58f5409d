"""SymPy is loaded only when a symbolic result is asked for (issue 11: no SymPy on the
import path): tensor code, ``symgrad --version`` and ``symgrad ops`` never load it."""
from __future__ import annotations

import subprocess
import sys

import pytest

_NUMERIC = """
import symgrad as torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x.sin() * x).sum()
y.backward()
z = torch.autograd.grad((x * x).sum(), x, create_graph=True)[0].sum()
z.backward()
import symgrad.nn.functional as F
F.relu(x).sum().backward()
"""

_CLI = """
from symgrad_cli.main import main
try:
    main({args!r})
except SystemExit as e:
    assert e.code == 0, e.code
"""


def _loads_sympy(code: str) -> bool:
    probe = code + "\nimport sys\nprint('sympy' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("code", [
    "import symgrad",
    _NUMERIC,
    _CLI.format(args=["--version"]),
    _CLI.format(args=["ops"]),
], ids=["import", "tensor-code", "cli-version", "cli-ops"])
def test_sympy_not_loaded(code):
    assert not _loads_sympy(code)


@pytest.mark.parametrize("code", [
    "import symgrad\nsymgrad.parse('x*sin(x)').diff('x')",
    "from symgrad import to_sympy",
    _CLI.format(args=["diff", "x*sin(x)", "--at", "x=1"]),
], ids=["parse", "to_sympy", "cli-diff"])
def test_sympy_loaded_when_asked_for(code):
    # the lazy names work, and they are what loads SymPy
    assert _loads_sympy(code)


def test_lazy_names_are_listed():
    import symgrad
    for name in ("parse", "to_sympy", "check", "draw", "make_dot", "Expression"):
        assert name in dir(symgrad) and name in symgrad.__all__
        assert callable(getattr(symgrad, name))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        symgrad.nope
