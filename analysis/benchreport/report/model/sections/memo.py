"""What a report's sections work out from one of the analysis's tables, worked out once.

Several sections need the same lookup made from the same table (the workload labels of the
cells, the per-pass values of each cell): it is kept on the analysis object, beside the table
it was made from, and made again only when the analysis holds another table under that name.
"""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")


def once_per_table(a, name: str, table, make: Callable[[], T]) -> T:
    """`make()`, kept on `a` under `name` while `a` holds the same `table` (the same object);
    made each time for an analysis that takes no attributes. The value is shared: not to be
    changed by its callers."""
    held_all = getattr(a, "__dict__", None)
    if held_all is None:
        return make()
    cache = held_all.setdefault("_benchreport_once", {})
    held = cache.get(name)
    if held is not None and held[0] is table:
        return held[1]
    value = make()
    cache[name] = (table, value)
    return value
