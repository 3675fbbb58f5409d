"""Only the optional C extension lives here; everything else is in pyproject.toml."""
import compileall

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    """An editable install (``pip install -e .``) also compiles the sources' bytecode, as a
    regular install does: on a machine that sets PYTHONDONTWRITEBYTECODE Python would
    otherwise recompile every module of symgrad on every start (70 ms of each command)."""

    def run(self):
        super().run()
        if self.inplace:
            for folder in ("symgrad", "cli"):
                compileall.compile_dir(folder, quiet=1)


# optional: without a C compiler symgrad installs and runs in pure Python (slower on
# scalar code); see symgrad/api/compiled.py.
# symgrad/_speedups.c includes its parts from symgrad/_csrc/ (one translation unit).
_PARTS = ["symgrad/_csrc/common.c.h", "symgrad/_csrc/apply.c.h", "symgrad/_csrc/backward.c.h"]
setup(ext_modules=[Extension("symgrad._speedups", ["symgrad/_speedups.c"], depends=_PARTS,
                             optional=True)],
      cmdclass={"build_ext": BuildExt})
