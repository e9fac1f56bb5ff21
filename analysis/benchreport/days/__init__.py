"""The nightly route: a run store read one date at a time, with what each date gave kept between
analyses (a new night computes its own date only).

- `entries`: a date's entry (its pass rows and 3+-pass cells, keyed by the digest of its inputs)
  and `DayCache`, where entries are kept; `PassDays`, the pass table read one date at a time.
- `scan`: `scan_days`, the year read one date at a time, what an analysis keeps of each date.
- `cells`: `estimate_cells_by_day`, benchreport.stats.cells' estimate over the scanned dates.
- `history`: `history_days`, benchreport.stats.history's walk kept date by date, resumed.
- `store_files`: the caches above as files in a store's `.cache/` (written atomically).

benchreport.stats stays pure (no cache, no files); benchreport.pipeline chooses the route.
"""
