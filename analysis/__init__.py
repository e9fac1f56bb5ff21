"""benchreport: honest, paper-style reports from LLM-serving benchmark runs.

Data flows one way: `load` (files -> validated runs) -> `tables` (tidy DataFrames)
-> `stats` (estimates, CIs, comparisons, exam tests) -> `flags` (what the numbers
will not carry) -> `report` (figures, HTML, PDF).
"""
__version__ = "0.1.0"
