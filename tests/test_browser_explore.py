"""explore.ipynb in a real browser: Debian's Chromium driven by Playwright (never downloaded).

Two routes: the executed notebook exported to HTML (`benchreport.explore.export_html`), opened
from disk; and JupyterLab itself on 127.0.0.1, the notebook run top to bottom, a widget
changed and the plot seen to redraw. Both: tables become DataTables, plots are drawn by the
embedded plotly.js, no request leaves the machine, nothing from the data executes.
``BENCHREPORT_SCREENSHOTS=DIR`` keeps screenshots of the JupyterLab run in DIR.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from browser import ARGS, CHROMIUM, MARKS, record_events
from runs import make_run, set_path, write_run

ROOT = Path(__file__).resolve().parents[1]
EXPLORE = ROOT / "notebooks" / "explore.ipynb"
XSS_MODEL = "<script>alert(1)</script>"

pytestmark = MARKS


def _runs(d: Path) -> Path:
    """The example plus a seat whose model is named like a script."""
    shutil.copytree(ROOT / "data" / "example", d / "example")
    for p in range(3):
        run = make_run(run_id=f"xss-p{p + 1}", **{"pass": p + 1})
        run["seat"] = {**run["seat"], "id": "xss-seat", "role": "candidate", "model": XSS_MODEL}
        set_path(run, "measurements.0.value", 900.0 + 10 * p)
        write_run(d / "xss", f"xss-{p + 1}.json", run)
    return d


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory):
    return _runs(tmp_path_factory.mktemp("explore-runs"))


@pytest.fixture(scope="module")
def exported(runs_dir, tmp_path_factory):
    import papermill as pm

    from benchreport.explore import export_html

    playwright = pytest.importorskip("playwright.sync_api")
    out = tmp_path_factory.mktemp("explore-html")
    nb = out / "explore.ipynb"
    pm.execute_notebook(
        str(EXPLORE),
        str(nb),
        parameters={"n_boot": 200, "runs": [str(runs_dir)]},
        kernel_name="python3",
        progress_bar=False,
        cwd=str(EXPLORE.parent),
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    page_path = Path(export_html(nb, out / "explore.html"))
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            events = record_events(page)
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3", timeout=30000)
            page.wait_for_timeout(500)
            found = page.evaluate("""() => ({
                tables: document.querySelectorAll('.dt-container').length,
                plots: document.querySelectorAll('.js-plotly-plot').length,
                search: document.querySelectorAll('.dt-search input').length,
                body: document.body.innerText})""")
            # type into the flags table's search box: DataTables filters the rows
            flags = page.locator(".dt-container", has_text="trap.prefix_cache").first
            flags.locator(".dt-search input").fill("trap.prefix_cache")
            page.wait_for_timeout(300)
            found["flag_rows"] = flags.locator("tbody tr").count()
        finally:
            browser.close()
    return {"events": events, "runs": str(runs_dir), **found}


def test_exported_html_tables_and_plots_are_live(exported):
    assert exported["tables"] >= 6 and exported["search"] == exported["tables"]
    assert exported["plots"] >= 4
    from benchreport import explore

    fv = explore.flags_view(explore.open_runs(exported["runs"], n_boot=200))
    expected = fv.apply(lambda r: any("trap.prefix_cache" in str(v) for v in r), axis=1).sum()
    assert exported["flag_rows"] == expected >= 1  # DataTables' search filtered the rows


def test_exported_html_loads_nothing_and_runs_nothing_from_data(exported):
    ev = exported["events"]
    assert all(u.startswith(("file:", "data:", "blob:")) for u in ev["requests"]), ev["requests"]
    assert not ev["errors"] and ev["dialogs"] == []
    assert XSS_MODEL in exported["body"]  # shown as text


# --- JupyterLab ----------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lab_settings(folder: Path) -> None:
    """No news or update checks (no network), every cell rendered (no windowing), no autosave."""
    settings = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    }
    for name, value in settings.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")


@pytest.fixture(scope="module")
def lab(runs_dir, tmp_path_factory):
    """JupyterLab on 127.0.0.1 serving a copy of explore.ipynb that reads `runs_dir`."""
    work = tmp_path_factory.mktemp("lab")
    nb = nbformat.read(EXPLORE, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source = cell.source.replace('runs = ["../data/example"]', f"runs = [{str(runs_dir)!r}]").replace(
        "n_boot = 2000", "n_boot = 200"
    )
    nbformat.write(nb, work / "explore.ipynb")
    _lab_settings(work / "settings")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={work}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.user_settings_dir={work / 'settings'}",
        f"--LabApp.workspaces_dir={work / 'workspaces'}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(work / "lab.log", "wb"), env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start: " + (work / "lab.log").read_text(errors="replace")[-2000:])
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _shot(page, name: str) -> None:
    folder = os.environ.get("BENCHREPORT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _cell(page, marker: str):
    """The notebook cell whose source contains `marker`."""
    return page.locator(".jp-Notebook .jp-Cell").filter(has=page.locator(".jp-InputArea", has_text=marker)).first


def _open_and_run_all(page, url: str) -> None:
    """Open the notebook, wait for the kernel, run every cell and wait for the plots."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function("window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell')", timeout=90000)
    # the kernel is up when the status bar says so
    page.wait_for_function("document.body.innerText.includes('| Idle')", timeout=90000)
    page.wait_for_timeout(1000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # done when the last code cell has its execution count
    page.wait_for_function(
        "() => { const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];"
        " return p.length && p.every(e => /\\[\\d+\\]/.test(e.textContent)); }",
        timeout=240000,
    )
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 4", timeout=60000)
    page.wait_for_timeout(1500)


def _outputs(page) -> dict:
    """Counts of stderr outputs, tracebacks, tables, plots and widgets in the run notebook."""
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count()
    tracebacks = page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']").count()
    found = page.evaluate("""() => ({
        tables: document.querySelectorAll('.dt-container').length,
        plots: document.querySelectorAll('.js-plotly-plot').length,
        dropdowns: document.querySelectorAll('.widget-dropdown select').length,
        multiselect: document.querySelectorAll('.widget-select-multiple select').length})""")
    return {"errors": errors, "tracebacks": tracebacks, **found}


def _shoot_sections(page) -> None:
    """Each section's output scrolled into view (and kept as a screenshot with BENCHREPORT_SCREENSHOTS)."""
    for marker, name in (
        ("explore.seats_view", "1-seats"),
        ("explore.flags_view", "2-flags"),
        ("ex.show_cells", "3-cells"),
        ("ex.show_comparison", "5-compare"),
        ("ex.show_requests", "6-requests"),
    ):
        _cell(page, marker).scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, 0)")
        _cell(page, marker).locator(".jp-OutputArea").first.scroll_into_view_if_needed()
        page.wait_for_timeout(400)
        _shot(page, name)


def _hover_first_point(page, cell) -> str:
    """The text of plotly's tooltip over the first point of the cell's plot."""
    cell.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    point = cell.locator(".js-plotly-plot .scatterlayer .point").first
    point.hover(force=True)
    page.wait_for_timeout(600)
    hover = page.locator(".hoverlayer").first.text_content() or ""
    _shot(page, "3-cells-hover")
    return hover


def _choose_metric(page, cell, title_before: str, metric: str) -> str:
    """Choose the metric whose label contains `metric` in the cell's dropdown; the plot's new title."""
    select = cell.locator(".widget-dropdown", has_text="metric").locator("select")
    labels = select.evaluate("s => [...s.options].map(o => o.textContent)")
    select.select_option(label=next(x for x in labels if metric in x))
    page.wait_for_function(
        "(b) => { const t = [...document.querySelectorAll('.js-plotly-plot .gtitle')][0];"
        " return t && t.textContent !== b; }",
        arg=title_before,
        timeout=30000,
    )
    page.wait_for_timeout(1000)  # the figure is replaced: wait for the new one to settle
    after = cell.locator(".js-plotly-plot .gtitle").first.text_content()
    cell.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    page.wait_for_timeout(600)
    _shot(page, "4-cells-after-metric-change")
    return after


@pytest.mark.slow
def test_jupyterlab_runs_the_notebook_and_widgets_redraw(lab):
    playwright = pytest.importorskip("playwright.sync_api")
    base, token = lab
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            events = record_events(page)
            _open_and_run_all(page, f"{base}/lab/tree/explore.ipynb?token={token}")
            found = _outputs(page)
            _shoot_sections(page)
            cells = _cell(page, "ex.show_cells")
            before = cells.locator(".js-plotly-plot .gtitle").first.text_content()
            # hover a point: plotly's tooltip shows its numbers
            hover = _hover_first_point(page, cells)
            after = _choose_metric(page, cells, before, "(decode_tok_s_per_stream)")
        finally:
            browser.close()
    assert found["errors"] == 0 and found["tracebacks"] == 0
    assert found["tables"] >= 6 and found["plots"] >= 4 and found["dropdowns"] >= 5 and found["multiselect"] >= 1
    assert "aggregate throughput" in before and "per-stream decode" in after
    assert "estimate" in hover and "passes" in hover
    outside = [u for u in events["requests"] if not u.startswith((base, "data:", "blob:", "ws://127.0.0.1"))]
    assert outside == [], outside
    assert events["dialogs"] == []
