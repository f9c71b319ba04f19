#!/usr/bin/env python3
"""Step 4 of the routing student table (README.md beside this file): fits the table and writes the
artifact the routing plugin loads (student/vocab.txt and student/table.bin).

- Teacher space: the teacher vectors (teacher.f32), centred (their mean removed), projected on
  their top DIMS principal directions, then normalised: the targets Y.
- Fit: ridge regression from the sparse features X (features.mjs) to Y,
  W = argmin |XW - Y|^2 + LAMBDA * d * |W|^2 (d = mean diagonal of X'X), by block conjugate
  gradients (X'X is never formed). 2 % of the rows are held out to report fidelity (cosine).
- Artifact: W in int8 with one float32 scale per row (symmetric, per-row max).
Needs numpy and scipy (Debian: python3-numpy, python3-scipy).
   python3 scripts/routing-student/fit.py /tmp/rcorp/out plugins/routing/classifier/student
"""
import os, shutil, sys
import numpy as np
import scipy.sparse as sp

src, dst = sys.argv[1], sys.argv[2]
DIMS = int(os.environ.get('DIMS', 128))
LAMBDA = float(os.environ.get('LAMBDA', 0.1))
ITERS = int(os.environ.get('ITERS', 120))
rng = np.random.default_rng(26)

n_targets = sum(1 for _ in open(f'{src}/targets.txt', encoding='utf8'))
T = np.zeros((n_targets, 512), dtype=np.float32)
got = np.fromfile(f'{src}/teacher.f32', dtype=np.float32).reshape(-1, 512)
T[:len(got)] = got
# An unfinished teacher run (teacher.mjs does the shortest texts first) leaves rows undone: those pairs are left out.
done = np.linalg.norm(T, axis=1) > 0
if os.path.exists(f'{src}/teacher.done'):
    done &= np.fromfile(f'{src}/teacher.done', dtype=np.uint8)[:n_targets].astype(bool)
print(f'{done.sum()} of {n_targets} teacher vectors present')
T[done] /= np.linalg.norm(T[done], axis=1, keepdims=True)
present = np.flatnonzero(done)
# Centred: USE vectors share a large common direction (any two sentences have cosine ~0.3+); a
# student regressed onto it puts every prompt at cosine ~0.9 to every route. Without the mean,
# cosines spread out and tell routes apart.
mu = T[present].mean(0)
T[done] -= mu
sample = T[rng.choice(present, min(len(present), 40000), replace=False)]
_, s, vt = np.linalg.svd(sample, full_matrices=False)
P = vt[:DIMS].T.astype(np.float32)
print(f'projection to {DIMS} dims keeps {100 * (s[:DIMS] ** 2).sum() / (s ** 2).sum():.1f} % of the variance')
a, b = sample[:2000], sample[2000:4000]
pa, pb = a @ P, b @ P
pa /= np.linalg.norm(pa, axis=1, keepdims=True); pb /= np.linalg.norm(pb, axis=1, keepdims=True)
print(f'pairwise cosine, teacher vs projected: correlation {np.corrcoef((a * b).sum(1), (pa * pb).sum(1))[0, 1]:.3f}')

indptr = np.fromfile(f'{src}/X.indptr.i32', dtype=np.int32)
indices = np.fromfile(f'{src}/X.indices.i32', dtype=np.int32)
data = np.fromfile(f'{src}/X.data.f32', dtype=np.float32)
target = np.fromfile(f'{src}/X.target.i32', dtype=np.int32)
vocab = [l.rstrip('\n') for l in open(f'{src}/vocab.txt', encoding='utf8')]
X = sp.csr_matrix((data, indices, indptr), shape=(len(target), len(vocab)))
keep = done[target]
X, target = X[keep], target[keep]
print(f'{len(target)} training rows')
Y = T[target] @ P
Y /= np.maximum(np.linalg.norm(Y, axis=1, keepdims=True), 1e-9)

held = rng.random(len(target)) < 0.02
Xt, Yt, Xh, Yh = X[~held], Y[~held], X[held], Y[held]
XtT = Xt.T.tocsr()
d = np.asarray(Xt.multiply(Xt).sum(0)).ravel()
reg = LAMBDA * d[d > 0].mean()
B = XtT @ Yt
A = lambda W: XtT @ (Xt @ W) + reg * W
W = np.zeros((len(vocab), DIMS), dtype=np.float32)
R = B - A(W); Pm = R.copy(); rs = (R * R).sum(0)
for it in range(ITERS):
    AP = A(Pm)
    alpha = rs / np.maximum((Pm * AP).sum(0), 1e-20)
    W += Pm * alpha; R -= AP * alpha
    rs_new = (R * R).sum(0)
    Pm = R + Pm * (rs_new / np.maximum(rs, 1e-20)); rs = rs_new
    if it % 20 == 19: print(f'  iteration {it + 1}: residual {np.sqrt(rs.sum()):.4f}', flush=True)

def fidelity(Xs, Ys, Wm):
    S = Xs @ Wm
    S /= np.maximum(np.linalg.norm(S, axis=1, keepdims=True), 1e-9)
    return float((S * Ys).sum(1).mean())

scale = np.maximum(np.abs(W).max(1), 1e-12) / 127
Q = np.clip(np.rint(W / scale[:, None]), -127, 127).astype(np.int8)
print(f'held-out cosine to the teacher: float {fidelity(Xh, Yh, W):.3f}, int8 {fidelity(Xh, Yh, Q.astype(np.float32) * scale[:, None]):.3f}; train {fidelity(Xt[:5000], Yt[:5000], W):.3f}')
os.makedirs(dst, exist_ok=True)
with open(f'{dst}/table.bin', 'wb') as f:
    f.write(Q.tobytes()); f.write(scale.astype('<f4').tobytes())
shutil.copyfile(f'{src}/vocab.txt', f'{dst}/vocab.txt')
print(f'wrote {dst}/table.bin ({os.path.getsize(f"{dst}/table.bin") / 1e6:.1f} MB) and vocab.txt ({len(vocab)} features, {DIMS} dims)')
