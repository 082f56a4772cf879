"""The run lifecycle shared by every source (a whole file, a stored dataset, file chunks, Ray blocks)."""
