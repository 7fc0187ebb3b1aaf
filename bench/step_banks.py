#!/usr/bin/env python3
"""Shared-memory wavefronts of one sweep of solve_in_shared's Jacobi steps (kernels/jacobi_evd_solve.cuh).

A model of the bank conflicts that chose the block solve's layout (kSharedLda, and the V items'
rows by lane): for every warp and every shared-memory access of the step's work items (StepItems),
the wavefronts are the most distinct 4-byte words that the warp's lanes ask of one of the 32 banks.
It prints them, and the conflict-free ideal, for the old layout (A with leading dimension m + 1, a
V item's four rows of one pair) and the new one (A with NMAX + 6, a V item's one row of four pairs),
per entry size (4: float, 8: complex float or double, 16: complex double). It models the throughput
shape (StepShape); the latency shape's rotation warp, which reads the blocks' entries again, is not
in it.

    python3 bench/step_banks.py          # the table of bench/results/2026-11-25-h100-step-banks.md
"""
from collections import defaultdict


def whole_warps(t):
    return (t + 31) // 32 * 32


def player(seat, step, m):  # detail::round_robin_player
    if seat == 0:
        return 0
    i = seat - 1 + step
    return 1 + (i - (m - 1) if i >= m - 1 else i)


def wavefronts(addresses, words):
    banks = defaultdict(set)
    for a in addresses:
        for w in range(words):
            banks[(a * words + w) % 32].add(a * words + w)
    return max((len(s) for s in banks.values()), default=0)


def items(nmax, m, new):
    """Each thread's work item: ('v', [(pair, row, stored), ...]), ('b', k, l) or ('d', k)."""
    half, h = m // 2, nmax // 2
    v_threads, b_threads = whole_warps(h * ((h + 1) // 2)), whole_warps(h * (h - 1) // 2)
    out = []
    for t in range(v_threads + b_threads + 32):
        if t < v_threads:
            if new:  # row t % m of pairs g, g + G, g + 2G, g + 3G; one past the last loads pair g
                G, g = v_threads // m, t // m
                out.append(('v', [(g + j * G if g + j * G < half else g, t % m, g + j * G < half) for j in range(4)])
                           if g < min(G, half) else None)
            else:  # rows r, r + Q, r + 2Q, r + 3Q of pair t / Q; a row past the last loads row m - 1
                q = (half + 1) // 2
                k, r = t // q, t % q
                out.append(('v', [(k, min(r + i * q, m - 1), r + i * q < m) for i in range(4)]) if t < half * q else None)
        elif t < v_threads + b_threads:
            tt = t - v_threads
            if tt >= half * (half - 1) // 2:
                out.append(None)
                continue
            k = 0
            while tt >= half - 1 - k:
                tt -= half - 1 - k
                k += 1
            out.append(('b', k, k + 1 + tt))
        else:
            tt = t - v_threads - b_threads
            out.append(('d', tt) if tt < half else None)
    return out


def sweep(nmax, m, words, new):
    lda, ldv = (nmax + 6, m + 1) if new else (m + 1, m + 1)
    work = items(nmax, m, new)
    total = ideal = 0
    for step in range(m - 1):
        def players(k):
            a, b = player(k, step, m), player(m - 1 - k, step, m)
            return min(a, b), max(a, b)
        accesses = defaultdict(list)  # (warp, instruction) -> word addresses of its lanes
        for t, item in enumerate(work):
            if item is None:
                continue
            w = t // 32
            if item[0] == 'v':
                for j, (k, r, stored) in enumerate(item[1]):
                    x, y = players(k)
                    for op in ('load', 'store') if stored else ('load',):
                        accesses[(w, 'v' + op, j, 'x')].append(r + x * ldv)
                        accesses[(w, 'v' + op, j, 'y')].append(r + y * ldv)
            elif item[0] == 'b':
                x, y = players(item[1])
                xl, yl = players(item[2])
                block = [(x, xl), (x, yl), (y, xl), (y, yl)]
                for j, (i, c) in enumerate(block):
                    accesses[(w, 'load', j)].append(i + c * lda)
                for j, (i, c) in enumerate(block + [(c, i) for i, c in block]):
                    accesses[(w, 'store', j)].append(i + c * lda)
            else:
                x, y = players(item[1])
                for j, (i, c) in enumerate([(x, x), (y, y), (x, y)]):
                    accesses[(w, 'dload', j)].append(i + c * lda)
                for j, (i, c) in enumerate([(x, x), (y, y), (x, y), (y, x)]):
                    accesses[(w, 'dstore', j)].append(i + c * lda)
        for addresses in accesses.values():
            total += wavefronts(addresses, words)
            ideal += -(-len(addresses) * words // 32)
    return total, ideal


if __name__ == '__main__':
    print('| entry bytes | NMAX | m | old layout | new layout | conflict-free |')
    print('| ---: | ---: | ---: | ---: | ---: | ---: |')
    for size in (4, 8, 16):
        for nmax, m in ((16, 16), (32, 18), (32, 24), (32, 30), (32, 32)):
            old, best = sweep(nmax, m, size // 4, False)
            new, _ = sweep(nmax, m, size // 4, True)
            print(f'| {size} | {nmax} | {m} | {old} | {new} ({new / old - 1:+.0%}) | {best} |')
