# Gradient is populated by the backward function

f.backward()
print("\n-- Backward --\n")
print("X.grad :", X.grad)
print("Manual Derivative:", Y*torch.cos(torch.dot(X,Y)))
print("Y.grad :", Y.grad)
