"""Only the optional C extension lives here; everything else is in pyproject.toml."""
from setuptools import Extension, setup

# optional: without a C compiler symgrad installs and runs in pure Python (slower on
# scalar code); see symgrad/api/compiled.py.
# symgrad/_speedups.c includes its parts from symgrad/_csrc/ (one translation unit).
_PARTS = ["symgrad/_csrc/common.c.h", "symgrad/_csrc/apply.c.h", "symgrad/_csrc/backward.c.h"]
setup(ext_modules=[Extension("symgrad._speedups", ["symgrad/_speedups.c"], depends=_PARTS,
                             optional=True)])
