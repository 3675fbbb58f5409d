"""One graph in every theme: light (default), dark (projectors), print (greyscale
photocopies) and colorblind (Okabe-Ito palette), top-to-bottom layout for handouts.
"""
import pathlib

import symgrad as torch

OUT = pathlib.Path(__file__).parent / "gallery"

A = torch.tensor(2., requires_grad=True)
B = torch.tensor(.5, requires_grad=True)
E = torch.tensor(1., requires_grad=True)
F = (A * B).exp() + E
F.backward()

for theme in ("light", "dark", "print", "colorblind"):
    diagram = torch.draw(F, kind="both", theme=theme, rankdir="TB",
                         title=f"theme={theme!r}")
    for suffix in (".png", ".svg"):
        print("wrote", diagram.render(OUT / f"themes_{theme}{suffix}"))
