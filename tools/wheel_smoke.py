#!/usr/bin/env python3
"""Install symgrad as a student would and use it: ``python tools/wheel_smoke.py``.

1. Copy the source tree as a clean clone has it (git's tracked and unignored files: no
   build products, no in-place extension) into a temporary folder.
2. Build an sdist and a wheel from the copy (``pip wheel . --no-deps``), and a second
   wheel from the sdist; check both hold every package, every package-data file, no
   top-level ``cli``, the same files, and the sdist the C extension's sources.
3. Make a fresh virtual environment (no system site-packages), install the wheel there
   (dependencies from the package index) with nbclient and ipykernel.
4. From a working folder outside the source tree, with ``PATH`` = the environment's
   ``bin`` only (so no Graphviz ``dot``), run: the imports, ``symgrad --help``, ``diff``,
   ``draw -o g.svg``, ``check`` of a wrong gradient, ``draw -o g.png`` (renders, or fails
   with one line saying what to install), and the lesson notebook
   (``examples/lesson.ipynb``, checked by ``tests/notebook/lesson_check.py``).

Prints one PASS/FAIL line per check and a summary; exits 1 if any check failed, 0 if all
passed.  Temporary folders are removed (``--keep`` keeps them).  With
``SYMGRAD_REQUIRE_COMPILED=1`` the wheel must hold the compiled modules (``setup.py``
compiles the ``.py`` modules ``symgrad/api/compiled.py`` names), beside their source.
"""
from __future__ import annotations

import argparse
import configparser
import importlib.metadata
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXPR = "5*x**2 + 3*sin(y)"
POINT = ["--at", "x=4", "--at", "y=0"]
NOTEBOOK_DEPS = ["nbclient", "nbformat", "ipykernel"]
#: Environment variables a pip install may need (index, proxies, certificates).
_PIP_ENV = ("PIP_", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
            "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "HOME",
            "XDG_CACHE_HOME", "TMPDIR", "LANG", "LC_ALL", "CC", "CFLAGS")

__all__ = ["clean_copy", "load_setup", "build_sdist", "sdist_problems", "wheel_problems",
           "main"]


# ------------------------------------------------------------------------ the build checks
def clean_copy(src: pathlib.Path, dst: pathlib.Path) -> list[str]:
    """Copy the files a clean clone of ``src`` would have (plus files not yet committed and
    not ignored) to ``dst``; return their relative paths."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=src,
                             capture_output=True, check=True).stdout.decode()
        files = [f for f in out.split("\0") if f and (src / f).is_file()]
    except (OSError, subprocess.CalledProcessError):  # no git: skip the usual products
        skip = {".git", "build", "dist", "__pycache__", ".pytest_cache"}
        files = [str(p.relative_to(src)) for p in src.rglob("*") if p.is_file()
                 and not skip & set(p.relative_to(src).parts)
                 and not p.name.endswith((".so", ".pyd", ".pyc"))
                 and ".egg-info" not in str(p)]
    for rel in files:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dst / rel)
    return sorted(files)


def load_setup(root: pathlib.Path):
    """``root/setup.py`` as a module (its ``setup()`` runs only as a script)."""
    spec = importlib.util.spec_from_file_location("symgrad_setup", root / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_files(root: pathlib.Path) -> dict:
    """What a wheel built from ``root`` must hold: ``{path in the wheel: path in root}``
    for every module and package-data file of every package setup.py finds."""
    setup_py = load_setup(root)
    want = {}
    for pkg in setup_py.packages(str(root)):
        folder = root / setup_py._folder(pkg)
        for f in folder.glob("*.py"):
            want["/".join(pkg.split(".") + [f.name])] = f
        for rel in setup_py.package_data(str(root)).get(pkg, []):
            want["/".join(pkg.split(".")) + "/" + rel] = folder / rel
    return want


def _setuptools_env(scratch: pathlib.Path) -> dict:
    """An environment in which ``import setuptools`` gives the version pyproject.toml's
    build-system asks for: this Python's own if recent enough, else one pip puts in
    ``scratch`` (as ``python -m build`` would; Python 3.12's venvs have none)."""
    env = dict(os.environ)
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        major = 0
    if major < 68:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target",
                        str(scratch), "setuptools>=68"], env=_pip_env(), check=True,
                       capture_output=True)
        env["PYTHONPATH"] = str(scratch)
    return env


def build_sdist(src: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The sdist of ``src`` (setuptools' PEP 517 hook, run in a child process)."""
    code = ("import sys; from setuptools import build_meta as b; "
            "print(b.build_sdist(sys.argv[1]))")
    env = _setuptools_env(out.parent / "setuptools-for-sdist")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"sdist failed: {proc.stderr.strip()[-800:]}")
    return out / proc.stdout.strip().splitlines()[-1]


def sdist_problems(sdist: pathlib.Path, root: pathlib.Path) -> list[str]:
    """What the sdist lacks: every file the wheel needs (modules, which are also the
    sources of the compiled modules, and package data); a C file it should not hold."""
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    need = {str(p.relative_to(root)).replace(os.sep, "/") for p in expected_files(root).values()}
    need |= {"setup.py", "pyproject.toml", "README.md"}
    missing = sorted(need - names)
    out = [f"sdist lacks {missing[:8]}{' ...' if len(missing) > 8 else ''}"] if missing else []
    generated = sorted(n for n in names if n.startswith("symgrad/") and n.endswith((".c", ".h")))
    if generated:
        out.append(f"sdist holds C files {generated[:8]} (Cython's output stays in build/)")
    return out


def wheel_problems(wheel: pathlib.Path, root: pathlib.Path, compiled: bool = False) -> list[str]:
    """What is wrong with a wheel built from ``root``: a missing module or data file, a
    top-level package other than symgrad and symgrad_cli, a missing extension if
    ``compiled``."""
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    out = []
    missing = sorted(set(expected_files(root)) - names)
    packages = [m[:-len("/__init__.py")].replace("/", ".") for m in missing
                if m.endswith("/__init__.py")]
    if packages:
        out.append(f"wheel lacks the packages {packages}")
    others = [m for m in missing if not m.endswith("/__init__.py")]
    if others:
        out.append(f"wheel lacks {len(others)} files: {others[:8]}"
                   f"{' ...' if len(others) > 8 else ''}")
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    if tops != {"symgrad", "symgrad_cli"}:
        out.append(f"wheel installs top-level {sorted(tops)}, expected symgrad, symgrad_cli")
    if compiled:
        lacking = [m for m in load_setup(root).compiled_modules(str(root))
                   if not _compiled_in(m, names)]
        if lacking:
            out.append(f"wheel lacks the compiled modules {lacking} (SYMGRAD_REQUIRE_COMPILED=1)")
    return out


def _compiled_in(module: str, names: set) -> bool:
    """Whether the wheel's file ``names`` hold ``module`` compiled (``a/b.cpython-*.so``)."""
    stem = module.replace(".", "/") + "."
    return any(n.startswith(stem) and n.endswith((".so", ".pyd")) for n in names)


def _wheel_names(wheel: pathlib.Path) -> set:
    with zipfile.ZipFile(wheel) as z:
        return {n for n in z.namelist() if not n.endswith(".dist-info/RECORD")}


# ------------------------------------------------------------------------------ the runner
class Smoke:
    """Runs the checks, one line each, and keeps the tally."""

    def __init__(self, tmp: pathlib.Path) -> None:
        self.tmp = tmp
        self.results: list[tuple[str, bool]] = []
        self.started = time.monotonic()

    def record(self, name: str, ok: bool, detail: str = "", seconds: float | None = None):
        took = f" ({seconds:.1f} s)" if seconds is not None else ""
        shown = f": {detail}" if detail and not ok else ""  # a pass needs no explaining
        print(f"{'PASS' if ok else 'FAIL'}  {name}{took}{shown}", flush=True)
        self.results.append((name, ok))
        return ok

    def run(self, args: list, *, env: dict | None = None, cwd: pathlib.Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in args], env=env, cwd=cwd, capture_output=True,
                              text=True, encoding="utf-8", errors="replace", timeout=timeout)


def _tail(text: str, lines: int = 6) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def _pip_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k.startswith(_PIP_ENV) or k == "PATH"}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore",
               PYTHONNOUSERSITE="1")
    return env


def _student_env(venv: pathlib.Path, tmp: pathlib.Path) -> dict:
    """A bare environment: PATH is the venv's bin only; Jupyter's and IPython's folders
    are temporary (no kernel spec of this machine's user can be picked up)."""
    dirs = {k: tmp / "home" / k.lower() for k in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR",
                                                  "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
                                                  "MPLCONFIGDIR", "TMPDIR")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    env = {k: str(v) for k, v in dirs.items()}
    env.update(PATH=str(venv / "bin"), HOME=str(tmp / "home"), LANG="C.UTF-8",
               LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8", PYTHONNOUSERSITE="1",
               JUPYTER_PLATFORM_DIRS="1")
    return env


def _build(s: Smoke, src: pathlib.Path, compiled: bool):
    """Build the sdist and ``pip wheel .``; start building a wheel from the sdist in the
    background (it compiles while the environment installs).  Returns (wheel, pending)."""
    t = time.monotonic()
    try:
        sdist = build_sdist(src, s.tmp / "dist")
    except RuntimeError as e:
        s.record("sdist builds", False, str(e))
        return None, None
    s.record("sdist builds and holds the modules and data (no C)",
             not (p := sdist_problems(sdist, src)), "; ".join(p), time.monotonic() - t)

    t = time.monotonic()
    # (Cython and the C compiler run for the compiled modules: minutes on a busy machine)
    proc = s.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w",
                  s.tmp / "wheel"], cwd=src, env=_pip_env(), timeout=900)
    wheels = sorted((s.tmp / "wheel").glob("symgrad-*.whl"))
    if proc.returncode != 0 or len(wheels) != 1:
        s.record("pip wheel . builds", False, _tail(proc.stderr))
        return None, None
    wheel = wheels[0]
    problems = wheel_problems(wheel, src, compiled)
    with zipfile.ZipFile(wheel) as z:
        has_c = _compiled_in("symgrad.engine.reverse", set(z.namelist()))
    s.record(f"pip wheel . builds {wheel.name} (compiled modules: {'yes' if has_c else 'no'})",
             not problems, "; ".join(problems), time.monotonic() - t)
    pending = subprocess.Popen(
        [sys.executable, "-m", "pip", "wheel", str(sdist), "--no-deps", "-q", "-w",
         str(s.tmp / "wheel-from-sdist")], cwd=s.tmp, env=_pip_env(),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return wheel, (pending, time.monotonic())


def _check_sdist_wheel(s: Smoke, wheel: pathlib.Path, pending) -> None:
    proc, t = pending
    _, err = proc.communicate(timeout=900)
    from_sdist = sorted((s.tmp / "wheel-from-sdist").glob("symgrad-*.whl"))
    if proc.returncode != 0 or len(from_sdist) != 1:
        s.record("a wheel builds from the sdist", False, _tail(err))
        return
    a, b = _wheel_names(wheel), _wheel_names(from_sdist[0])
    s.record("a wheel builds from the sdist, with the same files", a == b,
             f"only from the tree: {sorted(a - b)[:5]}, only from the sdist: "
             f"{sorted(b - a)[:5]}" if a != b else "", time.monotonic() - t)


def _make_venv(s: Smoke, wheel: pathlib.Path, notebook: bool) -> pathlib.Path | None:
    """A fresh environment with the wheel.  It gets no pip of its own (ensurepip takes
    seconds): this pip installs into it (``pip --python``), or, where this pip is too old
    for that, the environment's own."""
    t = time.monotonic()
    venv = s.tmp / "venv"
    py = venv / "bin" / "python"
    todo = ["install", "-q", "--no-compile", str(wheel)] + (NOTEBOOK_DEPS if notebook else [])
    proc = s.run([sys.executable, "-m", "venv", "--without-pip", venv], env=_pip_env())
    if proc.returncode == 0:
        proc = s.run([sys.executable, "-m", "pip", "--python", py] + todo, env=_pip_env(),
                     cwd=s.tmp)
        if proc.returncode != 0 and "no such option: --python" in proc.stderr:
            shutil.rmtree(venv)
            proc = s.run([sys.executable, "-m", "venv", venv], env=_pip_env())
            if proc.returncode == 0:
                proc = s.run([py, "-m", "pip"] + todo, env=_pip_env(), cwd=s.tmp)
    if not py.exists():
        s.record("a fresh virtual environment", False, _tail(proc.stderr))
        return None
    cfg = configparser.ConfigParser()
    cfg.read_string("[venv]\n" + (venv / "pyvenv.cfg").read_text())
    isolated = cfg.get("venv", "include-system-site-packages", fallback="false") == "false"
    return venv if s.record("the wheel installs in a fresh virtual environment (no system "
                            "site-packages)", proc.returncode == 0 and isolated,
                            _tail(proc.stderr), time.monotonic() - t) else None


def _smoke(s: Smoke, venv: pathlib.Path, src: pathlib.Path, notebook: bool) -> None:
    env = _student_env(venv, s.tmp)
    work = s.tmp / "work"
    work.mkdir()
    py, exe = venv / "bin" / "python", venv / "bin" / "symgrad"
    s.record(f"no `dot` on PATH ({env['PATH']})", shutil.which("dot", path=env["PATH"]) is None)

    t = time.monotonic()
    code = ("import importlib.util, symgrad, symgrad.nn, symgrad.optim, symgrad.autograd, "
            "symgrad_cli; print(symgrad.__file__); print(importlib.util.find_spec('cli'))")
    p = s.run([py, "-c", code], env=env, cwd=work)
    lines = p.stdout.split()
    ok = (p.returncode == 0 and len(lines) == 2 and lines[0].startswith(str(venv))
          and lines[1] == "None")
    s.record("import symgrad, symgrad.nn, symgrad.optim, symgrad.autograd (from the "
             "environment; no top-level `cli`)", ok, "" if ok else _tail(p.stdout + p.stderr),
             time.monotonic() - t)

    p = s.run([exe, "--help"], env=env, cwd=work)
    s.record("symgrad --help", p.returncode == 0 and all(
        c in p.stdout for c in ("diff", "draw", "check")), _tail(p.stderr))

    t = time.monotonic()
    p = s.run([exe, "diff", EXPR] + POINT, env=env, cwd=work)
    ok = p.returncode == 0 and "∂f/∂x = 10*x" in p.stdout and "40" in p.stdout
    s.record("symgrad diff: ∂f/∂x = 10*x, 40 at the point", ok,
             "" if ok else f"exit {p.returncode}: {_tail(p.stdout + p.stderr)}",
             time.monotonic() - t)

    t = time.monotonic()
    svg = work / "g.svg"
    p = s.run([exe, "draw", EXPR] + POINT + ["-o", svg], env=env, cwd=work)
    detail = f"exit {p.returncode}: {_tail(p.stderr)}"
    if p.returncode == 0 and svg.is_file():
        text = svg.read_text(encoding="utf-8", errors="replace")
        try:
            root = ET.fromstring(text.encode("utf-8"))
            detail = "" if "<svg" in text and root.tag.endswith("svg") else f"root {root.tag}"
            shown = {"".join(e.itertext()).strip() for e in root.iter()
                     if e.tag.endswith("}text")}
            missing = [label for label in ("AddBackward0", "MulBackward0", "AccumulateGrad",
                                           "grad = 40", "Forward pass", "Legend")
                       if label not in shown]
            detail = detail or (f"labels not shown: {missing}" if missing else "")
        except ET.ParseError as e:
            detail = f"not well-formed XML: {e}"
    s.record("symgrad draw -o g.svg without dot (a valid SVG, every label shown)",
             not detail, detail,
             time.monotonic() - t)

    p = s.run([exe, "check", "sin(x**2)", "--grad", "x=cos(x**2)"], env=env, cwd=work)
    s.record("symgrad check of a wrong gradient: exit 1, WRONG",
             p.returncode == 1 and "WRONG" in p.stdout,
             f"exit {p.returncode}: {_tail(p.stdout + p.stderr)}")

    png = work / "g.png"
    p = s.run([exe, "draw", EXPR] + POINT + ["-o", png], env=env, cwd=work)
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    if p.returncode == 0:
        ok = png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        s.record("symgrad draw -o g.png without dot renders a PNG", ok, "" if ok else "no PNG")
    else:
        ok = (p.returncode == 2 and len(err) == 1 and "Traceback" not in p.stderr
              and "install" in err[0] and not png.exists())
        s.record("symgrad draw -o g.png without dot: exit 2, one line saying what to "
                 "install", ok, f"exit {p.returncode}: {err}")
        if ok:
            print(f"      {err[0][:110]}...")

    if notebook:
        t = time.monotonic()
        p = s.run([py, src / "tests" / "notebook" / "lesson_check.py",
                   src / "examples" / "lesson.ipynb", "--workdir", work], env=env, cwd=work)
        found = [ln for ln in p.stdout.splitlines() if ln.startswith("notebook:")]
        s.record("the lesson notebook runs headless, outputs checked", p.returncode == 0,
                 "\n      ".join([""] + found) if found else _tail(p.stdout + p.stderr),
                 time.monotonic() - t)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--no-notebook", action="store_true",
                        help="skip the notebook (no nbclient/ipykernel in the environment)")
    args = parser.parse_args(argv)
    compiled = os.environ.get("SYMGRAD_REQUIRE_COMPILED") == "1"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="symgrad-smoke-"))
    s = Smoke(tmp)
    pending = None
    try:
        src = tmp / "src"
        t = time.monotonic()
        files = clean_copy(ROOT, src)
        s.record(f"clean copy of the tree ({len(files)} files)", bool(files), "",
                 time.monotonic() - t)
        wheel, pending = _build(s, src, compiled)
        venv = wheel and _make_venv(s, wheel, not args.no_notebook)
        if pending:
            _check_sdist_wheel(s, wheel, pending)
        if venv:
            _smoke(s, venv, src, not args.no_notebook)
    except (OSError, subprocess.SubprocessError, RuntimeError) as e:  # a timeout, a full disk
        s.record("the smoke test ran to its end", False, f"{type(e).__name__}: {e}")
    finally:
        if pending and pending[0].poll() is None:
            pending[0].kill()
            pending[0].wait()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    failed = [name for name, ok in s.results if not ok]
    took = time.monotonic() - s.started
    if failed:
        print(f"wheel smoke: FAIL ({len(failed)} of {len(s.results)} checks failed, "
              f"{took:.0f} s): " + "; ".join(failed))
        return 1
    print(f"wheel smoke: PASS ({len(s.results)} checks, {took:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
