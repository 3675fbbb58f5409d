df_dx_man = torch.cos(torch.dot(X,Y)) * Y
print("df / dx = ", df_dx_man)
