"""An expression evaluated once and named inside another, in Spark SQL (which has no LET).

Rewrites that need an argument in several branches would otherwise write it out in each: with an argument that is
itself an expression (or another rewrite), the plan grows with every level, and planning and code generation with it.
A one-element array mapped by a lambda binds the value once.

>>> bound_once("a + b", "__kindling_x", "__kindling_x * __kindling_x")
'element_at(transform(array(a + b), __kindling_x -> __kindling_x * __kindling_x), 1)'
"""

from __future__ import annotations


def bound_once(value: str, variable: str, body: str) -> str:
    """Spark SQL giving ``body`` with ``variable`` standing for ``value``, evaluated once per row."""
    return f"element_at(transform(array({value}), {variable} -> {body}), 1)"
