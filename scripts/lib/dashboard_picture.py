"""Draws config/grafana/mirror-maker.json as a PNG from a Prometheus server's
data: every panel's queries are sent to Prometheus's HTTP API (query_range
for time series and stats, an instant query for tables) and the panels are
laid out on the dashboard's own 24-column grid, with their titles and
units. Grafana itself is not installable here, and the README wants a
picture of the dashboard with the data of a real run.

Run with Debian's /usr/bin/python3 (it has matplotlib; scripts/dashboard-picture
does). Grafana's variables are replaced as Grafana would on "All":
$instance, $source, $flow match everything; $__rate_interval is
max(4 x scrape interval, step + scrape interval), $__interval the step,
$__range the whole range.

Usage:
  dashboard_picture.py --prometheus http://127.0.0.1:19190 \
      --start 1700000000 --end 1700000300 --out docs/dashboard.png \
      [--dashboard config/grafana/mirror-maker.json] [--step 5] [--scrape-interval 5]
"""

import argparse
import json
import re
import sys
import urllib.parse
import urllib.request
from datetime import datetime, timezone

import matplotlib

matplotlib.use("Agg")  # no display on the test machines
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
from PIL import Image  # noqa: E402  (matplotlib's own dependency, python3-pil)

# Grafana's dark theme, so the picture reads as the dashboard people will see.
BACKGROUND = "#111217"
PANEL = "#181b1f"
BORDER = "#2c3235"
TEXT = "#ccccdc"
MUTED = "#8e8e9e"
PALETTE = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2", "#b877d9", "#705da0", "#37872d", "#fade2a"]

# Height of one grid row of Grafana (30 px) in inches at the picture's scale.
ROW_INCHES = 0.26
WIDTH_INCHES = 18.0


def si(value, suffix="", base=1000.0, prefixes=("", "k", "M", "G", "T")):
    """1234 -> '1.23 k' + suffix, as Grafana's short units print."""
    if value != value:  # NaN
        return "-"
    sign = "-" if value < 0 else ""
    value = abs(value)
    i = 0
    while value >= base and i < len(prefixes) - 1:
        value /= base
        i += 1
    digits = 0 if value >= 100 or (i == 0 and value == int(value)) else (1 if value >= 10 else 2)
    return f"{sign}{value:.{digits}f}{(' ' + prefixes[i]) if prefixes[i] else ''}{suffix}".replace("  ", " ")


def seconds(value):
    """A duration the way Grafana's `s` unit prints it."""
    if value != value:
        return "-"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 60:
        return f"{value:.1f} s"
    if value < 3600:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


# Grafana unit id -> (formatter of a value, label of the y axis).
UNITS = {
    "rps": (lambda v: si(v, " rec/s"), "records/s"),
    "ops": (lambda v: si(v, " /s"), "per second"),
    "Bps": (lambda v: si(v, "B/s"), "bytes/s"),
    "bytes": (lambda v: si(v, "B", 1024.0, ("", "Ki", "Mi", "Gi", "Ti")), "bytes"),
    "s": (seconds, "duration"),
    "ms": (lambda v: seconds(v / 1000.0), "duration"),
    "percentunit": (lambda v: f"{v * 100:.0f}%" if v == v else "-", "of one core"),
    "short": (lambda v: si(v), ""),
}


def unit_of(panel):
    return UNITS.get(panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short"), UNITS["short"])


class Prometheus:
    def __init__(self, url, start, end, step, scrape_interval):
        self.url = url.rstrip("/")
        self.start, self.end, self.step = start, end, step
        rate_interval = max(4 * scrape_interval, step + scrape_interval)
        self.replacements = {
            "$__rate_interval": f"{int(rate_interval)}s",
            "$__interval": f"{int(step)}s",
            "$__range": f"{int(end - start)}s",
            "$instance": ".*",
            "$source": ".*",
            "$flow": ".*",
        }

    def expand(self, expr):
        # Longest names first, so $__range is not read as $__r + "ange".
        for name in sorted(self.replacements, key=len, reverse=True):
            expr = expr.replace(name, self.replacements[name])
        if "$" in expr:
            raise SystemExit(f"dashboard_picture: a variable this script does not know in {expr}")
        return expr

    def _get(self, path, params):
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=60) as answer:
            body = json.load(answer)
        if body.get("status") != "success":
            raise SystemExit(f"dashboard_picture: Prometheus refused {params.get('query')}: {body}")
        return body["data"]["result"]

    def range(self, expr):
        return self._get("/api/v1/query_range", {"query": self.expand(expr), "start": self.start, "end": self.end, "step": self.step})

    def instant(self, expr):
        return self._get("/api/v1/query", {"query": self.expand(expr), "time": self.end})


def legend(template, labels):
    """Grafana's legendFormat: {{label}} replaced, __auto the label set."""
    if not template or template == "__auto":
        return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__") + "}"
    text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), template)
    return " ".join(text.split())


def frame(fig, cell, title, inset):
    """A Grafana panel: a box over the whole grid cell with the title at its
    top left, and the plotting area inside it, `inset` = (left, bottom,
    right, top) margins in inches leaving room for the title and the tick
    labels (axes that filled the cell put their titles over the panel above)."""
    box = fig.add_subplot(cell)
    box.set_xticks([])
    box.set_yticks([])
    box.set_facecolor(PANEL)
    for spine in box.spines.values():
        spine.set_color(BORDER)
    width, height = fig.get_size_inches()
    title_pad = 0.06 / height / box.get_position().height
    box.text(0.006 * 24 / max(1, cell.colspan.stop - cell.colspan.start), 1 - title_pad, title, color=TEXT, fontsize=9, fontweight="bold",
             transform=box.transAxes, va="top", ha="left")
    where = box.get_position()
    left, bottom, right, top = inset
    ax = fig.add_axes([where.x0 + left / width, where.y0 + bottom / height, where.width - (left + right) / width, where.height - (bottom + top) / height])
    ax.set_facecolor(PANEL)
    for spine in ax.spines.values():
        spine.set_color(BORDER)
    ax.tick_params(colors=MUTED, labelsize=7)
    return ax


def no_data(ax):
    ax.text(0.5, 0.5, "No data", color=MUTED, ha="center", va="center", transform=ax.transAxes, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])


def timeseries(ax, panel, prom, empty):
    fmt, axis_label = unit_of(panel)
    drawn = 0
    for target in panel["targets"]:
        for series in prom.range(target["expr"]):
            points = [(float(t), float(v)) for t, v in series["values"]]
            xs = [datetime.fromtimestamp(t, tz=timezone.utc) for t, _ in points]
            ys = [v for _, v in points]
            colour = PALETTE[drawn % len(PALETTE)]
            ax.plot(xs, ys, color=colour, linewidth=1.1, label=legend(target.get("legendFormat"), series["metric"]))
            ax.fill_between(xs, ys, color=colour, alpha=0.08)
            drawn += 1
    if not drawn:
        empty.append(panel["title"])
        no_data(ax)
        return
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
    span = prom.end - prom.start
    ax.xaxis.set_major_locator(mdates.AutoDateLocator(tz=timezone.utc, minticks=3, maxticks=7))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S" if span < 1800 else "%H:%M", tz=timezone.utc))
    ax.set_xlim(datetime.fromtimestamp(prom.start, tz=timezone.utc), datetime.fromtimestamp(prom.end, tz=timezone.utc))
    ax.set_xlabel("time (UTC)", color=MUTED, fontsize=6, labelpad=1)
    if axis_label:
        ax.set_ylabel(axis_label, color=MUTED, fontsize=7)
    ax.grid(color=BORDER, linewidth=0.5)
    handles, labels = ax.get_legend_handles_labels()
    # A legend of dozens of partitions would hide the lines; Grafana scrolls it.
    shown = 6
    extra = len(handles) - shown
    if extra > 0:
        handles, labels = handles[:shown], labels[:shown - 1] + [f"{labels[shown - 1]}  (+{extra} more)"]
    ax.legend(handles, labels, fontsize=6, loc="upper left", frameon=False, labelcolor=TEXT, ncol=2 if len(handles) > 3 else 1)


def stat(ax, panel, prom, empty):
    fmt, _ = unit_of(panel)
    values = []
    for target in panel["targets"]:
        for series in prom.range(target["expr"]):
            values.append([(float(t), float(v)) for t, v in series["values"]])
    ax.set_xticks([])
    ax.set_yticks([])
    if not values:
        empty.append(panel["title"])
        no_data(ax)
        return
    points = values[0]
    last = points[-1][1]
    # Grafana's stat: the last value, red past the panel's first threshold above "base".
    steps = panel.get("fieldConfig", {}).get("defaults", {}).get("thresholds", {}).get("steps", [])
    colour = PALETTE[0]
    for step in steps:
        if step.get("value") is not None and last >= step["value"]:
            colour = "#f2495c" if step.get("color") == "red" else step.get("color", colour)
    xs = [t for t, _ in points]
    ys = [v for _, v in points]
    ax.fill_between(xs, ys, color=colour, alpha=0.15)
    ax.plot(xs, ys, color=colour, linewidth=1, alpha=0.6)
    top = max(ys) if max(ys) > 0 else 1
    ax.set_ylim(0, top * 2.2)
    ax.set_xlim(xs[0], xs[-1])
    ax.text(0.5, 0.55, fmt(last), color=colour, ha="center", va="center", transform=ax.transAxes, fontsize=17, fontweight="bold")


def table(ax, panel, prom, empty, rows=6):
    ax.set_xticks([])
    ax.set_yticks([])
    results = []
    for target in panel["targets"]:
        results.extend(prom.instant(target["expr"]))
    if not results:
        empty.append(panel["title"])
        no_data(ax)
        return
    renamed = {}
    for t in panel.get("transformations", []):
        renamed.update(t.get("options", {}).get("renameByName", {}))
    labels = {k for r in results for k in r["metric"] if k != "__name__"}
    # Columns in the order the query groups by, which is the order of
    # meaning (source, flow, topic, partition); Grafana sorts them by name.
    by = re.search(r"by \(([^)]*)\)", panel["targets"][0]["expr"])
    order = [c.strip() for c in by.group(1).split(",")] if by else []
    columns = [c for c in order if c in labels] + sorted(labels - set(order))
    header = columns + [renamed.get("Value", "Value")]
    fmt, _ = unit_of(panel)
    body = [[r["metric"].get(c, "") for c in columns] + [fmt(float(r["value"][1]))] for r in results[:rows]]
    if len(results) > rows:
        body.append(["…"] * len(header))
    cells = ax.table(cellText=body, colLabels=header, loc="upper center", cellLoc="left", colLoc="left", bbox=[0.01, 0.0, 0.98, 0.97])
    cells.auto_set_font_size(False)
    cells.set_fontsize(7)
    for (row, _), cell in cells.get_celld().items():
        cell.set_edgecolor(BORDER)
        cell.set_facecolor("#22252b" if row == 0 else PANEL)
        cell.get_text().set_color(TEXT if row else MUTED)


def draw(dashboard, prom, out, subtitle):
    panels = dashboard["panels"]
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    title_rows = 2
    fig = plt.figure(figsize=(WIDTH_INCHES, (bottom + title_rows) * ROW_INCHES), facecolor=BACKGROUND)
    # Grafana leaves a few pixels between panels.
    grid = fig.add_gridspec(bottom + title_rows, 24, left=0.006, right=0.994, top=0.995, bottom=0.005, wspace=0.25, hspace=0.35)
    head = fig.add_subplot(grid[0:title_rows, :])
    head.axis("off")
    head.text(0, 0.65, dashboard["title"], color=TEXT, fontsize=14, fontweight="bold", transform=head.transAxes, va="center")
    head.text(0, 0.05, subtitle, color=MUTED, fontsize=8, transform=head.transAxes, va="center")
    empty = []
    for panel in panels:
        g = panel["gridPos"]
        rows = slice(title_rows + g["y"], title_rows + g["y"] + g["h"])
        cols = slice(g["x"], g["x"] + g["w"])
        if panel["type"] == "row":
            ax = fig.add_subplot(grid[rows, cols])
            ax.axis("off")
            ax.text(0, 0.2, panel["title"], color=TEXT, fontsize=11, fontweight="bold", transform=ax.transAxes, va="center")
            continue
        kind = panel["type"]
        ax = frame(fig, grid[rows, cols], panel["title"], INSETS[kind])
        if kind != "timeseries":
            # Stats and tables draw on the panel itself, without a plot box.
            for spine in ax.spines.values():
                spine.set_visible(False)
        {"timeseries": timeseries, "stat": stat, "table": table}[kind](ax, panel, prom, empty)
    fig.savefig(out, dpi=72, facecolor=BACKGROUND)
    # A palette of 128 colours loses nothing visible in flat panels and
    # thin lines, and keeps the README's picture small.
    Image.open(out).convert("RGB").quantize(colors=128).save(out, optimize=True)
    return empty


# Margins of the plotting area inside a panel, in inches (left, bottom,
# right, top): room for the y tick labels and axis label, the time axis,
# and the title.
INSETS = {"timeseries": (0.75, 0.42, 0.12, 0.3), "stat": (0.05, 0.05, 0.05, 0.3), "table": (0.08, 0.05, 0.08, 0.3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prometheus", required=True, help="base URL of the Prometheus server")
    parser.add_argument("--start", required=True, type=float, help="unix seconds")
    parser.add_argument("--end", required=True, type=float, help="unix seconds")
    parser.add_argument("--step", type=float, default=5.0, help="seconds between points (5)")
    parser.add_argument("--scrape-interval", type=float, default=5.0, help="the server's scrape interval in seconds (5), for $__rate_interval")
    parser.add_argument("--dashboard", default="config/grafana/mirror-maker.json")
    parser.add_argument("--out", required=True, help="PNG to write")
    parser.add_argument("--subtitle", default="", help="line under the title (the run it shows)")
    args = parser.parse_args()
    if args.end <= args.start:
        raise SystemExit("dashboard_picture: --end must be after --start")
    with open(args.dashboard, encoding="utf-8") as f:
        dashboard = json.load(f)
    prom = Prometheus(args.prometheus, args.start, args.end, args.step, args.scrape_interval)
    span = f"{datetime.fromtimestamp(args.start, tz=timezone.utc):%Y-%m-%d %H:%M:%S} to {datetime.fromtimestamp(args.end, tz=timezone.utc):%H:%M:%S} UTC"
    empty = draw(dashboard, prom, args.out, f"{args.subtitle}  ·  {span}" if args.subtitle else span)
    # Panels without data are drawn ("No data", as Grafana does) and named
    # here, so a run that missed a series is seen without opening the PNG.
    for title in empty:
        print(f"dashboard_picture: no data for panel {title!r}", file=sys.stderr)
    print(f"dashboard_picture: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
