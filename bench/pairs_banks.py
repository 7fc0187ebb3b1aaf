#!/usr/bin/env python3
"""Shared-memory wavefronts of one sweep of the pairs solve's block accesses (kernels/jacobi_evd_pairs.cuh).

A model of its bank conflicts: lane k of warp w takes the 2 x 2 blocks (k, l), l = k + d mod 32, for
d = w + 1 and w + 9 (d = 16 by lanes k < 16 only), loads its four entries, stores them, and stores
their mirrors. A is column-major with leading dimension 64, so an entry's bank depends on its row
alone, and rows i and i + 32 share one. For every warp access the wavefronts are the most distinct
4-byte words that its lanes ask of one of the 32 banks. It prints them per entry size (4: float,
8: complex float or double, 16: complex double) for three orders of each pair's two rows:
  - as the kernel takes them, x_k then y_k in every lane: x_0 is player 0, and for steps 1..31
    player 32 is among positions 1..31, on player 0's bank; the y side holds players t and t + 32;
  - "lane 0 swapped": lane 0 (and, for the columns, the lanes whose pair l is 0) takes (y, x) in
    steps 1..31, which leaves every access one of each two rows i and i + 32;
  - per-lane swaps from a 2-colouring of each step (pair partners apart, rows i and i ^ 32 apart).
Both swapped orders were built and measured on an H200 and withdrawn: without the conflicts the
kernel was no faster, as its added selects cost more issue slots than the conflicts cost
(bench/results/2026-11-27-h200-pairs-bank-order-withdrawn.md).

    python3 bench/pairs_banks.py
"""
from collections import defaultdict

import step_banks  # the tournament and bank model both scripts share (step_banks.py, beside this one)
from step_banks import wavefronts

M = 64     # players
PAIRS = 32


def player(position, step):  # detail::round_robin_player
    return step_banks.player(position, step, M)


def coloured_order(step):
    """Per-lane swaps: lane k takes (y_k, x_k) where bit k is set."""
    position = {player(p, step): p for p in range(M)}
    second, done = set(), set()
    for start in range(M):
        i = start
        while i not in done:  # i first; its pair partner second; then partner ^ 32 first
            partner = player(M - 1 - position[i], step)
            done |= {i, partner}
            second.add(partner)
            i = partner ^ (M // 2)
    return sum(1 << k for k in range(PAIRS) if player(k, step) in second)


ORDERS = {
    "x then y": lambda step: 0,
    "lane 0 swapped": lambda step: 1 if 1 <= step <= PAIRS - 1 else 0,
    "2-colouring": coloured_order,
}


def sweep(words, order):
    """Wavefronts of a sweep's block loads and stores (mirrors included), and the conflict-free count."""
    total = ideal = 0
    for step in range(M - 1):
        swapped = order(step)
        for w in range(8):
            for half in range(2):
                d = w + 1 + 8 * half
                lanes = [k for k in range(PAIRS) if not (d == PAIRS // 2 and k >= PAIRS // 2)]
                accesses = defaultdict(list)
                for k in lanes:
                    l = (k + d) % PAIRS
                    x, y, xl, yl = player(k, step), player(M - 1 - k, step), player(l, step), player(M - 1 - l, step)
                    ra, rb = (y, x) if swapped >> k & 1 else (x, y)
                    ca, cb = (yl, xl) if swapped >> l & 1 else (xl, yl)
                    for name, (i, j) in {"aa": (ra, ca), "ab": (ra, cb), "ba": (rb, ca), "bb": (rb, cb)}.items():
                        accesses["load " + name].append(i + M * j)
                        accesses["store " + name].append(i + M * j)
                        accesses["mirror " + name].append(j + M * i)
                for addresses in accesses.values():
                    total += wavefronts(addresses, words)
                    ideal += max(1, (len(addresses) * words + 31) // 32)
    return total, ideal


def main():
    print("| entry bytes | " + " | ".join(ORDERS) + " | conflict-free |")
    print("| ---: |" + " ---: |" * (len(ORDERS) + 1))
    for words in (1, 2, 4):
        cells = []
        for order in ORDERS.values():
            total, ideal = sweep(words, order)
            cells.append(f"{total} (+{100 * (total / ideal - 1):.0f}%)")
        print(f"| {4 * words} | " + " | ".join(cells) + f" | {ideal} |")


if __name__ == "__main__":
    main()
