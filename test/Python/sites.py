"""Random sparse inputs for the front end's tests."""
import numpy as np


def random_sites(rng, grid, n, batch=1):
    """`n` distinct sites, N x (1 + D) int32 (batch, then the grid's axes),
    drawn from `batch` copies of `grid`."""
    dims = [batch] + list(grid)
    keys = rng.choice(int(np.prod(dims)), size=n, replace=False)
    return np.stack(np.unravel_index(keys, dims), axis=1).astype(np.int32)
