#!/usr/bin/env python3
"""CPU models (numpy, float32 arithmetic) of four ways to finish a warm start in fewer Jacobi steps.

All work on eigbench's warm streams: A <- 0.95 A + 0.05 X X^H / L, X = M Z with M a random mixing
whose column j is scaled by 0.85^j (bench/eigbench.cpp), each step warm-started from the last
eigenvectors, B = V0^H A V0, and the target off(B) <= eps ||A||_F of the GPU solves.

  estimate   Steps to the target with the parallel round-robin ordering, testing off(B) at each
             sweep's start only, against stopping at the first step that meets the target, found by
             following off(B)^2 through the sweep (it falls by exactly 2 |b_pq|^2 a rotation) from a
             sweep that starts within the estimate's window, off <= target / sqrt(8 eps).
  cayley     Simultaneous rotations made unitary by a Cayley transform, as the withdrawn GPU trial of
             bench/results/2026-11-27-h200-latency-refinement-withdrawn.md ran them, over 100 warm
             starts: its steps, fallbacks and worst accuracy against LAPACK.
  products   Refinements by matrix products instead of sweeps: Ogita-Aishima's iteration on V0
             (float32 throughout), and a simultaneous first-order step on B (every pair whose
             |b_pq| <= kappa |b_qq - b_pp| at once, made orthonormal exactly), printing off(B) and the
             orthogonality of V in units of eps after each.
  finish     The register solve's first-order finish (finish_first_order in
             kernels/jacobi_evd_solve.cuh), tried at each sweep's start, against sweeps alone: mean
             steps over 40 warm starts, and the worst accuracy against LAPACK. A fifth argument K
             also tries it, after a convergence test, at every K-th step of a sweep that starts
             with off(B)^2 <= 64 eps ||A||_F^2.

    python3 bench/warm_refinement_model.py estimate 32 complex 32
    python3 bench/warm_refinement_model.py products 32 complex 8
    python3 bench/warm_refinement_model.py cayley 32 complex 8
    python3 bench/warm_refinement_model.py finish 16 real 16
    python3 bench/warm_refinement_model.py finish 32 complex 32 8

The arguments are n, real or complex, and L, the snapshots added each step (32: eigbench's warm
case at n = 32; 8: its latency case). It needs numpy (Debian's python3-numpy), which eigstream's
build and tests do not. Results: bench/results/2026-11-27-h200-off-estimate-withdrawn.md (estimate,
products), bench/results/2026-11-27-h200-latency-refinement-withdrawn.md (cayley),
bench/results/2026-12-07-h100-first-order-finish.md (finish) and, for K, the GPU trial of the finish
within sweeps: bench/results/2026-12-07-h100-finish-mid-sweep-withdrawn.md (fewer steps, slower
batches).
"""
import sys

import numpy as np

EPS = float(np.finfo(np.float32).eps)


def stream(n, snapshots, cplx, steps, rng):
    """eigbench's streams: its warm case (L = n) starts from a covariance of n snapshots, its latency
    case (L = 8) from one of 4n. (Before session 42 every stream here started from 4n; at n = 64 the
    warm stream then never took a third sweep, where eigbench's takes one in about a quarter of its
    solves: bench/results/2026-12-07-h100-follow-off-in-last-sweep.md.)"""
    m = rng.standard_normal((n, n)) * 0.85 ** np.arange(n)[None, :]
    if cplx:
        m = m + 1j * rng.standard_normal((n, n)) * 0.85 ** np.arange(n)[None, :]

    def block(count):
        z = rng.standard_normal((n, count)) + (1j * rng.standard_normal((n, count)) if cplx else 0)
        x = m @ z
        return x @ x.conj().T / count

    a = block(n if snapshots == n else 4 * n)
    out = []
    for _ in range(steps):
        a = 0.95 * a + 0.05 * block(snapshots)
        out.append(a)
    return out


def round_robin(n):  # the chess tournament: n - 1 steps of n / 2 disjoint pairs (n even)
    seats = list(range(n))
    for _ in range(n - 1):
        yield [tuple(sorted((seats[k], seats[n - 1 - k]))) for k in range(n // 2)]
        seats = [seats[0], seats[-1]] + seats[1:-1]


def off2(b):
    o = b.astype(np.complex128)
    np.fill_diagonal(o, 0)
    return float(np.sum(np.abs(o) ** 2))


def rotate(b, p, q):  # the 2 x 2 eigenvectors, the one nearer the identity, applied to rows and columns; returns them
    _, u = np.linalg.eigh(b[np.ix_([p, q], [p, q])].astype(np.complex128))
    if abs(u[0, 0]) < abs(u[0, 1]):
        u = u[:, ::-1]
    u = (u * (np.conj(u[0, 0]) / abs(u[0, 0]))).astype(b.dtype) if np.iscomplexobj(b) else u.real.astype(b.dtype)
    b[:, [p, q]] = b[:, [p, q]] @ u
    b[[p, q], :] = u.conj().T @ b[[p, q], :]
    b[p, q] = b[q, p] = 0
    return u


def estimate(n, cplx, snapshots, rng):
    dt = np.complex64 if cplx else np.float32
    a_list = stream(n, snapshots, cplx, 25, rng)
    v0 = np.linalg.eigh(a_list[0])[1].astype(dt)
    at_sweep_end = at_estimate = triggers = false_triggers = 0
    for a in a_list[1:]:
        b = (v0.conj().T @ a.astype(dt) @ v0).astype(dt)
        target2 = (EPS * np.linalg.norm(a)) ** 2
        negligible2 = target2 / n ** 2
        steps, stopped = 0, None
        while off2(b) > target2:
            start = off2(b)
            est = np.float32(start) if start * 8 * EPS <= target2 else None
            for pairs in round_robin(n):
                steps += 1
                fallen = np.float32(0)
                for p, q in pairs:
                    if abs(b[p, q]) ** 2 > negligible2:
                        fallen += np.float32(2) * np.float32(abs(b[p, q])) ** 2
                        rotate(b, p, q)
                if est is not None and stopped is None:
                    est = np.float32(est - fallen)
                    if est <= target2:
                        triggers += 1
                        if off2(b) <= target2:
                            stopped = steps
                        else:
                            false_triggers += 1
                            est = np.float32(off2(b))
        at_sweep_end += steps
        at_estimate += stopped if stopped is not None else steps
        v0 = np.linalg.eigh(a)[1].astype(dt)
    print(f"n = {n} {'complex' if cplx else 'real'}, L = {snapshots}: steps at a sweep's end {at_sweep_end / 24:.1f} "
          f"({at_sweep_end / 24 / (n - 1):.2f} sweeps), stopping where the estimate says {at_estimate / 24:.1f} "
          f"({100 * (1 - at_estimate / at_sweep_end):.0f}% fewer); {triggers} tests, {false_triggers} of them too early")


def products(n, cplx, snapshots, rng):
    dt = np.complex64 if cplx else np.float32
    a_list = stream(n, snapshots, cplx, 3, rng)
    a = a_list[-1].astype(dt)
    scale = EPS * np.linalg.norm(a)
    v0 = np.linalg.eigh(a_list[-2])[1].astype(dt)

    print(f"n = {n} {'complex' if cplx else 'real'}, L = {snapshots}: off(V0^H A V0) {np.sqrt(off2(v0.conj().T @ a @ v0)) / scale:.2g}")

    # Ogita-Aishima: R = I - X^H X, S = X^H A X, E from them, X <- X + X E.
    x, history = v0, []
    for _ in range(4):
        eye = np.eye(n, dtype=dt)
        r = eye - x.conj().T @ x
        s = x.conj().T @ (a @ x)
        lam = np.diag(s).real / (1 - np.diag(r).real)
        gap = lam[None, :] - lam[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.where(np.abs(gap) > 0, (s + r * lam[None, :]) / gap, r / 2)
        np.fill_diagonal(e, np.diag(r) / 2)
        x = (x + x @ e.astype(dt)).astype(dt)
        b = x.conj().T @ a @ x
        history.append(f"off {np.sqrt(off2(b)) / scale:.2g} orth {np.linalg.norm(x.conj().T @ x - np.eye(n)) / EPS:.2g}")
    print("  Ogita-Aishima on V0: " + ", ".join(history))

    # The simultaneous step: E_pq = b_pq / (b_qq - b_pp) where |b_pq| <= kappa |b_qq - b_pp|, X the
    # orthonormal factor of I + E (exact, in double), B <- X^H B X in float32.
    b, history = (v0.conj().T @ a @ v0).astype(dt), []
    for _ in range(4):
        d = np.diag(b).real
        gap = d[None, :] - d[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.where(np.abs(b) <= 0.1 * np.abs(gap), b / gap, 0)
        np.fill_diagonal(e, 0)
        q, rr = np.linalg.qr((np.eye(n) + e).astype(np.complex128 if cplx else np.float64))
        x = (q * np.sign(np.diag(rr).real)[None, :]).astype(dt)
        b = (x.conj().T @ b @ x).astype(dt)
        history.append(f"off {np.sqrt(off2(b)) / scale:.2g}")
    print("  simultaneous steps on B: " + ", ".join(history))


def gauss_jordan_inverse(m):  # without pivoting: I - T/2 has I for its Hermitian part
    m = m.copy()
    for k in range(m.shape[0]):
        inverse = 1 / m[k, k]
        row, col = m[k, :] * inverse, -m[:, k] * inverse
        m -= np.outer(m[:, k], m[k, :] * inverse)
        m[k, :], m[:, k], m[k, k] = row, col, inverse
    return m


def hermitian_from_lower(m):
    lower = np.tril(m, -1)
    return (lower + lower.conj().T + np.diag(np.diag(m).real)).astype(m.dtype)


def cayley_refine(a, v0, dt):
    """The GPU trial's refinement: (steps, eigenvalues, vectors), or (steps, None, None) where the GPU
    would fall back to the sweeps (a step that does not halve off(S), ||R|| > 1/2, or 6 steps)."""
    n, eps = a.shape[0], float(np.finfo(dt).eps)
    target = eps * np.linalg.norm(a)
    eye = np.eye(n, dtype=dt)
    x, last_off = v0, np.inf
    for steps in range(7):
        s = hermitian_from_lower(x.conj().T @ (a @ x))  # exactly Hermitian, so T is anti-Hermitian
        r = hermitian_from_lower(eye - x.conj().T @ x)
        lam = np.diag(s).real / (1 - np.diag(r).real)
        off, orth = np.sqrt(off2(s)), np.linalg.norm(r)
        if off <= 4 * target and orth <= 64 * n * eps:
            return steps, lam, (x @ (eye + r / 2)).astype(dt)
        if steps == 6 or not off <= 0.5 * last_off or not orth <= 0.5:
            return steps, None, None
        last_off = off
        s_orth = s + (lam[:, None] + lam[None, :]) / 2 * r
        d = lam[None, :] - lam[:, None]
        first = np.arange(n)[:, None] < np.arange(n)[None, :]
        sign = np.where((d > 0) | ((d == 0) & first), 1.0, -1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = 2 * s_orth / (d + sign * np.sqrt(d * d + 4 * np.abs(s_orth) ** 2))
        t[np.abs(s_orth) ** 2 <= (target / n) ** 2] = 0
        np.fill_diagonal(t, 0)
        tau = 2 * t / (1 + np.sqrt(1 + np.abs(t) ** 2))
        u = 2 * gauss_jordan_inverse((eye - tau / 2).astype(dt)) - eye
        x = (x @ (u + r / 2)).astype(dt)


def accuracy(a, lam, x):
    """Residual ||A X - X diag(lam)||_F / ||A||_F, orthogonality ||X^H X - I||_F, and the eigenvalue error
    against LAPACK relative to ||A||_2."""
    xd = x.astype(np.complex128)
    ref = np.linalg.eigvalsh(a)
    return np.array([np.linalg.norm(a @ xd - xd * lam[None, :]) / np.linalg.norm(a),
                     np.linalg.norm(xd.conj().T @ xd - np.eye(a.shape[0])),
                     np.max(np.abs(np.sort(lam) - ref)) / np.max(np.abs(ref))])


def cayley(n, cplx, snapshots, rng):
    dt = np.complex64 if cplx else np.float32
    a_list = stream(n, snapshots, cplx, 101, rng)
    v = np.linalg.eigh(a_list[0])[1].astype(dt)
    steps, fallbacks, worst = [], 0, np.zeros(3)
    for a in a_list[1:]:
        k, lam, x = cayley_refine(a.astype(dt), v, dt)
        if lam is None:  # the GPU fell back to the sweeps; the model takes LAPACK's vectors
            fallbacks += 1
            v = np.linalg.eigh(a)[1].astype(dt)
            continue
        steps.append(k)
        worst = np.maximum(worst, accuracy(a, lam, x))
        v = x
    print(f"n = {n} {'complex' if cplx else 'real'}, L = {snapshots}: 100 warm starts, refinement steps mean "
          f"{np.mean(steps) if steps else float('nan'):.2f} most {max(steps) if steps else 0}, {fallbacks} fallbacks; "
          f"worst residual {worst[0] / (n * EPS):.2f}, orthogonality {worst[1] / (n * EPS):.2f}, "
          f"eigenvalue error {worst[2] / (n * EPS):.2f} (n eps)")


def newton_schulz(x, dt):  # X (3I - X^H X) / 2, as the GPU solves end a warm start
    return (x @ (1.5 * np.eye(x.shape[0], dtype=dt) - np.float32(0.5) * (x.conj().T @ x))).astype(dt)


def first_order_finish(b, x, target, neg2, dt):
    """The register solve's finish_first_order: (eigenvalues, vectors) or None where it does not apply."""
    off = np.sqrt(off2(b))
    if off * off > target * np.linalg.norm(b):
        return None
    d = np.diag(b).real.astype(np.float32)
    gap = d[None, :] - d[:, None]  # d_j - d_i
    f = b.copy()
    np.fill_diagonal(f, 0)
    above = np.abs(f) ** 2 > neg2
    if np.any(above & (np.abs(gap) < np.finfo(np.float32).tiny)):
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = np.where(above, 1 / gap, 0).astype(np.float32)
    e = (inverse * f).astype(dt)
    e2 = float(np.sum(np.abs(e) ** 2))
    if not (off * off * e2 <= 0.25 * target * target and e2 * e2 <= EPS):
        return None
    lam = (d - np.sum(inverse * np.abs(f) ** 2, axis=1)).astype(np.float32)
    return lam, newton_schulz((x + x @ e).astype(dt), dt)


def finish(n, cplx, snapshots, rng, every=0):
    """Steps with and without the first-order finish at each sweep's start, over 40 warm starts; with
    `every`, also a test and a finish tried after every `every`-th step of a sweep that starts with
    off(B)^2 <= 64 target ||A||_F."""
    dt = np.complex64 if cplx else np.float32
    a_list = stream(n, snapshots, cplx, 41, rng)
    for use in (False, True):
        v = np.linalg.eigh(a_list[0])[1].astype(dt)
        steps, finished, worst = 0, 0, np.zeros(3)
        for a in a_list[1:]:
            norm = np.linalg.norm(a)
            target = EPS * norm
            neg2 = (target / n) ** 2
            x = v.copy()
            b = hermitian_from_lower((x.conj().T @ a.astype(dt) @ x).astype(dt))
            done = None
            while np.sqrt(off2(b)) > target:
                done = first_order_finish(b, x, target, neg2, dt) if use else None
                if done is not None:
                    break
                within = use and every > 0 and off2(b) <= 64 * target * norm
                for step, pairs in enumerate(round_robin(n)):
                    steps += 1
                    for p, q in pairs:
                        if abs(b[p, q]) ** 2 > neg2:
                            u = rotate(b, p, q)
                            x[:, [p, q]] = x[:, [p, q]] @ u
                    if within and step % every == every - 1:  # the test, then the finish
                        if np.sqrt(off2(b)) <= target:
                            break
                        done = first_order_finish(b, x, target, neg2, dt)
                        if done is not None:
                            break
                if done is not None:
                    break
            if done is None:
                done = np.diag(b).real.astype(np.float32), newton_schulz(x, dt)
            else:
                finished += 1
            lam, x = done
            worst = np.maximum(worst, accuracy(a, lam, x))
            v = x
        print(f"n = {n} {'complex' if cplx else 'real'}, L = {snapshots}, {'with' if use else 'without'} the finish"
              f"{f' (also every {every} steps)' if use and every else ''}: mean steps {steps / 40:.1f} "
              f"({steps / 40 / (n - 1):.2f} sweeps), finished {finished} of 40; worst residual {worst[0] / EPS:.1f}, "
              f"orthogonality {worst[1] / EPS:.1f}, eigenvalue error {worst[2] / EPS:.1f} (eps)")


if __name__ == "__main__":
    what, n, kind, snapshots = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    extra = [int(a) for a in sys.argv[5:]]  # finish: every
    {"estimate": estimate, "products": products, "cayley": cayley, "finish": finish}[what](n, kind == "complex", snapshots,
                                                                       np.random.default_rng(1), *extra)
