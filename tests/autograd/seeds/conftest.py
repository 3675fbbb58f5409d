"""The snippet files here are data for ``tests/test_seeds.py``, not modules to import.

``--doctest-modules`` would otherwise import (and so run) every one of them.
"""

collect_ignore_glob = ["[0-9]*.py"]
