# Reconstructed from the tutorial's prose (its code is shown only as images).
x = torch.tensor(3.0)
display(x)
