# Reconstructed from the tutorial's prose (its code is shown only as images).
x = torch.arange(4.0)
x.requires_grad_(True)
y = 2*x.T@x
y.backward()
display(x.grad)
