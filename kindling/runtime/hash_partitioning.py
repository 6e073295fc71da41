"""Spark's hash partitioning of integer grouping columns, computed in Python at planning time.

A stateful Spark operator sends a row to shuffle partition ``pmod(murmur3(grouping columns), partitions)``
(``HashPartitioning``, seed 42, each column's hash seeding the next). kindling's keyed operators group
by key group, so which partition a key group lands in decides how evenly the operator's work spreads
over the cores. Key-group numbers 0..127 themselves land 54/74 on two partitions; :func:`balanced_values`
gives each key group a grouping value whose hash puts it where Flink's round of key groups would, so every
power-of-two partition count up to the key-group count gets the same number of key groups.

>>> spark_partition([7], 2) in (0, 1)
True
>>> [spark_partition([v], 2) for v in balanced_values(4)]
[0, 1, 0, 1]
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

SEED = 42  # Spark's Murmur3Hash seed
_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def murmur3_int(value: int, seed: int) -> int:
    """Spark's ``hash`` of one IntegerType value with ``seed`` (Murmur3_x86_32.hashInt), as a signed 32-bit int."""
    k1 = (value & _MASK) * 0xCC9E2D51 & _MASK
    k1 = _rotl(k1, 15) * 0x1B873593 & _MASK
    h1 = (seed & _MASK) ^ k1
    h1 = (_rotl(h1, 13) * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def spark_hash(values: Sequence[int], seed: int = SEED) -> int:
    """Spark's ``hash(c1, c2, ...)`` of non-null IntegerType columns: each column's hash seeds the next."""
    for value in values:
        seed = murmur3_int(value, seed)
    return seed


def spark_partition(values: Sequence[int], partitions: int) -> int:
    """The shuffle partition Spark's hash partitioning sends a row with these integer grouping values to."""
    return spark_hash(values) % partitions  # Python's % of a positive modulus is Spark's pmod


@lru_cache(maxsize=None)
def balanced_values(count: int, prefix: tuple[int, ...] = ()) -> tuple[int, ...]:
    """For key groups 0..count-1, distinct non-negative grouping values that Spark's hash partitioning spreads evenly.

    Grouping on ``(*prefix, value)``, key group ``g`` lands in partition ``g % p`` for every partition count ``p``
    that is a power of two up to ``count`` (with the default 128 key groups: 1, 2, 4, ..., 128 partitions); other
    partition counts get a hash's spread.
    Deterministic: the values of a key group never change for a given count and prefix, as its state is kept by them.
    """
    if count < 1:
        raise ValueError(f"key-group count must be positive, got {count}")
    width = 1 << (count.bit_length() - 1)  # the largest power of two <= count
    seed = spark_hash(prefix)
    waiting: dict[int, list[int]] = {}
    for group in range(count - 1, -1, -1):
        waiting.setdefault(group % width, []).append(group)
    values = [0] * count
    left, candidate = count, 0
    while left:
        groups = waiting.get(murmur3_int(candidate, seed) & (width - 1))
        if groups:
            values[groups.pop()] = candidate
            left -= 1
        candidate += 1
    return tuple(values)
