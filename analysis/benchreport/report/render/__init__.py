"""The report's renderers: `html` (view-model and executed notebook -> HTML through the Jinja2
templates), `text` (Markdown, LaTeX and terminal tables), `pdf` and `offline` (HTML -> PDF with
headless Chromium or WeasyPrint, nothing fetched), `compare_page` (the page of `benchreport compare`).
Each is imported by its full name; this package imports nothing on its own."""
