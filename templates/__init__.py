"""The report's nbconvert and Jinja2 templates, shipped as package data (`benchreport.templates`)."""
