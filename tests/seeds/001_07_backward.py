out.backward()
