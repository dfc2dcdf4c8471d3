"""The compiled kernel of noisy-answer mode (`play.noisy`): the expected information of every probe when each
answer may be replaced, with probability q, by one drawn uniformly from the game's answers."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, parallel=True)
def answer_entropies(table, support, weights, n_classes, q):
    """Entropy of the noisy answer distribution of every probe, and its win-class mass."""
    n_probes = table.shape[0]
    out = np.empty(n_probes)
    win_mass = np.empty(n_probes)
    for p in numba.prange(n_probes):
        mass = np.zeros(n_classes)
        row = table[p]
        for i in range(support.shape[0]):
            mass[row[support[i]]] += weights[i]
        h = 0.0
        for c in range(n_classes):
            pa = (1.0 - q) * mass[c] + q / n_classes
            if pa > 0.0:
                h -= pa * np.log(pa)
        out[p] = h
        win_mass[p] = mass[n_classes - 1]
    return out, win_mass
