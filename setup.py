"""What goes into the wheel, found from the tree (nothing listed by hand), and the optional
compiled modules.  Metadata and dependencies are in pyproject.toml.

- Packages: every folder of ``symgrad/`` with an ``__init__.py``, and ``cli/`` installed
  as ``symgrad_cli`` (never as a top-level ``cli``).
- Package data: every other file inside a package's folder (templates, scripts, fonts,
  WebAssembly, ...), except Python sources, bytecode, compiled extensions, C sources and
  hidden files.  A file the library reads at run time is installed the moment it is
  added to the tree.
- Compiled modules: optional.  The Python modules ``symgrad/api/compiled.py`` names in
  ``MODULES`` (the engine, ``apply``) are compiled by Cython from their own ``.py`` source
  when Cython and a C compiler are there (the wheel keeps the ``.py`` files beside them);
  otherwise, or if the build fails, symgrad installs as pure Python, with a warning.  The
  C that Cython generates goes to ``build/``, never into the tree or an sdist.

``tests/architecture/test_packaging.py`` imports this file (``setup()`` runs only as a
script, which is how setuptools runs it) and checks the lists against the tree.
"""
import ast
import compileall
import fnmatch
import os
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

#: Import name -> folder, for the folders whose import name differs.
PACKAGE_DIR = {"symgrad_cli": "cli"}
#: Top-level folders whose packages are installed (under the name PACKAGE_DIR gives).
TOP_LEVEL = ("symgrad", "cli")
#: Files in a package folder that are not package data.
NOT_DATA = ("*.py", "*.pyc", "*.pyo", "*.pyd", "*.so", "*.dylib", "*.dll", "*.o", "*.obj",
            "*.c", "*.h", "*.c.h", "*~", "*.swp", "*.orig", "*.rej")

#: Where the tuple of modules to compile is written (read here without importing symgrad).
COMPILED_LIST = "symgrad/api/compiled.py"
#: Cython's options: the modules stay plain Python (annotations are not C types), so the
#: compiled module behaves as its source does; no ``__test__`` copy of the docstrings
#: (pytest finds the doctests on the functions themselves).
CYTHON_DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True,
                     "autotestdict": False}


def _import_name(folder_name: str) -> str:
    """``cli.x`` -> ``symgrad_cli.x``; ``symgrad.x`` unchanged."""
    top, _, rest = folder_name.partition(".")
    for name, folder in PACKAGE_DIR.items():
        if top == folder:
            return name + ("." + rest if rest else "")
    return folder_name


def _folder(package: str) -> str:
    """The folder (relative, ``/``-separated) that holds ``package``."""
    top, _, rest = package.partition(".")
    return "/".join([PACKAGE_DIR.get(top, top)] + (rest.split(".") if rest else []))


def packages(root: str = ".") -> list:
    """Every package to install, by import name, found from the ``__init__.py`` files."""
    found = find_packages(where=root, include=[p for t in TOP_LEVEL for p in (t, t + ".*")])
    return sorted(_import_name(p) for p in found)


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__pycache__"


def package_data(root: str = ".") -> dict:
    """``{package: [file, ...]}``: each package's data files, relative to its folder.

    A package owns the files of its folder and of its sub-folders that are not packages
    themselves (``symgrad/_csrc/`` belongs to ``symgrad``).
    """
    pkgs = packages(root)
    folders = {_folder(p) for p in pkgs}
    data = {}
    for pkg in pkgs:
        base = os.path.join(root, _folder(pkg))
        files = []
        for here, dirs, names in os.walk(base):
            rel_here = os.path.relpath(here, root).replace(os.sep, "/")
            dirs[:] = sorted(d for d in dirs if not _hidden(d)
                             and f"{rel_here}/{d}" not in folders)
            for name in sorted(names):
                if _hidden(name) or any(fnmatch.fnmatch(name, p) for p in NOT_DATA):
                    continue
                files.append(os.path.relpath(os.path.join(here, name), base)
                             .replace(os.sep, "/"))
        if files:
            data[pkg] = sorted(files)
    return data


def compiled_modules(root: str = ".") -> list:
    """The names of the modules to compile: ``MODULES`` in ``symgrad/api/compiled.py``."""
    tree = ast.parse(open(os.path.join(root, COMPILED_LIST), encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] \
                == ["MODULES"]:
            return list(ast.literal_eval(node.value))
    raise RuntimeError(f"{COMPILED_LIST} has no MODULES")


def _warn(message: str) -> None:
    print(f"warning: {message}; symgrad is installed as pure Python (slower on scalar code)",
          file=sys.stderr)


class BuildExt(build_ext):
    """Cythonizes the compiled modules' ``.py`` sources right before they are built (not
    when an sdist is made: the sdist carries the ``.py`` files only); no Cython, or a
    failed build, leaves pure Python.

    An editable install (``pip install -e .``) also compiles the sources' bytecode, as a
    regular install does: on a machine that sets PYTHONDONTWRITEBYTECODE Python would
    otherwise recompile every module of symgrad on every start (70 ms of each command)."""

    def build_extensions(self):
        try:
            from Cython.Build import cythonize  # why: optional, only where it is installed
        except ImportError:
            _warn("Cython is not installed")
            self.extensions = []
            return
        try:
            c_sources = {e.name: e.sources for e in cythonize(
                self.extensions, build_dir="build/cython", quiet=True,
                compiler_directives=CYTHON_DIRECTIVES)}
        except Exception as e:  # noqa: BLE001 - any failure of the optional step
            _warn(f"Cython could not compile symgrad's modules ({e})")
            self.extensions = []
            return
        for ext in self.extensions:  # (setuptools' own objects, which it has prepared)
            ext.sources = c_sources[ext.name]
            ext.optional = True  # a C compiler that fails: a warning, pure Python
        super().build_extensions()

    def run(self):
        super().run()
        if self.inplace:
            for folder in TOP_LEVEL:
                compileall.compile_dir(folder, quiet=1)


def extensions() -> list:
    """The modules to compile from their ``.py`` source, unless
    ``SYMGRAD_BUILD_COMPILED=0`` asks for a pure-Python build
    (tests/architecture/test_packaging.py: a wheel's file list without a compiler run)."""
    if os.environ.get("SYMGRAD_BUILD_COMPILED", "1") == "0":
        return []
    return [Extension(name, [name.replace(".", "/") + ".py"], optional=True)
            for name in compiled_modules()]


if __name__ == "__main__":
    setup(packages=packages(),
          package_dir=dict(PACKAGE_DIR),
          package_data=package_data(),
          # only what package_data names: a wheel built from the tree and one built from
          # an sdist hold the same files (the C sources stay out of both).
          include_package_data=False,
          ext_modules=extensions(),
          cmdclass={"build_ext": BuildExt})
