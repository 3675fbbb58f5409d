# Reconstructed from the tutorial's prose (its code is shown only as images).
display(x.grad)
