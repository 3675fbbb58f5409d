# Reconstructed from the tutorial's prose (its code is shown only as images).
y.backward()
