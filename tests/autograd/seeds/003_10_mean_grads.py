print('dz/dx:', x.grad) 
print('dz/da:', a.grad) 
