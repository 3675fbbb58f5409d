"""Rewrite the golden DOT files of the drawings: ``python tools/regen_golden.py``.

Run it from the repository root after a deliberate change to what drawings look like,
then read ``git diff tests/drawing/golden`` (and render a few: ``dot -Tpng``) before committing.
The tests only compare against these files; nothing else writes them.
"""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "drawing")]

from draw_seeds import GOLDEN, GOLDEN_CASES, golden_source  # noqa: E402


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in sorted(GOLDEN_CASES):
        path = GOLDEN / name
        text = golden_source(name)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if text != old:
            path.write_text(text, encoding="utf-8")
            print("wrote" if old is None else "updated", path.relative_to(ROOT))
    stale = sorted(p.name for p in GOLDEN.glob("*.dot") if p.name not in GOLDEN_CASES)
    for name in stale:
        print("no longer a golden case (delete it?):", GOLDEN / name)


if __name__ == "__main__":
    main()
