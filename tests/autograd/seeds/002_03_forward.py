# Reconstructed from the tutorial's prose (its code is shown only as images).
y = x**2
display(y)
