"""Packaging that cannot drift: what ``setup.py`` installs is found from the tree, and a
wheel built from an sdist holds every module and every file the library reads.

A regular install once could not import (``symgrad.backends``, ``symgrad.optim``,
``symgrad.nn.modules`` were missing from a hand-kept package list).  These tests walk
``symgrad/`` and ``cli/`` and compare with setup.py's lists; the last one builds an sdist
and a (pure-Python) wheel from it.  ``tools/wheel_smoke.py`` installs the real wheel in a
fresh environment without ``dot`` and uses it.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


smoke = _load("wheel_smoke", ROOT / "tools" / "wheel_smoke.py")
setup_py = smoke.load_setup(ROOT)
_OPENERS = re.compile(r"__file__|importlib\.resources|\bresources\.|\bfiles\(")


def _folders(root: Path):
    """(folder, relative path) of every folder under the installed top-level folders."""
    for top in setup_py.TOP_LEVEL:
        for here, dirs, _ in os.walk(root / top):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            yield Path(here), Path(here).relative_to(root)


def _import_name(rel: Path) -> str:
    return setup_py._import_name(".".join(rel.parts))


def _declared(root: Path) -> set:
    """Every package-data file setup.py declares, relative to ``root``."""
    return {f"{setup_py._folder(pkg)}/{rel}"
            for pkg, files in setup_py.package_data(str(root)).items() for rel in files}


# ------------------------------------------------------------------------------ the tree
def test_every_folder_with_an_init_is_a_found_package():
    found = set(setup_py.packages(str(ROOT)))
    on_disk = {_import_name(rel) for here, rel in _folders(ROOT)
               if (here / "__init__.py").is_file()}
    assert {"symgrad.backends", "symgrad.optim", "symgrad.nn.modules",
            "symgrad.nn.functional", "symgrad_cli"} <= on_disk
    assert found == on_disk


def test_every_folder_of_modules_is_a_package():
    """A folder of modules without ``__init__.py`` would be left out of the wheel."""
    loose = [str(rel) for here, rel in _folders(ROOT)
             if any(here.glob("*.py")) and not (here / "__init__.py").is_file()]
    assert not loose, f"folders of modules without __init__.py (not installed): {loose}"


def test_cli_installs_as_symgrad_cli_never_as_cli():
    found = setup_py.packages(str(ROOT))
    assert "symgrad_cli" in found
    assert not [p for p in found if p == "cli" or p.startswith("cli.")]
    assert setup_py._folder("symgrad_cli") == "cli"


def test_the_command_points_into_an_installed_package():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    found = set(setup_py.packages(str(ROOT)))
    for name, target in scripts.items():
        module, _, func = target.partition(":")
        package, _, leaf = module.rpartition(".")
        assert package in found, f"{name}: {package} is not installed"
        path = ROOT / setup_py._folder(package) / f"{leaf}.py"
        defined = {n.name for n in ast.parse(path.read_text()).body
                   if isinstance(n, ast.FunctionDef)}
        assert func in defined, f"{name}: {target} is not a function of {path}"


def test_every_non_code_file_is_package_data():
    """``find symgrad cli -type f ! -name '*.py'``: each file is installed as package data,
    or is a build product."""
    declared = _declared(ROOT)
    products = (".pyc", ".pyo", ".so", ".pyd", ".dylib", ".dll", ".o", ".obj")
    left_out = []
    for here, rel in _folders(ROOT):
        for f in here.iterdir():
            name = f"{rel.as_posix()}/{f.name}"
            if (not f.is_file() or f.name.endswith((".py",) + products)
                    or f.name.startswith(".") or name in declared):
                continue
            left_out.append(name)
    assert not left_out, f"in the tree but neither package data nor a build product: {left_out}"


def test_no_c_sources_and_the_compiled_modules_are_python_modules():
    """No C file under symgrad/ (the compiled modules are compiled from their own ``.py``
    source; Cython's C goes to build/), and every module setup.py compiles is one."""
    c_files = [p.relative_to(ROOT).as_posix() for p in (ROOT / "symgrad").rglob("*")
               if p.name.endswith((".c", ".h"))]
    assert c_files == []
    names = setup_py.compiled_modules(str(ROOT))
    assert names and all((ROOT / (n.replace(".", "/") + ".py")).is_file() for n in names)
    assert {e.name for e in setup_py.extensions()} == set(names)
    assert [s for e in setup_py.extensions() for s in e.sources] == \
        [n.replace(".", "/") + ".py" for n in names]


def test_files_the_modules_open_are_declared_package_data():
    """A module that reads a file of its package (``Path(__file__).parent / "x.js"``,
    ``importlib.resources.files(...) / "x.js"``): the file exists and is declared."""
    declared = _declared(ROOT)
    problems = []
    for here, rel in _folders(ROOT):
        for module in here.glob("*.py"):
            text = module.read_text(encoding="utf-8")
            if not _OPENERS.search(text):
                continue
            for node in ast.walk(ast.parse(text)):
                if not isinstance(node, ast.stmt) or isinstance(
                        node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef, ast.If,
                               ast.For, ast.While, ast.With, ast.Try)):
                    continue
                line = ast.get_source_segment(text, node) or ""
                for const in ast.walk(node):
                    if not (isinstance(const, ast.Constant) and isinstance(const.value, str)
                            and re.fullmatch(r"[\w][\w./-]*\.\w+", const.value)):
                        continue
                    target = here / const.value
                    name = f"{rel.as_posix()}/{const.value}"
                    if target.is_file() and name not in declared:
                        problems.append(f"{module.name}: {const.value} is not package data")
                    elif not target.is_file() and _OPENERS.search(line):
                        problems.append(f"{module.name}: opens {const.value}, not in {rel}")
    assert not problems, problems


def test_discovery_on_a_synthetic_tree(tmp_path):
    """A new package, a data file of a new kind, a data folder without ``__init__`` and the
    build products, as setup.py sees them."""
    files = ["symgrad/__init__.py", "symgrad/engine/reverse.c", "symgrad/_csrc/a.c.h",
             "symgrad/x.cpython-311-x86_64-linux-gnu.so", "symgrad/__pycache__/m.pyc",
             "symgrad/drawing/__init__.py", "symgrad/drawing/player.js",
             "symgrad/drawing/assets/font.woff2", "symgrad/drawing/.player.js.swp",
             "symgrad/newpkg/__init__.py", "symgrad/newpkg/sub/__init__.py",
             "symgrad/notapkg/m.py", "cli/__init__.py", "cli/templates/help.txt",
             "cli/sub/__init__.py", "tests/__init__.py"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    assert setup_py.packages(str(tmp_path)) == [
        "symgrad", "symgrad.drawing", "symgrad.newpkg", "symgrad.newpkg.sub", "symgrad_cli",
        "symgrad_cli.sub"]
    assert setup_py.package_data(str(tmp_path)) == {
        "symgrad.drawing": ["assets/font.woff2", "player.js"],
        "symgrad_cli": ["templates/help.txt"]}


# ------------------------------------------------------------------------ built artifacts
@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="needs setuptools")
def test_a_wheel_built_from_the_sdist_holds_every_module_and_data_file(tmp_path):
    """sdist of a clean copy of the tree -> unpacked -> wheel (pure Python: the compiled
    modules are ``tools/wheel_smoke.py``'s to build)."""
    src = tmp_path / "src"
    smoke.clean_copy(ROOT, src)
    sdist = smoke.build_sdist(src, tmp_path / "dist")
    assert smoke.sdist_problems(sdist, src) == []
    with tarfile.open(sdist) as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp_path / "unpacked", **safe)
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    code = ("import sys; from setuptools import build_meta as b; "
            "print(b.build_wheel(sys.argv[1]))")
    env = dict(os.environ, SYMGRAD_BUILD_COMPILED="0")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "wheel")], cwd=unpacked,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = tmp_path / "wheel" / proc.stdout.strip().splitlines()[-1]
    assert smoke.wheel_problems(wheel, unpacked) == []
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        top_level = next(z.read(n).decode() for n in names if n.endswith("top_level.txt"))
    assert top_level.split() == ["symgrad", "symgrad_cli"]
    assert not [n for n in names if n.endswith((".c", ".h"))]
    assert {"symgrad/backends/__init__.py", "symgrad/optim/__init__.py",
            "symgrad/nn/modules/__init__.py", "symgrad/nn/functional/__init__.py",
            "symgrad_cli/main.py"} <= names


def test_the_wheel_check_reports_what_the_old_packaging_lost(tmp_path):
    """tools/wheel_smoke.py's check on a wheel like the one the hand-kept list built (no
    symgrad.backends, symgrad.optim, ...) and one that installs a top-level ``cli``."""
    wheel = tmp_path / "symgrad-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in ("symgrad/__init__.py", "symgrad/api/__init__.py", "cli/__init__.py",
                     "symgrad-0.1.0.dist-info/METADATA"):
            z.writestr(name, "")
    found = smoke.wheel_problems(wheel, ROOT, compiled=True)
    lost = next(p for p in found if p.startswith("wheel lacks the packages"))
    assert all(f"'{pkg}'" in lost for pkg in ("symgrad.backends", "symgrad.optim",
                                              "symgrad.nn.modules", "symgrad_cli"))
    assert "'symgrad.api'" not in lost
    assert any("top-level ['cli', 'symgrad']" in p for p in found), found
    assert any("compiled modules" in p and "symgrad.engine.reverse" in p for p in found), found
