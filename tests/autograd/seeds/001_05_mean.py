z = y * y * 3
out = z.mean()
print(z, out)
