"""An MLP with batch norm (makemore's lesson, smaller): `symgrad trace examples/models/batchnorm_mlp.py --var loss -o bn.png`."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.Tanh(), nn.Linear(32, 3))
x = torch.randn(16, 10)
y = torch.randint(0, 3, (16,))
loss = nn.functional.cross_entropy(model(x), y)
