"""The compiled kernels (numba): exact search and its bounds."""
