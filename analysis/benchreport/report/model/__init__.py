"""The report's view-model, pure: `sections` (an Analysis -> paragraphs, tables and figure blocks,
one module per section) and `figures` (tidy tables -> matplotlib Figures in one theme). Nothing here
imports a renderer (`benchreport.report.render`); blocks become HTML through `html_hook`, which the
renderer fills when it is imported."""
