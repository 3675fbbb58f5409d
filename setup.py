"""What goes into the wheel, found from the tree (nothing listed by hand), and the optional C
extension.  Metadata and dependencies are in pyproject.toml.

- Packages: every folder of ``symgrad/`` with an ``__init__.py``, and ``cli/`` installed
  as ``symgrad_cli`` (never as a top-level ``cli``).
- Package data: every other file inside a package's folder (templates, scripts, fonts,
  WebAssembly, ...), except Python sources, bytecode, compiled extensions, the C sources
  of the extension and hidden files.  A file the library reads at run time is installed
  the moment it is added to the tree.
- ``symgrad._speedups``: optional; its sources (``symgrad/_speedups.c`` and the parts it
  includes from ``symgrad/_csrc/``) always go into an sdist so a wheel builds from it.

``tests/architecture/test_packaging.py`` imports this file (``setup()`` runs only as a
script, which is how setuptools runs it) and checks the lists against the tree.
"""
import compileall
import fnmatch
import os

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

#: Import name -> folder, for the folders whose import name differs.
PACKAGE_DIR = {"symgrad_cli": "cli"}
#: Top-level folders whose packages are installed (under the name PACKAGE_DIR gives).
TOP_LEVEL = ("symgrad", "cli")
#: Files in a package folder that are not package data.
NOT_DATA = ("*.py", "*.pyc", "*.pyo", "*.pyd", "*.so", "*.dylib", "*.dll", "*.o", "*.obj",
            "*.c", "*.h", "*.c.h", "*~", "*.swp", "*.orig", "*.rej")

# optional: without a C compiler symgrad installs and runs in pure Python (slower on
# scalar code); see symgrad/api/compiled.py.
# symgrad/_speedups.c includes its parts from symgrad/_csrc/ (one translation unit).
SPEEDUPS_SOURCES = ["symgrad/_speedups.c"]
SPEEDUPS_PARTS = ["symgrad/_csrc/common.c.h", "symgrad/_csrc/apply.c.h",
                  "symgrad/_csrc/backward.c.h"]


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


class BuildExt(build_ext):
    """An editable install (``pip install -e .``) also compiles the sources' bytecode, as a
    regular install does: on a machine that sets PYTHONDONTWRITEBYTECODE Python would
    otherwise recompile every module of symgrad on every start (70 ms of each command)."""

    def run(self):
        super().run()
        if self.inplace:
            for folder in TOP_LEVEL:
                compileall.compile_dir(folder, quiet=1)


class SDist(sdist):
    """The parts ``_speedups.c`` includes go into the sdist whatever the setuptools version
    (only newer ones add an extension's ``depends`` by themselves)."""

    def add_defaults(self):
        super().add_defaults()
        self.filelist.extend(SPEEDUPS_PARTS)


def extensions() -> list:
    """The C extension, unless ``SYMGRAD_BUILD_SPEEDUPS=0`` asks for a pure-Python build
    (tests/architecture/test_packaging.py: a wheel's file list without a compiler run)."""
    if os.environ.get("SYMGRAD_BUILD_SPEEDUPS", "1") == "0":
        return []
    return [Extension("symgrad._speedups", SPEEDUPS_SOURCES, depends=SPEEDUPS_PARTS,
                      optional=True)]


if __name__ == "__main__":
    setup(packages=packages(),
          package_dir=dict(PACKAGE_DIR),
          package_data=package_data(),
          # only what package_data names: a wheel built from the tree and one built from
          # an sdist hold the same files (the C sources stay out of both).
          include_package_data=False,
          ext_modules=extensions(),
          cmdclass={"build_ext": BuildExt, "sdist": SDist})
