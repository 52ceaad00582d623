"""Time: parsing time expressions ("last spring", "Q3 2023", "2024-06-05") into UTC intervals.

Retain uses it to place a fact's occurrence from its text relative to when it was said; the
temporal recall strategy uses it to read the time range of a query relative to ``now``.
"""

from agentmem.temporal.expressions import (
    ParsedTime,
    find_time_expressions,
    parse_time_expression,
)

__all__ = ["ParsedTime", "find_time_expressions", "parse_time_expression"]
