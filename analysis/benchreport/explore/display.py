"""Showing the explorer's tables and figures: offline interactive tables (itables), plotly with
its JavaScript embedded, and widgets that redraw them (ipywidgets).

Nothing is fetched from a network: `offline_mode` embeds DataTables (itables' offline
bundle) and plotly.js in the notebook once, and every figure carries both plotly's own
mimetype (JupyterLab's plotly extension draws it) and HTML that uses the embedded
plotly.js (exported HTML). Views are displayed with a display id and replaced in place
when a widget changes (``update_display_data``), so an executed notebook (papermill, no
browser) keeps the views of the starting selection as ordinary outputs.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from benchreport import format as fmt

from . import plots, views
from .export import EXPLORE_TEMPLATE, export_html
from .pairs import compare, default_pair, shared_counts

__all__ = ["offline_mode", "interactive_table", "display_number", "Explorer", "ALL", "export_html", "EXPLORE_TEMPLATE"]

#: the widgets' "no filter" choice
ALL = "(all)"

#: itables options of every table: offline, searchable, whole cells (no ellipsis), a
#: static HTML table beneath it for a reader without JavaScript
TABLE_OPTIONS = dict(
    connected=False,
    display_logo_when_loading=False,
    classes="display compact cell-border",
    maxBytes="8MB",
    showIndex=False,
    lengthMenu=[10, 25, 100, -1],
    pageLength=10,
    allow_html=False,
    scrollX=True,
    # not itables' default layout, which drops the search box of a table of one page
    layout={"topStart": "info", "topEnd": "search", "bottomStart": "pageLength", "bottomEnd": "paging"},
)

#: wrap long text (messages, methods) instead of cutting it
_CSS = """<style>
.benchreport-explore table.dataTable td { white-space: normal; max-width: 40em; overflow-wrap: break-word;
  word-break: normal; vertical-align: top; }
.benchreport-explore table.dataTable td:first-child { min-width: 14em; }
.benchreport-explore table.dataTable td:not(.dt-type-numeric),
.benchreport-explore table.dataTable th:not(.dt-type-numeric) { text-align: left; }
.benchreport-compare table { border-collapse: collapse; }
.benchreport-compare td, .benchreport-compare th { padding: 2px 8px; border-bottom: 1px solid #ddd; }
</style>"""

_PLOTLY_RENDERER = "benchreport_offline"
_initialised = False


def _register_plotly() -> None:
    import plotly.io as pio
    from plotly.io.base_renderers import MimetypeRenderer

    class OfflineRenderer(MimetypeRenderer):
        """plotly's mimetype (JupyterLab) and HTML on the embedded plotly.js: no CDN, no MathJax."""

        def to_mimebundle(self, fig_dict):
            config = {"displaylogo": False, "responsive": True}
            page = pio.to_html(
                fig_dict,
                config=config,
                include_plotlyjs=False,
                include_mathjax=False,
                full_html=False,
                default_width="100%",
                validate=False,
            )
            return {"application/vnd.plotly.v1+json": {**fig_dict, "config": config}, "text/html": page}

    pio.renderers[_PLOTLY_RENDERER] = OfflineRenderer()
    pio.renderers.default = _PLOTLY_RENDERER


class _Plot:
    """A plotly figure as a plain mimebundle: plotly's own `_ipython_display_` ignores display
    ids, so a figure shown through it could never be replaced in place."""

    def __init__(self, fig):
        self.fig = fig

    def _repr_mimebundle_(self, include=None, exclude=None):
        import plotly.io as pio

        if _PLOTLY_RENDERER not in pio.renderers:
            _register_plotly()
        return pio.renderers[_PLOTLY_RENDERER].to_mimebundle(self.fig.to_plotly_json())


def _displayable(obj):
    return _Plot(obj) if type(obj).__module__.startswith("plotly.") else obj


def offline_mode() -> None:
    """Embed DataTables and plotly.js in the notebook (once per kernel) and route plotly's
    figures through the offline renderer. Call it in the notebook's first code cell."""
    global _initialised
    from benchreport.extras import require

    require("explore", "The analyst's notebook (benchreport.explore)")
    from IPython.display import HTML, display
    from itables import init_notebook_mode
    from plotly.offline import get_plotlyjs

    init_notebook_mode(all_interactive=False, connected=False)
    _register_plotly()
    if not _initialised:
        # window.PlotlyConfig first: plotly.js then never asks for MathJax
        display(
            HTML(
                "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>"
                f'<script type="text/javascript">{get_plotlyjs()}</script>' + _CSS
            )
        )
        _initialised = True


#: columns that hold a p-value, and columns that hold a candidate/baseline ratio (with its CI
#: where the table has a ratio): rounded as the report rounds them (`display_number`)
P_COLUMNS = ("p_value", "p_adj", "p", "p_exact", "p_holm")
RATIO_COLUMNS = ("ratio",)


def display_number(column: str, value, *, ratios: bool = False) -> str:
    """`value` of `column` as the report prints it: p-values as `format.pval` (0.31, < 0.001),
    a ratio and, in a table of ratios (`ratios`), its CI bounds as `format.ratio3` (0.812),
    every other figure as `format.num` (95,941 · 763.9 · 35 · 0.812); missing as an empty cell."""
    if fmt.missing(value):
        return ""
    name = str(column).lower()
    if name in P_COLUMNS or name.startswith("p_adj"):
        return fmt.pval(value, missing_text="")
    if name in RATIO_COLUMNS or (ratios and name in ("ci_low", "ci_high")):
        return fmt.ratio3(value)
    return fmt.num(value, missing_text="")


def _flat_for_display(df: pd.DataFrame) -> pd.DataFrame:
    """Lists as '[a, b]' text, dicts as 'key: value' text, floats rounded as the report rounds
    them (`display_number`) and missing values as empty cells, so DataTables shows them whole
    and readable (numbers with thousands separators still sort as numbers: DataTables' num-fmt).
    The frame shown is a copy: the analysis keeps every figure at full precision."""
    out = df.copy()
    ratios = any(str(c).lower() in RATIO_COLUMNS for c in out.columns)
    for c in out.columns:
        if any(isinstance(v, (list, tuple)) for v in out[c]):
            out[c] = out[c].map(
                lambda v: "[" + ", ".join(fmt.num(x) for x in v) + "]" if isinstance(v, (list, tuple)) else v
            )
        elif any(isinstance(v, dict) for v in out[c]):
            out[c] = out[c].map(lambda v: ", ".join(f"{k}: {x}" for k, x in v.items()) if isinstance(v, dict) else v)
        elif pd.api.types.is_float_dtype(out[c]):
            out[c] = [display_number(c, v, ratios=ratios) for v in out[c]]
        elif not pd.api.types.is_bool_dtype(out[c]) and out[c].isna().any():
            out[c] = out[c].astype(object).where(out[c].notna(), "")
    return out


def interactive_table(df: pd.DataFrame, caption: str | None = None, **options: Any):
    """`df` as a searchable, sortable DataTable (itables, offline), cells escaped; an IPython HTML object."""
    from IPython.display import HTML
    from itables import to_html_datatable

    kw = {**TABLE_OPTIONS, **options}
    if caption:
        kw["caption"] = caption
    body = to_html_datatable(_flat_for_display(df.reset_index(drop=True)), **kw)
    return HTML(f'<div class="benchreport-explore">{body}</div>')


class _Controls:
    """A box of widgets whose plain-text form (an executed notebook, no browser) says what is selected."""

    def __init__(self, box, describe):
        self.box, self.describe = box, describe

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.box._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["text/plain"] = self.describe()
        # an exported page shows this in place of the widgets, which need a running kernel
        data["text/html"] = (
            "<p><em>"
            + html.escape(self.describe())
            + "</em> (the widgets change it in JupyterLab; here, type in a table's search box to filter its rows)</p>"
        )
        return bundle


#: beyond this many seats the starting selection is the baseline and its closest seats
MAX_DEFAULT_SEATS = 10


def _default_seats(a, baseline, others) -> list[str]:
    """The baseline and the seats sharing the most cells and exam tasks with it."""
    counts = shared_counts(a)
    ranked = sorted(others, key=lambda s: -sum(counts.get(frozenset((baseline, s)), (0, 0))))
    return ([baseline] if baseline else []) + ranked[: MAX_DEFAULT_SEATS - 1]


class Explorer:
    """Widgets over one analysis: seats, metric, statistic, workload, concurrency, baseline,
    candidate, harness, pass and per-request field; each view redraws when one changes.

    The starting selection comes from the keyword arguments (None: everything, or for
    `seats` every seat, or at fleet scale the baseline and the nine seats it shares most cells with;
    for `baseline` the analysis's baseline, for `candidate` the seat sharing the most cells and
    exam tasks with it; with neither, the pair of seats sharing the most: `pair_reason` says why).
    """

    def __init__(
        self,
        a,
        *,
        seats=None,
        metric: str = "output_tok_s",
        statistic: str = "mean",
        workload=None,
        concurrency=None,
        baseline: str | None = None,
        candidate: str | None = None,
        harness=None,
        pass_=None,
        request_field: str = "ttft_ms",
    ):
        self.a = a
        self.options = views.choices(a)
        seat_ids = self.options["seats"]
        if seats is not None:
            views.check_seats(a, seats)
        for _name, value in (("baseline", baseline), ("candidate", candidate)):
            if value is not None:
                views.check_seats(a, [value])
        first, best, self.pair_reason = default_pair(a, baseline)
        if candidate is not None:
            self.pair_reason = "the candidate given"
        candidate = candidate or best
        others = [s for s in seat_ids if s != first]
        self.state = {
            # None: every seat (an empty selection shows all); at fleet scale the baseline and the
            # seats it shares most cells with
            "seats": list(seats)
            if seats is not None
            else ([] if len(seat_ids) <= MAX_DEFAULT_SEATS else _default_seats(a, first, others)),
            "metric": metric
            if metric in self.options["metrics"] or not self.options["metrics"]
            else self.options["metrics"][0],
            "statistic": statistic,
            "workload": workload,
            "concurrency": concurrency,
            "baseline": first,
            "candidate": candidate,
            "harness": harness,
            "pass": pass_,
            "request_field": request_field
            if request_field in self.options["request_fields"] or not self.options["request_fields"]
            else self.options["request_fields"][0],
        }
        self._widgets: dict | None = None

    # --- what each view shows (plain data: testable without a frontend) ---------------------
    def cells_table(self) -> pd.DataFrame:
        s = self.state
        return views.cells_view(
            self.a,
            metric=s["metric"],
            statistic=s["statistic"],
            seats=s["seats"] or None,
            workload=s["workload"],
            concurrency=s["concurrency"],
            harness=s["harness"],
            passes_as="columns",
        )

    def cells_figure(self):
        s = self.state
        return plots.concurrency_plot(
            self.a,
            s["metric"],
            statistic=s["statistic"],
            seats=s["seats"] or None,
            workload=s["workload"],
            harness=s["harness"],
        )

    def passes_figure(self):
        s = self.state
        return plots.passes_plot(
            self.a,
            s["metric"],
            statistic=s["statistic"],
            seats=s["seats"] or None,
            workload=s["workload"],
            concurrency=s["concurrency"],
        )

    def comparison(self):
        s = self.state
        if not s["baseline"] or not s["candidate"] or s["baseline"] == s["candidate"]:
            return None
        return compare(self.a, s["baseline"], s["candidate"])

    def pair_note(self) -> str:
        """Which two seats the comparison first shows, and why those."""
        s = self.state
        if not s["candidate"]:
            return f"Nothing to compare: {self.pair_reason}."
        return f"First shown: {s['candidate']} against {s['baseline']}, {self.pair_reason}."

    def request_filters(self) -> dict:
        """The drill-down's current selection as keywords of `requests_view` / `request_summary`."""
        s = self.state
        return dict(
            seats=s["seats"] or None,
            workload=s["workload"],
            concurrency=s["concurrency"],
            pass_=s["pass"],
            harness=s["harness"],
        )

    def request_table(self) -> pd.DataFrame:
        return views.request_summary(self.a, self.state["request_field"], **self.request_filters())

    def request_figure(self):
        return plots.requests_plot(self.a, self.state["request_field"], **self.request_filters())

    def describe(self, *names: str) -> str:
        """The selection in words ('metric: output_tok_s; seats: a, b')."""
        words = []
        for n in names:
            v = self.state[n]
            words.append(
                f"{n}: {ALL if v is None or v == [] else (', '.join(map(str, v)) if isinstance(v, list) else v)}"
            )
        return "; ".join(words)

    # --- widgets ------------------------------------------------------------------------------
    def _make_widgets(self) -> dict:
        import ipywidgets as w

        o, s = self.options, self.state
        labels = views.seat_labels(self.a)
        layout = w.Layout(width="auto")
        style = {"description_width": "initial"}

        def drop(name, options, value, description):
            opts = [(ALL, ALL)] + [(fmt.text(x), x) for x in options]
            return w.Dropdown(
                options=opts, value=ALL if value is None else value, description=description, style=style, layout=layout
            )

        ws = {
            "seats": w.SelectMultiple(
                options=[(labels[x], x) for x in o["seats"]],
                value=tuple(s["seats"]),
                rows=min(8, max(3, len(o["seats"]))),
                description="seats",
                style=style,
                layout=w.Layout(width="60%"),
            ),
            "metric": w.Dropdown(
                options=[(f"{fmt.metric_words(m)} ({m})", m) for m in o["metrics"]] or [("–", None)],
                value=s["metric"] if o["metrics"] else None,
                description="metric",
                style=style,
            ),
            "statistic": w.Dropdown(
                options=o["statistics"] or ["mean"],
                value=s["statistic"]
                if s["statistic"] in (o["statistics"] or ["mean"])
                else (o["statistics"] or ["mean"])[0],
                description="statistic",
                style=style,
            ),
            "workload": drop("workload", o["workloads"], s["workload"], "workload"),
            "concurrency": drop("concurrency", o["concurrencies"], s["concurrency"], "concurrency"),
            "harness": drop("harness", o["harnesses"], s["harness"], "harness"),
            "pass": drop("pass", o["passes"], s["pass"], "pass"),
            "baseline": w.Dropdown(
                options=[(labels[x], x) for x in o["seats"]],
                value=s["baseline"],
                description="baseline",
                style=style,
                layout=w.Layout(width="60%"),
            ),
            "candidate": w.Dropdown(
                options=[(labels[x], x) for x in o["seats"]],
                value=s["candidate"],
                description="candidate",
                style=style,
                layout=w.Layout(width="60%"),
            ),
            "request_field": w.Dropdown(
                options=o["request_fields"] or [s["request_field"]],
                value=s["request_field"],
                description="per-request field",
                style=style,
            ),
        }
        self.state["statistic"] = ws["statistic"].value
        return ws

    @property
    def widgets(self) -> dict:
        """The widgets by name (made on first use; they need ipywidgets)."""
        if self._widgets is None:
            self._widgets = self._make_widgets()
        return self._widgets

    def _read(self, name: str, value) -> None:
        if name == "seats":
            self.state["seats"] = list(value)
        else:
            self.state[name] = None if value == ALL else value

    def _section(self, names: tuple[str, ...], render) -> None:
        """Display the controls `names`, then `render()`'s outputs, redrawn in place on a change."""
        import ipywidgets as w
        from IPython.display import display

        ws = self.widgets
        box = w.VBox(
            [
                w.HBox([ws[n] for n in names if n != "seats"], layout=w.Layout(flex_flow="row wrap")),
                *[ws[n] for n in names if n == "seats"],
            ]
        )
        display(_Controls(box, lambda: "Selection: " + self.describe(*names)))
        handles = [display(_displayable(out), display_id=True) for out in render()]

        def redraw(change) -> None:
            self._read(change["owner"]._benchreport_name, change["new"])
            from IPython.display import Markdown

            for h, out in zip(handles, render()):
                shown = _displayable(out)
                if isinstance(shown, _Plot):
                    # JupyterLab's plotly renderer draws a figure once: an output of another
                    # type in between makes it draw the new one
                    h.update(Markdown("*redrawing…*"))
                h.update(shown)

        for n in names:
            ws[n]._benchreport_name = n
            ws[n].observe(redraw, names="value")

    @staticmethod
    def _or_note(obj, note: str):
        from IPython.display import Markdown

        return obj if obj is not None else Markdown(note)

    def show_cells(self) -> None:
        """Cells of the selected metric: a searchable table, the metric against concurrency, and per pass."""

        def render():
            t = self.cells_table()
            return [
                interactive_table(t, f"{len(t)} cells: {self.describe('metric', 'statistic')}")
                if len(t)
                else self._or_note(None, f"No cell of {self.describe('metric', 'statistic', 'workload')}."),
                self._or_note(
                    self.cells_figure(),
                    "Nothing to plot against concurrency for this selection (fewer than one concurrency level).",
                ),
                self._or_note(self.passes_figure(), "No cell of this selection was measured in two or more passes."),
            ]

        self._section(("metric", "statistic", "workload", "concurrency", "harness", "seats"), render)

    def show_comparison(self) -> None:
        """The candidate against the baseline, every shared cell (`compare`), and its forest plot."""

        def render():
            c = self.comparison()
            if c is None:
                return [self._or_note(None, "Pick two different seats to compare."), self._or_note(None, " ")]
            return [c, self._or_note(plots.comparison_plot(c), "The two seats share no cell to plot.")]

        from IPython.display import HTML, display

        display(HTML(f"<p><em>{html.escape(self.pair_note())}</em></p>"))

        self._section(("baseline", "candidate"), render)

    def show_requests(self) -> None:
        """The per-request drill-down: requests per seat, harness, workload, concurrency and pass."""

        def render():
            t = self.request_table()
            if not len(t):
                return [
                    self._or_note(
                        None,
                        "No request records for this selection (the harness kept none, or the filters leave none).",
                    ),
                    self._or_note(None, " "),
                ]
            return [
                interactive_table(
                    t, f"Requests by seat, harness, workload, concurrency and pass: {self.describe('request_field')}"
                ),
                self._or_note(self.request_figure(), "No values of this field."),
            ]

        self._section(("request_field", "harness", "workload", "concurrency", "pass", "seats"), render)
