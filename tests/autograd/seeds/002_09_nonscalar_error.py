# Reconstructed from the tutorial's prose (its code is shown only as images).
x = torch.arange(4.0, requires_grad=True)
y = x * x
y.backward()
