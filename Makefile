# benchreport: every set-up step lives here, so a bare machine (and CI) needs only `make`.
#   make report   build the example report into reports/example/
#   make test     run the test suite
#   make lab      JupyterLab on the project
#   make bench    the performance benchmarks (docs/performance.md)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Debian packages: Chromium for the browser tests (driven by Playwright, never a downloaded
# browser), Pango/HarfBuzz and fonts for WeasyPrint's offline PDF, poppler for pdftoppm,
# pdflatex with booktabs for the LaTeX tables' compile test (about 150 MB installed), PostgreSQL's
# server for the DuckLake fleet test (tests/test_store_lake.py starts its own on a free port).
DEBIAN_PACKAGES := chromium libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core poppler-utils texlive-latex-base texlive-latex-recommended postgresql
PYTEST_ARGS ?= -n 2

.PHONY: setup system-deps report test lint lab bench clean help

help:
	@sed -n '2,6p' Makefile

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@$(MAKE) --no-print-directory system-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[all,test]'
	@# jsonschema imports rfc3987-syntax when present (jupyter-events asks for it), which compiles a
	@# Lark grammar at import: 3 s in every process that imports nbformat (every build, via papermill).
	@# No format we validate needs it (docs/performance.md).
	$(PY) -m pip uninstall --quiet -y rfc3987-syntax lark
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# As root, install what is missing from Debian (apt-get update first). As another user,
# print what to install instead (README: "Not root?").
system-deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else \
	  echo "not root: please install these Debian packages yourself:$$missing" >&2; \
	  echo "(sudo apt-get install$$missing); the PDF and browser tests are skipped until then" >&2; \
	fi

report: setup
	$(VENV)/bin/benchreport build data/example --out reports/example --title "Example: the fleet paper and the four-node field note"

test: setup lint
	$(PY) -m pytest $(PYTEST_ARGS)

# ruff: the lint rules and the formatter's line length are in pyproject.toml ([tool.ruff])
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

lab: setup
	$(VENV)/bin/jupyter lab --no-browser $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) --notebook-dir=. notebooks/explore.ipynb

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) reports/example .pytest_cache
