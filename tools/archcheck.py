#!/usr/bin/env python3
"""Architecture figures of a Python package tree, checked against a committed baseline.

Measures, over the packages given (default: ``symgrad`` and ``cli``, the latter installed
as ``symgrad_cli``):

1. module-level import cycles (imports that run at import time, parent packages'
   ``__init__`` included as Python runs them; ``if TYPE_CHECKING:`` blocks ignored);
2. imports inside function bodies, and those without a ``#`` comment saying why on the
   same line or on the comment line directly above (a bare ``noqa``/``type: ignore``
   pragma is not a reason);
3. source files (``.py``, ``.c``, ``.h``, ``.pyx``, ``.pxd``) longer than the line limit, except
   paths matching the baseline's ``exempt_globs``;
4. public names bound in a package ``__init__.py`` that hide a submodule of the same name
   (``from .draw import draw`` next to ``draw.py``), except the baseline's
   ``shadow_allowed``;
5. when the root holds symgrad's op table, its vocabulary (``tools/vocabulary.py``, run in
   a child interpreter on that tree): code above ``symgrad/ops`` deciding by an op's name
   string, op records named outside ``ops/`` in the layers that interpret the table
   generically (engine, IR, drawing, ``func``: an op's specifics are side tables beside
   it), the methods of each rule backend (and those named after an op), and the lines of
   hand-written C.

The baseline (``tools/archcheck_baseline.json``) holds the limits we commit to; it is
edited by hand.  Without ``--check`` it is still read, for ``line_limit``,
``exempt_globs`` and ``shadow_allowed``.

Usage::

    python tools/archcheck.py                       # readable report
    python tools/archcheck.py --json                # machine-readable
    python tools/archcheck.py --check tools/archcheck_baseline.json   # exit 1 if worse
    python tools/archcheck.py --root /other/repo pkg_dir other_dir=installed_name
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import io
import json
import subprocess
import sys
import tokenize
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASELINE = Path(__file__).resolve().parent / "archcheck_baseline.json"
DEFAULT_PACKAGES = ["symgrad", "cli"]
INSTALLED_NAMES = {"cli": "symgrad_cli"}  # directory -> package name it is installed as
SOURCE_SUFFIXES = {".py", ".c", ".h", ".pyx", ".pxd"}
PRAGMAS = ("noqa", "type:", "pragma:", "pylint:", "isort:", "fmt:", "mypy:")
DEFAULT_CONFIG: dict[str, Any] = {"line_limit": 800, "exempt_globs": [], "shadow_allowed": []}
FIGURES = [("cycles", "max_cycles"), ("function_imports", "max_function_imports"),
           ("function_imports_without_reason", "max_function_imports_without_reason"),
           ("files_over_limit", "max_files_over_limit"), ("shadowed", "max_shadowed"),
           ("op_names_outside_ops", "max_op_names_outside_ops"),
           ("op_records_in_interpreters", "max_op_records_in_interpreters"),
           ("backend_methods_named_after_ops", "max_backend_methods_named_after_ops"),
           ("max_backend_methods", "max_backend_methods"),
           ("hand_written_c_lines", "max_hand_written_c_lines")]
VOCABULARY = Path(__file__).resolve().parent / "vocabulary.py"


class Module:
    """One parsed ``.py`` file: dotted name, path relative to the root, AST, comments."""

    def __init__(self, name: str, rel: str, is_package: bool, source: str) -> None:
        self.name, self.rel, self.is_package = name, rel, is_package
        self.tree = ast.parse(source, filename=rel)
        self.lines = source.splitlines()
        self.comments: dict[int, str] = {}
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                self.comments[tok.start[0]] = tok.string.lstrip("#").strip()

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]

    def display(self) -> str:
        return self.name.replace(".", "/") + "/__init__" if self.is_package else self.name


def glob_match(rel: str, pattern: str) -> bool:
    """Match a posix path against a glob segment by segment (``*`` stays in one folder,
    a ``**`` segment matches any number of folders)."""
    def match(parts: list[str], pats: list[str]) -> bool:
        if not pats:
            return not parts
        if pats[0] == "**":
            return any(match(parts[i:], pats[1:]) for i in range(len(parts) + 1))
        return bool(parts) and fnmatch.fnmatchcase(parts[0], pats[0]) and \
            match(parts[1:], pats[1:])
    return match(rel.split("/"), pattern.strip("/").split("/"))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_time_statements(body: list[ast.stmt], classes: bool = True) -> list[ast.stmt]:
    """Statements run when the module is imported: module level, inside compound statements
    and (if ``classes``) class bodies, not inside functions nor ``if TYPE_CHECKING:``."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue  # the def binds its name; its body runs later
        if isinstance(stmt, ast.ClassDef) and not classes:
            continue
        if isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
            out.extend(_import_time_statements(stmt.orelse, classes))
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(stmt, field, []):
                if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    out.extend(_import_time_statements(child.body, classes))
                elif isinstance(child, ast.stmt):
                    out.extend(_import_time_statements([child], classes))
    return out


def _bound_names(stmt: ast.stmt) -> list[str]:
    """Names an import-time statement binds in the module namespace (imports excluded)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in stmt.items if item.optional_vars]
    return [n.id for t in targets for n in ast.walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


class Tree:
    """The modules of the packages under ``root`` and their figures."""

    def __init__(self, root: Path, packages: list[str], config: dict[str, Any]) -> None:
        self.root, self.config = root, {**DEFAULT_CONFIG, **config}
        self.modules: dict[str, Module] = {}
        self.extensions: set[str] = set()  # compiled submodules (from .c/.pyx sources)
        self.sizes: dict[str, int] = {}
        self.errors: list[str] = []
        for spec in packages:
            directory, _, name = spec.partition("=")
            self._scan(root / directory, name or INSTALLED_NAMES.get(directory, directory))

    def _scan(self, pkg_dir: Path, pkg_name: str) -> None:
        for path in sorted(pkg_dir.rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(self.root).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            self.sizes[rel] = len(text.splitlines())
            parts = [pkg_name, *path.relative_to(pkg_dir).with_suffix("").parts]
            if path.suffix in (".c", ".pyx"):
                self.extensions.add(".".join(parts))
            if path.suffix != ".py":
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            try:
                self.modules[name] = Module(name, rel, is_package, text)
            except (SyntaxError, tokenize.TokenError) as exc:
                self.errors.append(f"{rel}: cannot parse: {exc}")

    # -- import resolution -------------------------------------------------------------
    def _base(self, mod: Module, node: ast.ImportFrom) -> str | None:
        """Absolute module name of ``from <base> import ...``."""
        if not node.level:
            return node.module
        parts = mod.package.split(".")
        if node.level - 1 >= len(parts):
            return None
        parts = parts[:len(parts) - node.level + 1]
        return ".".join(parts + ([node.module] if node.module else []))

    def edges_of(self, mod: Module, node: ast.Import | ast.ImportFrom) -> list[str]:
        """Internal modules whose code must have run (or be running) for ``node`` to work.

        Importing ``a.b.c`` runs ``a`` and ``a.b`` first, except packages that enclose
        ``mod`` (they are already in ``sys.modules``).  ``from P import x`` where P encloses
        ``mod`` needs P's code only for names that are not submodules."""
        enclosing = {mod.package.rsplit(".", i)[0] for i in range(mod.package.count(".") + 1)}
        targets: list[str] = []

        def chain(name: str, need_last: bool) -> None:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix not in enclosing or (i == len(parts) and need_last):
                    targets.append(prefix)

        if isinstance(node, ast.Import):
            for alias in node.names:
                chain(alias.name, True)
        else:
            base = self._base(mod, node)
            if base is None:
                return []
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in self.modules]
            compiled = [a for a in node.names if f"{base}.{a.name}" in self.extensions]
            chain(base, len(subs) + len(compiled) < len(node.names))
            targets.extend(subs)
        seen: list[str] = []
        for t in targets:
            if t in self.modules and t not in seen:
                seen.append(t)
        return seen

    # -- figures -----------------------------------------------------------------------
    def graph(self) -> dict[str, dict[str, int]]:
        """Import-time edges: module -> {imported module: first line}."""
        graph: dict[str, dict[str, int]] = {name: {} for name in self.modules}
        for mod in self.modules.values():
            for stmt in _import_time_statements(mod.tree.body):
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    for target in self.edges_of(mod, stmt):
                        graph[mod.name].setdefault(target, stmt.lineno)
        return graph

    def cycles(self) -> list[dict[str, Any]]:
        graph = self.graph()
        out = []
        for scc in strongly_connected(graph):
            if len(scc) > 1 or scc[0] in graph[scc[0]]:
                loop = shortest_loop(graph, scc)
                steps = [f"{self.modules[a].display()} -> {self.modules[b].display()} "
                         f"({self.modules[a].rel}:{graph[a][b]})"
                         for a, b in zip(loop, loop[1:])]
                out.append({"members": scc, "example": steps})
        return out

    def function_imports(self) -> list[dict[str, Any]]:
        out = []
        for mod in self.modules.values():
            for func in ast.walk(mod.tree):
                if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for stmt in func.body:
                    for node in ast.walk(stmt):
                        if isinstance(node, (ast.Import, ast.ImportFrom)):
                            out.append(self._function_import(mod, node))
        # nested functions are walked twice; keep each statement once
        unique = {(d["file"], d["line"]): d for d in out}
        return [unique[k] for k in sorted(unique)]

    def _function_import(self, mod: Module, node: ast.Import | ast.ImportFrom) -> dict:
        if isinstance(node, ast.Import):
            module = ", ".join(a.name for a in node.names)
        else:
            base = self._base(mod, node) or "." * node.level + (node.module or "")
            subs = [f"{base}.{a.name}" for a in node.names]
            module = ", ".join(dict.fromkeys(s if s in self.modules else base for s in subs))
        lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        reasons = [mod.comments[i] for i in lines if i in mod.comments]
        above = node.lineno - 1
        if above in mod.comments and mod.lines[above - 1].lstrip().startswith("#"):
            reasons.append(mod.comments[above])
        has_reason = any(r and not r.lower().startswith(PRAGMAS) for r in reasons)
        return {"file": mod.rel, "line": node.lineno, "module": module,
                "statement": ast.unparse(node), "has_reason": has_reason}

    def files(self) -> dict[str, Any]:
        limit, globs = self.config["line_limit"], self.config["exempt_globs"]
        big = {rel: n for rel, n in self.sizes.items() if n > limit}
        exempt = {rel: n for rel, n in big.items() if any(glob_match(rel, g) for g in globs)}
        return {"line_limit": limit, "sizes": self.sizes, "exempt": exempt,
                "over_limit": {rel: n for rel, n in big.items() if rel not in exempt}}

    def shadowed(self) -> list[dict[str, Any]]:
        out = []
        for pkg in (m for m in self.modules.values() if m.is_package):
            for name, line, what in self._bindings(pkg):
                sub = f"{pkg.name}.{name}"
                if (name.startswith("_") or sub not in self.modules or what == sub
                        or sub in self.config["shadow_allowed"]):
                    continue
                out.append({"file": pkg.rel, "line": line, "name": sub,
                            "bound_to": what or "a value"})
        return out

    def _bindings(self, mod: Module) -> list[tuple[str, int, str | None]]:
        """(name, line, module it is bound to or None for values) at import time."""
        out: list[tuple[str, int, str | None]] = []
        for stmt in _import_time_statements(mod.tree.body, classes=False):
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    out.append((a.asname or a.name.partition(".")[0], stmt.lineno,
                                a.name if a.asname else a.name.partition(".")[0]))
            elif isinstance(stmt, ast.ImportFrom):
                base = self._base(mod, stmt) or ""
                for a in stmt.names:
                    if a.name == "*":
                        out.extend((n, stmt.lineno, f"{base}.{n}")
                                   for n in self._star_names(base))
                    else:
                        out.append((a.asname or a.name, stmt.lineno, f"{base}.{a.name}"))
            else:
                out.extend((n, stmt.lineno, None) for n in _bound_names(stmt))
        return out

    def _star_names(self, name: str) -> list[str]:
        """Names ``from <name> import *`` binds, for an internal module (``__all__`` if it
        is a literal, else its public names).  They are the module's own objects, not
        submodules of the importing package, unless the module re-imports one."""
        mod = self.modules.get(name)
        if mod is None:
            return []
        for stmt in mod.tree.body:
            if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                try:
                    return list(ast.literal_eval(stmt.value))
                except ValueError:
                    break
        return [n for n, _, _ in self._bindings(mod) if not n.startswith("_")]


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components with sorted members, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                scc = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    scc.append(member)
                    if member == node:
                        break
                out.append(sorted(scc))
    return sorted(out)


def shortest_loop(graph: dict[str, dict[str, int]], scc: list[str]) -> list[str]:
    """A shortest path from ``scc[0]`` back to itself inside the component."""
    start, members = scc[0], set(scc)
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node]):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if child in members and child not in parent:
                parent[child] = node
                queue.append(child)
    return [start]


def measure(root: Path = ROOT, packages: list[str] | None = None,
            config: dict[str, Any] | None = None) -> dict[str, Any]:
    """All figures of the tree as a JSON-ready dict."""
    tree = Tree(root, packages or DEFAULT_PACKAGES, config or {})
    cycles, imports = tree.cycles(), tree.function_imports()
    files, shadowed = tree.files(), tree.shadowed()
    vocab = vocabulary(root)
    summary = {"cycles": len(cycles), "function_imports": len(imports),
               "function_imports_without_reason": sum(not i["has_reason"] for i in imports),
               "files_over_limit": len(files["over_limit"]), "shadowed": len(shadowed),
               "parse_errors": len(tree.errors)}
    summary.update({figure: vocab.get(figure, 0) for figure, _ in FIGURES[5:]})
    return {"summary": summary, "cycles": cycles, "function_imports": imports,
            "files": files, "shadowed": shadowed, "parse_errors": tree.errors,
            "vocabulary": vocab}


def vocabulary(root: Path) -> dict[str, Any]:
    """symgrad's vocabulary figures (``tools/vocabulary.py``) of the tree at ``root``, in a
    child interpreter (it imports that tree); empty when the root has no op table."""
    if not (root / "symgrad" / "ops" / "record.py").is_file() or not VOCABULARY.is_file():
        return {}
    done = subprocess.run([sys.executable, str(VOCABULARY), "--root", str(root), "--json"],
                          capture_output=True, text=True, cwd=root, check=False)
    if done.returncode:
        raise RuntimeError(f"tools/vocabulary.py failed:\n{done.stderr}")
    return json.loads(done.stdout)


def check(result: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """One line per figure that is worse than the baseline's limit."""
    summary = result["summary"]
    problems = [f"{figure.replace('_', ' ')}: {summary[figure]} > {key} {baseline[key]}"
                for figure, key in FIGURES if key in baseline and summary[figure] > baseline[key]]
    return problems + list(result["parse_errors"])


def summary_line(result: dict[str, Any]) -> str:
    s = result["summary"]
    line = (f"cycles {s['cycles']}, function imports {s['function_imports']} "
            f"({s['function_imports_without_reason']} without a reason), files over "
            f"{result['files']['line_limit']} lines {s['files_over_limit']}, "
            f"shadowed submodules {s['shadowed']}")
    if result.get("vocabulary"):
        line += (f", op names outside ops/ {s['op_names_outside_ops']}, op records named "
                 f"outside ops/ {s['op_records_in_interpreters']}, backend methods "
                 f"named after ops {s['backend_methods_named_after_ops']} (at most "
                 f"{s['max_backend_methods']} methods a backend), hand-written C "
                 f"{s['hand_written_c_lines']} lines")
    return line


def format_report(result: dict[str, Any]) -> str:
    """The human-readable report."""
    out: list[str] = []
    cycles = result["cycles"]
    out.append(f"== Module-level import cycles: {len(cycles)}")
    for i, cycle in enumerate(cycles, 1):
        out.append(f"  cycle {i} ({len(cycle['members'])} modules): "
                   + ", ".join(cycle["members"]))
        out.extend(f"      {step}" for step in cycle["example"])
    imports = result["function_imports"]
    missing = [i for i in imports if not i["has_reason"]]
    out.append(f"\n== Imports inside functions: {len(imports)} ({len(missing)} without a reason)")
    for imp in imports:
        flag = "   " if imp["has_reason"] else "!! "
        out.append(f"  {flag}{imp['file']}:{imp['line']}  {imp['module']}  "
                   f"({imp['statement']})")
    if missing:
        out.append("  (!! = no '#' comment saying why on the line or the line above)")
    files = result["files"]
    out.append(f"\n== Files over {files['line_limit']} lines: {len(files['over_limit'])}")
    for rel, n in sorted(files["over_limit"].items(), key=lambda kv: -kv[1]):
        out.append(f"  {n:6d}  {rel}")
    for rel, n in sorted(files["exempt"].items(), key=lambda kv: -kv[1]):
        out.append(f"  {n:6d}  {rel}  (exempt)")
    out.append(f"\n== Shadowed submodules: {len(result['shadowed'])}")
    for s in result["shadowed"]:
        out.append(f"  {s['file']}:{s['line']}  {s['name']} is bound to {s['bound_to']}")
    vocab = result.get("vocabulary") or {}
    if vocab:
        out.append(f"\n== Op names decided on outside ops/: {vocab['op_names_outside_ops']}")
        out.extend(f"  {use}" for use in vocab["op_name_uses"])
        out.append("\n== Op records named outside ops/ (engine, IR, drawing, func): "
                   f"{vocab.get('op_records_in_interpreters', 0)}")
        out.extend(f"  {use}" for use in vocab.get("op_record_uses", ()))
        out.append("\n== Rule backends: methods (named after an op)")
        for label, m in vocab["backend_methods"].items():
            named = ", ".join(m["named_after_ops"]) or "none"
            out.append(f"  {m['methods']:4d}  {label} ({named})")
        out.append(f"\n== Hand-written C: {vocab['hand_written_c_lines']} lines")
    if result["parse_errors"]:
        out.append(f"\n== Files that could not be parsed: {len(result['parse_errors'])}")
        out.extend(f"  {e}" for e in result["parse_errors"])
    out.append("\n" + summary_line(result))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", default=DEFAULT_PACKAGES,
                        help="package directories under the root (DIR or DIR=NAME); "
                             "default: symgrad cli")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", type=Path, metavar="BASELINE",
                        help="exit 1 if a figure is worse than this baseline")
    args = parser.parse_args(argv)
    baseline_path = args.check or DEFAULT_BASELINE
    baseline = json.loads(baseline_path.read_text()) if baseline_path.exists() else {}
    if args.check and not args.check.exists():
        parser.error(f"baseline {args.check} not found")
    config = {k: baseline[k] for k in DEFAULT_CONFIG if k in baseline}
    result = measure(args.root.resolve(), args.packages, config)
    if args.check:
        problems = check(result, baseline)
        print("\n".join(problems) if problems else "archcheck: OK, " + summary_line(result))
        return 1 if problems else 0
    print(json.dumps(result, indent=2) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
