"""Flink's ``INET_ATON`` and ``INET_NTOA``: IPv4 addresses between their dotted text and a number, as Spark SQL.

Flink reads an address as MySQL does: one to four dot-separated decimal parts of 0..255 each, the last part the lowest
byte and the others the highest bytes in order (``'127.1'`` is 127.0.0.1, 2130706433); anything else (a sign, a
space, an empty part, a part over 255) is NULL. A number outside 0..4294967295 has no address (NULL).

>>> inet_ntoa("x").startswith("(CASE WHEN CAST(x AS BIGINT) BETWEEN 0 AND 4294967295 THEN concat_ws('.', ")
True
"""

from __future__ import annotations

from kindling.sql.bound_values import bound_once


def inet_aton(address: str) -> str:
    """Spark SQL for ``INET_ATON(address)``: the address's BIGINT, NULL for what is no address."""
    given = "__kindling_ip"  # the address, bound once
    parts = f"split({given}, '[.]')"
    part = f"CAST(element_at({parts}, __kindling_p) AS BIGINT)"
    # the value of parts 1..n-1 in the high bytes, then the last part
    high = (f"aggregate(sequence(1, size({parts}) - 1), CAST(0 AS BIGINT), (__kindling_sum, __kindling_p) -> "
            f"__kindling_sum + shiftleft({part}, 32 - 8 * __kindling_p), __kindling_sum -> __kindling_sum)")
    last = f"CAST(element_at({parts}, -1) AS BIGINT)"
    small = (f"forall({parts}, __kindling_x -> length(trim(LEADING '0' FROM __kindling_x)) <= 3 "
             f"AND CAST(concat('0', trim(LEADING '0' FROM __kindling_x)) AS INT) <= 255)")
    valid = f"{given} RLIKE '^[0-9]+([.][0-9]+){{0,3}}$' AND {small}"
    return bound_once(address, given, f"CASE WHEN {valid} THEN (CASE WHEN size({parts}) = 1 THEN {last} ELSE {high} + {last} END) END")


def inet_ntoa(number: str) -> str:
    """Spark SQL for ``INET_NTOA(number)``: the dotted address of a number in 0..4294967295, NULL for any other."""
    n = f"CAST({number} AS BIGINT)"
    parts = ", ".join(f"CAST(shiftright({n}, {bits}) & 255 AS STRING)" for bits in (24, 16, 8)) + f", CAST({n} & 255 AS STRING)"
    return f"(CASE WHEN {n} BETWEEN 0 AND 4294967295 THEN concat_ws('.', {parts}) END)"
