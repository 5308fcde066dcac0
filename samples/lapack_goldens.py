#!/usr/bin/python3
"""lapack_goldens.py: inputs and golden outputs of lapack_lstsq.hlo and
lapack_pca.hlo, computed with numpy from the math in the modules' header
comments (numpy's lstsq and eigh, not the routines the modules call), never
from hlorun's output. Run from samples/:

    cd samples && /usr/bin/python3 lapack_goldens.py
"""
import numpy as np

rng = np.random.default_rng(2026)

# Least squares: a 6x3 full-rank system with two right-hand sides.
a = rng.standard_normal((6, 3))
b = rng.standard_normal((6, 2))
np.save("lapack_lstsq.in0.npy", a)
np.save("lapack_lstsq.in1.npy", b)
np.save("lapack_lstsq.expected.npy", np.linalg.lstsq(a, b, rcond=None)[0])

# PCA: 8 samples of 4 correlated features.
x = rng.standard_normal((8, 4)) @ np.array([[3, 1, 0, 0], [0, 2, 0.5, 0],
                                             [0, 0, 1, 0.2], [0, 0, 0, 0.3]]) + 5
np.save("lapack_pca.in0.npy", x)
mean = x.mean(0)
xc = x - mean
w, v = np.linalg.eigh(xc.T @ xc / (len(x) - 1))
top = v[:, 2:]
np.savez("lapack_pca.expected.npz", w[2:], xc @ top @ top.T + mean)
