# The tutorial's commented-out legacy code, uncommented.
from torch.autograd import Variable

x = Variable(torch.randn(5, 5))
display(x)
