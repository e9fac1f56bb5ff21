"""The report and explore notebooks, shipped as package data (`benchreport.notebooks`)."""
