# Reconstructed from the tutorial's prose (its code is shown only as images).
x.requires_grad = True
display(x.grad)
