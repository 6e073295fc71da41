"""Values as Java's ``toString`` writes them, which Flink's printed rows, tables and JSON keys show.

>>> java_floating(1e20), java_floating(0.0001), java_floating(100.0), java_floating(0.1, single=True)
('1.0E20', '1.0E-4', '100.0', '0.1')
"""

from __future__ import annotations

import math
from decimal import Decimal


def java_floating(value: float, single: bool = False) -> str:
    """A DOUBLE (or, with ``single``, a FLOAT) as Java's ``Double.toString``/``Float.toString`` writes it: plain digits
    between 10^-3 and 10^7, else scientific (``1.0E20``), with the shortest digits that read back as the same value
    (a FLOAT's as a 32-bit float: 0.1, not 0.10000000149011612)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if single:
        import numpy as np

        shortest = np.format_float_positional(np.float32(value), unique=True, trim="-")
    else:
        shortest = repr(float(value))
    number = Decimal(shortest)
    if 1e-3 <= abs(value) < 1e7:
        plain = format(number, "f")
        return plain if "." in plain else plain + ".0"
    sign, digits, _ = number.as_tuple()
    figures = "".join(map(str, digits)).rstrip("0") or "0"
    return ("-" if sign else "") + figures[0] + "." + (figures[1:] or "0") + "E" + str(number.adjusted())


__all__ = ["java_floating"]
