# Reconstructed from the tutorial's prose (its code is shown only as images).
y = x * x
y.sum().backward()
display(x.grad)
