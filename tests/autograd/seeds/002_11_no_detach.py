# Reconstructed from the tutorial's prose (its code is shown only as images).
x.grad.zero_()
y = x * x
z = y * x
z.sum().backward()
display(x.grad)
