"""Only the optional C extension lives here; everything else is in pyproject.toml."""
from setuptools import Extension, setup

# optional: without a C compiler symgrad installs and runs in pure Python (slower on
# scalar code); see symgrad/_compiled.py.
setup(ext_modules=[Extension("symgrad._speedups", ["symgrad/_speedups.c"], optional=True)])
