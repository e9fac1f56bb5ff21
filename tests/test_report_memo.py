"""Lookups made once per analysis and table (report.model.sections.memo)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from benchreport.report.model.sections.memo import once_per_table


def test_made_once_while_the_table_is_the_same_and_again_for_another():
    made = []
    a = SimpleNamespace(cells=pd.DataFrame({"x": [1, 2]}))

    def make():
        made.append(1)
        return {"rows": len(a.cells)}

    assert once_per_table(a, "n", a.cells, make) == {"rows": 2}
    assert once_per_table(a, "n", a.cells, make) == {"rows": 2}
    assert len(made) == 1
    a.cells = pd.DataFrame({"x": [1, 2, 3]})  # another table under the same name: made again
    assert once_per_table(a, "n", a.cells, make) == {"rows": 3}
    assert len(made) == 2


def test_an_object_without_attributes_gets_a_fresh_value_each_time():
    made = []
    frame = pd.DataFrame({"x": [1]})
    a = (frame,)  # a tuple takes no attributes
    for _ in range(2):
        once_per_table(a, "n", frame, lambda: made.append(1) or len(made))
    assert len(made) == 2
