import torch
display(torch.__version__)
