# Reconstructed from the tutorial's prose (its code is shown only as images).
x.grad.zero_()
y = x + 2
y.backward()
display(x.grad)
