print(x.requires_grad)
y = x.detach()
print(y.requires_grad)
print(x.eq(y).all())
