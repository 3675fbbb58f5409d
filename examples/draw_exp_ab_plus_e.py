"""C = A·B, D = exp(C), F = D + E: the graph of the next_functions tutorial, forward and
backward side by side, plus the backward pass step by step (one frame per node the engine
runs, in PyTorch's order) into examples/gallery/exp_ab_plus_e_steps/.
"""
import pathlib

import symgrad as torch

OUT = pathlib.Path(__file__).parent / "gallery"

A = torch.tensor(2., requires_grad=True)
B = torch.tensor(.5, requires_grad=True)
E = torch.tensor(1., requires_grad=True)
C = A * B
D = C.exp()
F = D + E

title = "C = A·B,   D = exp(C),   F = D + E"
# Step by step first: draw_steps runs the backward pass itself (like F.backward()).
frames = torch.draw_steps(F, OUT / "exp_ab_plus_e_steps", show_local=True)
print("wrote", len(frames), "frames and", frames.paths[-1])

drawings = {
    "both": torch.draw(F, kind="both", show_local=True, title=title),
    "backward": torch.draw(F, show_local=True, show_edge_grads=True, title=title),
}
for kind, diagram in drawings.items():
    for suffix in (".png", ".svg"):
        print("wrote", diagram.render(OUT / f"exp_ab_plus_e_{kind}{suffix}"))
# The last frame as a PNG for slides.
last = list(frames)[-1]
print("wrote", last.render(OUT / "exp_ab_plus_e_steps_last.png"))
