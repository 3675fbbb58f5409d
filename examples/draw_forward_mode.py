"""Forward mode drawn: f(x, y) = sin(x·y) at x = 1, y = 2, in the direction ẋ = 1, ẏ = 0.

Draws every value's tangent (ẋ) with the local derivative on each edge, and the tangents
flowing forward one frame per operation, beside the backward pass's frames: into
examples/gallery/sin_xy_forward_mode.png and .svg, sin_xy_forward_step_1.png, and
examples/gallery/sin_xy_steps/ (steps.html shows both players side by side).  The same
from the command line:

    symgrad draw "sin(x*y)" --mode forward --at x=1 --at y=2 -o fwd.png --steps frames/
"""
import pathlib

import symgrad as torch
from symgrad.drawing import draw_tangent_steps, draw_tangents
from symgrad.drawing.tangents import players_page

OUT = pathlib.Path(__file__).parent / "gallery"

x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
y = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
f = torch.sin(x * y)

direction = {"x": 1.0, "y": 0.0}
diagram = draw_tangents(f, direction, title="f(x, y) = sin(x·y)   at x = 1, y = 2")
for suffix in (".png", ".svg"):
    print("wrote", diagram.render(OUT / f"sin_xy_forward_mode{suffix}"))

forward = draw_tangent_steps(f, OUT / "sin_xy_steps", direction=direction)
backward = torch.draw_steps(f, OUT / "sin_xy_steps" / "reverse", html_player=False)
page = players_page([("Forward mode: tangents flow forward", forward),
                     ("Reverse mode: gradients flow back", backward)])
(OUT / "sin_xy_steps" / "steps.html").write_text(page, encoding="utf-8")
print("wrote", OUT / "sin_xy_steps" / "steps.html")
frame = torch.drawing.Diagram(forward.sources[1], "forward")
print("wrote", frame.render(OUT / "sin_xy_forward_step_1.png"))
