"""Layer 7, drawings: the graph model read from the public IR and the op records, the DOT
text of backward, forward and side-by-side drawings (and torchviz's ``make_dot``), themes,
step-by-step frames, rendering through Graphviz (the ``dot`` program or WebAssembly) and
TikZ export; forward mode's tangents (``draw_tangents``, ``draw_tangent_steps``).
``symgrad.draw``, ``symgrad.draw_steps`` and ``symgrad.make_dot`` come from here.  May import every layer below (op table, IR, engine, tensor API); never the CLI.
"""
from .backends import ExecutableNotFound, RenderError, available_backends
from .backward import backward_graph
from .both import both_graph
from .diagram import Diagram, draw, make_dot
from .forward import forward_graph
from .model import GraphModel
from .steps import StepFrames, draw_steps
from .tangents import draw_tangent_steps, draw_tangents
from .themes import THEMES, Theme
from .torchviz import make_dot_from_trace, torchviz_graph
from .values import format_value

__all__ = ["draw", "draw_steps", "make_dot", "make_dot_from_trace", "Diagram", "StepFrames", "RenderError",
           "ExecutableNotFound", "available_backends", "backward_graph", "forward_graph",
           "both_graph", "torchviz_graph", "GraphModel", "THEMES", "Theme", "format_value",
           "draw_tangents", "draw_tangent_steps"]
