"""Architecture limits (``tools/archcheck.py`` against ``tools/archcheck_baseline.json``).

``test_tree_meets_baseline`` checks the real tree; the other tests check the script on
small synthetic packages.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "archcheck.py"
BASELINE = ROOT / "tools" / "archcheck_baseline.json"


def _load_archcheck():
    spec = importlib.util.spec_from_file_location("archcheck", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("archcheck", module)
    spec.loader.exec_module(module)
    return module


archcheck = _load_archcheck()


def test_tree_meets_baseline():
    baseline = json.loads(BASELINE.read_text())
    config = {k: baseline[k] for k in ("line_limit", "exempt_globs", "shadow_allowed")}
    result = archcheck.measure(ROOT, ["symgrad", "cli"], config)
    problems = archcheck.check(result, baseline)
    assert not problems, "\n".join(problems) + "\n\n" + archcheck.format_report(result)


# -- the script on synthetic packages ---------------------------------------------------

def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _measure(root: Path, **config) -> dict:
    return archcheck.measure(root, ["pkg"], config)


def test_two_module_cycle(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "",
                      "pkg/a.py": "from . import b\n",
                      "pkg/b.py": "from .a import thing\n\ndef f():\n    from . import c\n",
                      "pkg/c.py": "from .a import thing\n"})
    result = _measure(tmp_path)
    assert [c["members"] for c in result["cycles"]] == [["pkg.a", "pkg.b"]]
    assert result["summary"]["cycles"] == 1


def test_function_imports_are_not_edges_and_type_checking_is_ignored(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "",
                      "pkg/a.py": "from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from . import b\n",
                      "pkg/b.py": "def f():\n    from . import a  # cycle otherwise\n"})
    result = _measure(tmp_path)
    assert result["cycles"] == []
    assert result["summary"]["function_imports"] == 1


def test_import_inside_class_body_and_try_is_module_level(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "",
                      "pkg/a.py": "try:\n    from . import b\nexcept ImportError:\n    pass\n",
                      "pkg/b.py": "class C:\n    from .a import x\n"})
    assert [c["members"] for c in _measure(tmp_path)["cycles"]] == [["pkg.a", "pkg.b"]]


def test_parent_package_init_edge_makes_a_cycle(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "thing = 1\nfrom . import a\n",
                      "pkg/a.py": "from pkg import thing\n"})
    result = _measure(tmp_path)
    assert [c["members"] for c in result["cycles"]] == [["pkg", "pkg.a"]]
    assert result["cycles"][0]["example"][0].startswith("pkg/__init__ -> pkg.a")


def test_importing_a_deep_module_runs_the_parent_inits(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "",
                      "pkg/sub/__init__.py": "from ..a import x\n",
                      "pkg/sub/mod.py": "",
                      "pkg/a.py": "from pkg.sub.mod import y\n"})
    # pkg.a -> pkg/sub/__init__ (run before pkg.sub.mod) -> pkg.a
    assert [c["members"] for c in _measure(tmp_path)["cycles"]] == [["pkg.a", "pkg.sub"]]


def test_enclosing_package_already_running_is_no_edge(tmp_path):
    # pkg/__init__ is already executing when pkg.a runs: importing pkg.b does not need it.
    _write(tmp_path, {"pkg/__init__.py": "from . import a\n",
                      "pkg/a.py": "from . import b\nfrom .b import y\n",
                      "pkg/b.py": "y = 1\n"})
    assert _measure(tmp_path)["cycles"] == []


def test_function_import_reason_comments(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "",
                      "pkg/a.py": (
                          "def f():\n"
                          "    import os  # deferred: only the CLI needs it\n"
                          "    # sympy is slow to import; only symbolic users pay\n"
                          "    import sympy\n"
                          "    x = 1  # a comment about x\n"
                          "    import json\n"
                          "    import re  # noqa: F401\n"
                          "\n"
                          "    def g():\n"
                          "        from . import b\n"
                          "        s = '# not a comment'; import sys\n")})
    imports = _measure(tmp_path)["function_imports"]
    got = {i["line"]: (i["module"], i["has_reason"]) for i in imports}
    assert got == {2: ("os", True), 4: ("sympy", True), 6: ("json", False),
                   7: ("re", False), 10: ("pkg", False), 11: ("sys", False)}
    result = _measure(tmp_path)
    assert result["summary"]["function_imports"] == 6
    assert result["summary"]["function_imports_without_reason"] == 4


def test_shadowing(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "from . import good\n"
                                         "from .draw import draw\n"
                                         "from .sub import inner as sub\n"
                                         "def helper():\n    pass\n"
                                         "from . import _private\n",
                      "pkg/good.py": "", "pkg/draw.py": "def draw():\n    pass\n",
                      "pkg/helper.py": "", "pkg/_private.py": "",
                      "pkg/sub/__init__.py": "from .inner import inner\n",
                      "pkg/sub/inner.py": "def inner():\n    pass\n"})
    result = _measure(tmp_path)
    assert sorted(s["name"] for s in result["shadowed"]) == [
        "pkg.draw", "pkg.helper", "pkg.sub", "pkg.sub.inner"]
    allowed = _measure(tmp_path, shadow_allowed=["pkg.draw", "pkg.sub.inner"])
    assert sorted(s["name"] for s in allowed["shadowed"]) == ["pkg.helper", "pkg.sub"]


def test_submodule_bound_through_its_own_name_is_not_shadowing(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "from . import x\nimport pkg.y as y\n"
                                         "from pkg import z\n",
                      "pkg/x.py": "", "pkg/y.py": "", "pkg/z.py": ""})
    assert _measure(tmp_path)["shadowed"] == []


def test_star_import_that_shadows(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "from .api import *\n",
                      "pkg/api.py": "__all__ = ['draw']\ndef draw():\n    pass\n",
                      "pkg/draw.py": ""})
    assert [s["name"] for s in _measure(tmp_path)["shadowed"]] == ["pkg.draw"]


def test_file_sizes_and_exempt_globs(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "",
                      "pkg/big.py": "x = 1\n" * 801,
                      "pkg/ok.py": "x = 1\n" * 800,
                      "pkg/ops/__init__.py": "",
                      "pkg/ops/table.py": "x = 1\n" * 900,
                      "pkg/ops/deep/table.py": "x = 1\n" * 900,
                      "pkg/_fast.c": "int x;\n" * 1000})
    result = _measure(tmp_path, line_limit=800, exempt_globs=["pkg/ops/*.py"])
    files = result["files"]
    assert files["sizes"]["pkg/big.py"] == 801
    assert set(files["over_limit"]) == {"pkg/big.py", "pkg/ops/deep/table.py", "pkg/_fast.c"}
    assert set(files["exempt"]) == {"pkg/ops/table.py"}
    assert result["summary"]["files_over_limit"] == 3


def test_installed_name_resolves_relative_and_absolute_imports(tmp_path):
    _write(tmp_path, {"cli/__init__.py": "", "cli/a.py": "from . import b\n",
                      "cli/b.py": "from mycli.a import x\n"})
    result = archcheck.measure(tmp_path, ["cli=mycli"], {})
    assert [c["members"] for c in result["cycles"]] == [["mycli.a", "mycli.b"]]


def test_check_and_cli(tmp_path, capsys):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from . import b\n",
                      "pkg/b.py": "from . import a\n\ndef f():\n    import os\n"})
    baseline = {**json.loads(BASELINE.read_text()), "max_cycles": 0, "max_function_imports": 10,
                "max_function_imports_without_reason": 0, "max_files_over_limit": 0,
                "max_shadowed": 0}
    (tmp_path / "base.json").write_text(json.dumps(baseline))
    argv = ["--root", str(tmp_path), "pkg", "--check", str(tmp_path / "base.json")]
    assert archcheck.main(argv) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == ["cycles: 1 > max_cycles 0",
                   "function imports without reason: 1 > max_function_imports_without_reason 0"]
    baseline.update(max_cycles=1, max_function_imports_without_reason=1)
    (tmp_path / "base.json").write_text(json.dumps(baseline))
    assert archcheck.main(argv) == 0
    capsys.readouterr()
    assert archcheck.main(["--root", str(tmp_path), "pkg", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["cycles"] == 1
    assert archcheck.main(["--root", str(tmp_path), "pkg"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "cycles 1, function imports 1 (1 without a reason), files over 800 lines 0, "
        "shadowed submodules 0")


@pytest.mark.parametrize("rel, pattern, expected", [
    ("symgrad/ops/a.py", "symgrad/ops/*.py", True),
    ("symgrad/ops/x/a.py", "symgrad/ops/*.py", False),
    ("symgrad/ops/x/a.py", "symgrad/ops/**/*.py", True),
    ("symgrad/ops/a.py", "symgrad/ops/**/*.py", True),
    ("other/symgrad/ops/a.py", "symgrad/ops/*.py", False),
])
def test_glob_match(rel, pattern, expected):
    assert archcheck.glob_match(rel, pattern) is expected


def test_class_attributes_do_not_shadow(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "class C:\n    draw = 1\n", "pkg/draw.py": ""})
    assert _measure(tmp_path)["shadowed"] == []


def test_compiled_submodule_is_no_edge_to_the_package(tmp_path):
    """``from .. import _speedups`` imports the extension built from ``_speedups.c``."""
    _write(tmp_path, {"pkg/__init__.py": "from .sub import mod\n", "pkg/_speedups.c": "",
                      "pkg/sub/__init__.py": "",
                      "pkg/sub/mod.py": "from .. import _speedups\n"})
    assert _measure(tmp_path)["cycles"] == []
    (tmp_path / "pkg" / "_speedups.c").unlink()  # now it is a name of pkg/__init__
    assert _measure(tmp_path)["summary"]["cycles"] == 1
