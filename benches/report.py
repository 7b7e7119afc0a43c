#!/usr/bin/env python3
"""Turns the RESULT lines of a benches/run.sh run into results/latest.md and SVG charts.

Every benchmark program (Rust in benches/, Go in benches/go) prints, after its tables, one line
per implementation: `RESULT bench=NAME key=value ... impl="..." ...`, values with spaces
quoted. This reads them from RESULTS_DIR/raw/*.txt, with RESULTS_DIR/machine.txt and
commands.txt that run.sh wrote, and writes RESULTS_DIR/latest.md and RESULTS_DIR/*.svg.

The charts are written as plain SVG here rather than with plotters (which the issue suggests)
so that neither the crate nor the script needs a new dependency: Python 3's standard library
only.

Usage: python3 benches/report.py RESULTS_DIR [--quick] [--seconds N] [--repeats N]
"""

import argparse
import math
import shlex
from collections import defaultdict
from pathlib import Path
from xml.sax.saxutils import escape

# Each benchmark's reference implementation: ratios are its wall time over the row's.
BASELINES = {
    "pingpong": "crossbeam-channel unbounded",
    "msgsend": "crossbeam-channel unbounded",
    "ring": "crossbeam-channel",
    "farm": "crossbeam-channel",
    "pipeline": "crossbeam-channel",
    "producer_consumer": "crossbeam-channel bounded(100)",
    "sessions": "crossbeam-channel bounded(1) pair",
}


def parse(raw_dir):
    """Every RESULT line under raw_dir, as dicts with numbers converted."""
    records = []
    # Rust programs first, then Go's, so every chart and table lists them in that order.
    for path in sorted(raw_dir.glob("*.txt"), key=lambda p: (p.name.startswith("go-"), p.name)):
        for line in path.read_text().splitlines():
            if not line.startswith("RESULT "):
                continue
            record = {"source": path.stem}
            for field in shlex.split(line)[1:]:
                key, _, value = field.partition("=")
                try:
                    record[key] = int(value)
                except ValueError:
                    try:
                        record[key] = float(value)
                    except ValueError:
                        record[key] = value
            records.append(record)
    return records


def is_go(name):
    return name.startswith("go ")


def fmt(value, digits=3):
    """A number with `digits` significant digits, thousands separated when large."""
    if value >= 10 ** digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def speed(baseline, value):
    return f"{baseline / value:.2f}x" if baseline else "n/a"


def table(header, rows):
    """A markdown table; columns after the first are right-aligned (numbers)."""
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def ordered(records, key):
    """Rust rows in the programs' order, then Go's rows, each sorted by speed."""
    return sorted(records, key=lambda r: (is_go(r["impl"]), key(r)))


# ---------------------------------------------------------------------------------------------
# SVG charts


PALETTE = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22", "#000000", "#aec7e8", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
]

# One colour per implementation name across every chart (filled in by main), so a peer keeps
# its colour from chart to chart.
COLORS = {}


def ticks(low, high, log):
    """Tick positions for an axis: decades (and 2, 5 within few decades) on a log axis."""
    if log:
        out = []
        for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
            steps = (1, 2, 5) if math.log10(high / low) < 3 else (1,)
            out += [m * 10 ** e for m in steps if low <= m * 10 ** e <= high]
        return out or [low, high]
    step = 10 ** math.floor(math.log10((high - low) or 1))
    if (high - low) / step < 4:
        step /= 2
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def label(v):
    if v >= 1e9:
        return f"{v / 1e9:g}G"
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def chart(path, title, x_label, y_label, series, x_log=True, y_log=True):
    """A line chart: series is {name: [(x, y), ...]}; Go's lines are dashed."""
    width, height = 860, 460
    left, right, top, bottom = 80, 290, 40, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [p for s in series.values() for p in s if p[1] > 0]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = min(ys), max(ys)
    if y_log:
        y_lo, y_hi = y_lo / 1.3, y_hi * 1.3
    else:
        y_lo, y_hi = 0, y_hi * 1.1
    if x_lo == x_hi:
        x_lo, x_hi = x_lo / 2, x_hi * 2

    def scale(v, lo, hi, log, size):
        if log:
            return (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * size
        return (v - lo) / (hi - lo) * size

    def px(x):
        return left + scale(x, x_lo, x_hi, x_log, plot_w)

    def py(y):
        return top + plot_h - scale(y, y_lo, y_hi, y_log, plot_h)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left + plot_w / 2}" y="22" text-anchor="middle" font-size="15">'
        f"{escape(title)}</text>",
    ]
    # Grid and tick labels; the x ticks are the measured sizes themselves.
    for x in sorted(set(xs)):
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + plot_h}" '
                   'stroke="#e4e4e4"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle">'
                   f"{label(x)}</text>")
    for y in ticks(y_lo, y_hi, y_log):
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + plot_w}" y2="{py(y):.1f}" '
                   'stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{label(y)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#444"/>')
    scale_note = lambda log: " (log scale)" if log else ""
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 18}" text-anchor="middle">'
               f"{escape(x_label + scale_note(x_log))}</text>")
    out.append(f'<text transform="translate(18 {top + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(y_label + scale_note(y_log))}</text>')
    for i, (name, pts) in enumerate(series.items()):
        color = COLORS.get(name, PALETTE[i % len(PALETTE)])
        dash = ' stroke-dasharray="6 4"' if is_go(name) else ""
        # pipes' own lines are drawn heavier: they are what the charts are about.
        stroke = 3 if name.startswith("pipes") else 1.5
        pts = sorted(p for p in pts if p[1] > 0)
        if not pts:
            continue
        path_d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{path_d}" fill="none" stroke="{color}" '
                   f'stroke-width="{stroke}"{dash}/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"/>')
        ly = top + 10 + i * 20
        lx = left + plot_w + 16
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 26}" y2="{ly}" stroke="{color}" '
                   f'stroke-width="{stroke}"{dash}/>')
        out.append(f'<text x="{lx + 32}" y="{ly + 4}">{escape(name)}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


# The three bars of each group in a bar chart, in the order and colours of seed 003's figures.
BAR_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c"]


def bars(path, title, y_label, groups, labels):
    """A grouped bar chart: groups is [(name, [value per label])]; one colour per label."""
    width = max(520, 120 + 150 * len(groups))
    height = 420
    left, right, top, bottom = 70, 20, 60, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    y_hi = max((v for _, values in groups for v in values), default=1) * 1.1 or 1
    step = 10 ** math.floor(math.log10(y_hi))
    if y_hi / step < 4:
        step /= 2

    def py(y):
        return top + plot_h - y / y_hi * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left + plot_w / 2}" y="22" text-anchor="middle" font-size="15">'
        f"{escape(title)}</text>",
    ]
    y = 0.0
    while y <= y_hi:
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + plot_w}" y2="{py(y):.1f}" '
                   'stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += step
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#444"/>')
    out.append(f'<text transform="translate(18 {top + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(y_label)}</text>')
    for i, label_text in enumerate(labels):
        lx = left + i * 110
        out.append(f'<rect x="{lx}" y="34" width="14" height="10" fill="{BAR_COLORS[i]}"/>')
        out.append(f'<text x="{lx + 20}" y="43">{escape(label_text)}</text>')
    slot = plot_w / max(len(groups), 1)
    bar_w = slot * 0.7 / len(labels)
    for g, (name, values) in enumerate(groups):
        x0 = left + g * slot + slot * 0.15
        for i, v in enumerate(values):
            out.append(f'<rect x="{x0 + i * bar_w:.1f}" y="{py(v):.1f}" width="{bar_w:.1f}" '
                       f'height="{top + plot_h - py(v):.1f}" fill="{BAR_COLORS[i]}"/>')
        # Long names are split over lines under the group.
        words, lines = name.split(), [""]
        for word in words:
            if len(lines[-1]) + len(word) > 22:
                lines.append("")
            lines[-1] = (lines[-1] + " " + word).strip()
        for k, line in enumerate(lines):
            out.append(f'<text x="{x0 + slot * 0.35:.1f}" y="{top + plot_h + 18 + 14 * k}" '
                       f'text-anchor="middle">{escape(line)}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------------------
# Sections of latest.md


def ns_section(records, out, bench, text, count, unit):
    """A table of ns per `unit` against the bench's baseline, with each row's `count`."""
    rows = [r for r in records if r["bench"] == bench]
    if not rows:
        return
    base = next((r["wall_ns"] for r in rows if r["impl"] == BASELINES[bench]), None)
    out.append(f"## {bench}\n")
    out.append(text + f" 'speed' is {BASELINES[bench]}'s wall time over the row's.\n")
    out.append(table(
        ["implementation", count.replace("_", " "), f"wall ns/{unit}", f"cpu ns/{unit}",
         "speed"],
        [[r["impl"], f"{r[count]:,}", fmt(r["wall_ns"]), fmt(r["cpu_ns"]),
          speed(base, r["wall_ns"])] for r in ordered(rows, lambda r: r["wall_ns"])],
    ))
    out.append("")


def pingpong_section(records, out):
    ns_section(records, out, "pingpong",
               "Two threads (goroutines for Go) bounce a counter; ns per round trip (two "
               "hand-offs), median of the program's repeats; a measurement stops after 2 s, so "
               "slow implementations do fewer round trips.", "round_trips", "rt")


def sessions_section(records, out):
    ns_section(records, out, "sessions",
               "One thread makes sessions of a request and its reply and ends each (the peers "
               "use two channels a session); ns per session, median of the program's "
               "repeats.", "sessions", "session")


def msgsend_section(records, out, results_dir):
    rows = [r for r in records if r["bench"] == "msgsend"]
    if not rows:
        return
    out.append("## msgsend\n")
    out.append("`workers` threads (goroutines for Go) each send size/workers requests to one "
               "server, which sums them; median of the program's repeats. 'speed' is "
               "crossbeam-channel unbounded's wall time over the row's.\n")
    configs = sorted({(r["size"], r["workers"]) for r in rows})
    # The chart: throughput against workers at the size with the most worker counts.
    by_size = defaultdict(set)
    for size, workers in configs:
        by_size[size].add(workers)
    sweep = max(by_size, key=lambda s: (len(by_size[s]), s))
    series = defaultdict(list)
    for r in rows:
        if r["size"] == sweep:
            series[r["impl"]].append((r["workers"], r["per_s"]))
    if len(by_size[sweep]) > 1:
        chart(results_dir / "msgsend.svg", f"msgsend: {sweep:,} messages",
              "workers", "messages / s", series)
        out.append(f"![msgsend throughput against workers](msgsend.svg)\n")
    for size, workers in configs:
        group = [r for r in rows if (r["size"], r["workers"]) == (size, workers)]
        base = next((r["wall_s"] for r in group if r["impl"] == BASELINES["msgsend"]), None)
        out.append(f"### {size:,} messages, {workers:,} workers\n")
        out.append(table(
            ["implementation", "wall s", "cpu s", "msg/s", "speed"],
            [[r["impl"], f"{r['wall_s']:.4g}", f"{r['cpu_s']:.4g}", fmt(r["per_s"]),
              speed(base, r["wall_s"])] for r in ordered(group, lambda r: r["wall_s"])],
        ))
        out.append("")


def remote_section(records, out):
    """remote_pingpong and remote_msgsend: ratios to their hand-written floor (x floor, as the
    programs print it: the row's wall time over the floor's)."""
    pingpong = [r for r in records if r["bench"] == "remote_pingpong"]
    msgsend = [r for r in records if r["bench"] == "remote_msgsend"]
    if not pingpong and not msgsend:
        return
    out.append("## Remote sessions over loopback TCP\n")
    out.append("pipes-net against the same programs written by hand with tokio TCP, tokio-util's "
               "length-delimited codec and postcard (the floor); both ends in one process, each "
               "on a runtime of its own. 'x floor' is the row's wall time over the floor's "
               "(below 1 is faster).\n")
    if pingpong:
        out.append("### remote_pingpong\n")
        out.append(table(
            ["implementation", "round trips", "wall ns/rt", "cpu ns/rt", "x floor"],
            [[r["impl"], f"{r['round_trips']:,}", fmt(r["wall_ns"]), fmt(r["cpu_ns"]),
              f"{r['x_floor']:.2f}x"] for r in pingpong],
        ))
        out.append("")
    for size, workers in sorted({(r["size"], r["workers"]) for r in msgsend}):
        group = [r for r in msgsend if (r["size"], r["workers"]) == (size, workers)]
        out.append(f"### remote_msgsend: {size:,} messages, {workers:,} workers\n")
        out.append(table(
            ["implementation", "wall s", "msg/s", "cpu ns/msg", "x floor"],
            [[r["impl"], f"{r['wall_s']:.4g}", fmt(r["per_s"]), fmt(r["cpu_ns_per_msg"]),
              f"{r['x_floor']:.2f}x"] for r in group],
        ))
        out.append("")


def ring_section(records, out, results_dir):
    rows = [r for r in records if r["bench"] == "ring"]
    if not rows:
        return
    out.append("## ring\n")
    out.append("`tasks` threads (goroutines for Go) in a ring. *throughput*: every thread "
               "sends, then receives (a message per link in flight); *token*: one message "
               "circulates (the hand-off latency). Median of the program's repeats; 'speed' is "
               "crossbeam-channel's wall time over the row's. Go's links are channels of "
               "capacity 1 (throughput mode would deadlock unbuffered), and unbuffered in token "
               "mode too.\n")
    for mode in ("throughput", "token"):
        group_rows = [r for r in rows if r["mode"] == mode]
        if not group_rows:
            continue
        series = defaultdict(list)
        for r in group_rows:
            series[r["impl"]].append((r["tasks"], r["per_s"]))
        chart(results_dir / f"ring-{mode}.svg", f"ring, {mode} mode", "threads in the ring",
              "messages / s", series)
        out.append(f"### {mode} mode\n")
        out.append(f"![ring {mode}: messages per second against ring size](ring-{mode}.svg)\n")
        for tasks in sorted({r["tasks"] for r in group_rows}):
            group = [r for r in group_rows if r["tasks"] == tasks]
            base = next((r["wall_s"] for r in group if r["impl"] == BASELINES["ring"]), None)
            out.append(f"{mode}, {tasks} tasks x {group[0]['laps']:,} messages:\n")
            out.append(table(
                ["implementation", "wall s", "cpu s", "msg/s", "µs/msg", "speed"],
                [[r["impl"], f"{r['wall_s']:.4g}", f"{r['cpu_s']:.4g}", fmt(r["per_s"]),
                  f"{r['us_per_msg']:.3f}", speed(base, r["wall_s"])]
                 for r in ordered(group, lambda r: r["wall_s"])],
            ))
            out.append("")


PORT_SET_TABLES = {
    "senders-1": ("1 sender thread round-robin over N chans, 1 receiver", "ports"),
    "senders-16": ("16 sender threads, each owning every 16th chan, 1 receiver", "ports"),
    "round-trips": ("round trips: send on one of N chans, the set's thread echoes", "ports"),
    "shared-chan": ("S senders through clones of one SharedChan / crossbeam Sender", "senders"),
}


def port_set_section(records, out, results_dir):
    rows = [r for r in records if r["bench"] == "port_set"]
    if not rows:
        return
    out.append("## port_set\n")
    out.append("ns per message received (per round trip in the round-trip table), median of the "
               "program's repeats; a measurement stops after 2 s, so a slow one does fewer "
               "messages. 'speed' is crossbeam-channel's wall time over the row's at the same "
               "size. No Go program measures this.\n")
    for name, (what, x_name) in PORT_SET_TABLES.items():
        group_rows = [r for r in rows if r["table"] == name]
        if not group_rows:
            continue
        out.append(f"### {what}\n")
        if x_name == "ports":
            series = defaultdict(list)
            for r in group_rows:
                series[r["impl"]].append((r["x"], r["wall_ns"]))
            chart(results_dir / f"port_set-{name}.svg", f"port_set: {what}", "ports",
                  "wall ns per message", series)
            out.append(f"![port_set {name}: ns per message against ports](port_set-{name}.svg)\n")
        body = []
        for x in sorted({r["x"] for r in group_rows}):
            group = [r for r in group_rows if r["x"] == x]
            base = next((r["wall_ns"] for r in group if r["impl"].startswith("crossbeam")), None)
            body += [[f"{x:,}", r["impl"], f"{r['messages']:,}", fmt(r["wall_ns"]),
                      fmt(r["cpu_ns"]), speed(base, r["wall_ns"])] for r in group]
        out.append(table([x_name, "implementation", "messages", "wall ns", "cpu ns", "speed"],
                         body))
        out.append("")


def farm_section(records, out, results_dir):
    rows = [r for r in records if r["bench"] == "farm"]
    if not rows:
        return
    out.append("## farm (seed 000: FastFlow's task-farm)\n")
    out.append("An emitter deals boxed elements round-robin to W workers (floating-point work of "
               "~5 µs or ~5 ms each), a collector gathers them in order (checked against one "
               "thread). Median of the program's repeats; 'speed-up' is the same "
               "implementation's wall time with one worker over the row's; 'speed' is "
               "crossbeam-channel's wall time at the same W over the row's. 2 cores, and the "
               "emitter and collector are threads too.\n")
    for grain in ("small", "large"):
        group_rows = [r for r in rows if r["grain"] == grain]
        if not group_rows:
            continue
        farm_rows = [r for r in group_rows if r["workers"] > 0]
        one = next((r for r in group_rows if r["workers"] == 0), None)
        series = defaultdict(list)
        for r in farm_rows:
            series[r["impl"]].append((r["workers"], r["speedup"]))
        first = group_rows[0]
        what = f"{first['elements']:,} elements of ~{first['task_us']:g} µs"
        out.append(f"### {grain} grain: {what}\n")
        if len({r["workers"] for r in farm_rows}) > 1:
            chart(results_dir / f"farm-{grain}.svg", f"farm, {grain} grain: {what}", "workers",
                  "speed-up over one worker", series, x_log=False, y_log=False)
            out.append(f"![farm {grain}: speed-up against workers](farm-{grain}.svg)\n")
        if one:
            out.append(f"One thread, no farm: {one['wall_s']:.4g} s, "
                       f"{fmt(one['per_s'])} elements/s.\n")
        body = []
        for workers in sorted({r["workers"] for r in farm_rows}):
            group = [r for r in farm_rows if r["workers"] == workers]
            base = next((r["wall_s"] for r in group if r["impl"] == BASELINES["farm"]), None)
            body += [[workers, r["impl"], f"{r['wall_s']:.4g}", f"{r['cpu_s']:.4g}",
                      fmt(r["per_s"]), f"{r['speedup']:.2f}x", speed(base, r["wall_s"])]
                     for r in group]
        out.append(table(["workers", "implementation", "wall s", "cpu s", "elements/s",
                          "speed-up", "speed"], body))
        out.append("")


def pipeline_section(records, out, results_dir):
    rows = [r for r in records if r["bench"] == "pipeline"]
    if not rows:
        return
    out.append("## pipeline (seed 000: FastFlow's pipeline with feedback)\n")
    out.append("A master and k forwarding stages in a ring; the master emits a batch of 1,000 "
               "boxed elements, then 256 for every 256 returned, until all have come back "
               "(checked: once each, in order, through every stage). A message is one element "
               "crossing one link (k + 1 per element). Median of the program's repeats; "
               "'speed' is crossbeam-channel's wall time over the row's.\n")
    series = defaultdict(list)
    for r in rows:
        series[r["impl"]].append((r["stages"], r["per_s"]))
    if len({r["stages"] for r in rows}) > 1:
        chart(results_dir / "pipeline.svg",
              f"pipeline with feedback: {rows[0]['elements']:,} elements", "stages",
              "messages / s", series)
        out.append("![pipeline: messages per second against stages](pipeline.svg)\n")
    body = []
    for stages in sorted({r["stages"] for r in rows}):
        group = [r for r in rows if r["stages"] == stages]
        base = next((r["wall_s"] for r in group if r["impl"] == BASELINES["pipeline"]), None)
        body += [[stages, r["impl"], f"{r['wall_s']:.4g}", f"{r['cpu_s']:.4g}", fmt(r["per_s"]),
                  speed(base, r["wall_s"])] for r in group]
    out.append(table(["stages", "implementation", "wall s", "cpu s", "msg/s", "speed"], body))
    out.append("")


PC_MODES = {
    "io": ("I/O-bound", "1 ms sleep before each produce"),
    "compute": ("compute-bound", "1 ms sleep after each consume"),
}


def producer_consumer_section(records, out, results_dir):
    rows = [r for r in records if r["bench"] == "producer_consumer"]
    if not rows:
        return
    out.append("## producer_consumer (seed 003)\n")
    out.append("5 producers and 5 consumers share one buffer of 100 items, closed when the "
               "producers are done (checked: every item consumed once). Total (wall), user and "
               "system time of the whole process during a run, medians of the program's repeats, "
               "as the seed's figures show them; 'ideal' is the sleep alone (items / 5 x 1 ms). "
               "'speed' is crossbeam-channel bounded(100)'s total time over the row's.\n")
    for mode, (short, latency) in PC_MODES.items():
        mode_rows = [r for r in rows if r["mode"] == mode]
        if not mode_rows:
            continue
        out.append(f"### {short} ({latency})\n")
        largest = max(r["items"] for r in mode_rows)
        groups = [(r["impl"], [r["wall_s"], r["user_s"], r["sys_s"]])
                  for r in ordered([r for r in mode_rows if r["items"] == largest],
                                   lambda r: 0)]
        bars(results_dir / f"producer_consumer-{mode}.svg",
             f"producer-consumer, {short}, {largest:,} items", "seconds", groups,
             ["total", "user", "system"])
        out.append(f"![producer-consumer {mode}: total, user and system time]"
                   f"(producer_consumer-{mode}.svg)\n")
        body = []
        for items in sorted({r["items"] for r in mode_rows}):
            group = [r for r in mode_rows if r["items"] == items]
            base = next((r["wall_s"] for r in group
                         if r["impl"] == BASELINES["producer_consumer"]), None)
            body += [[f"{items:,}", r["impl"], f"{r['wall_s']:.3f}", f"{r['user_s']:.3f}",
                      f"{r['sys_s']:.3f}", f"{r['ideal_s']:.3f}", speed(base, r["wall_s"])]
                     for r in ordered(group, lambda r: 0)]
        out.append(table(["items", "implementation", "total s", "user s", "system s", "ideal s",
                          "speed"], body))
        out.append("")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seconds", type=int)
    parser.add_argument("--repeats", type=int)
    args = parser.parse_args()
    results_dir = args.results_dir
    records = parse(results_dir / "raw")
    # Only charted implementations take a colour, so the palette does not wrap within a chart.
    for record in records:
        if record["bench"] in ("pingpong", "sessions", "producer_consumer",
                               "remote_pingpong", "remote_msgsend") or \
                record.get("table") == "shared-chan" or record.get("workers") == 0:
            continue
        COLORS.setdefault(record["impl"], PALETTE[len(COLORS) % len(PALETTE)])
    for old in results_dir.glob("*.svg"):
        old.unlink()

    out = ["# Benchmark results (generated)\n"]
    out.append("Written by `bash benches/run.sh` through `benches/report.py` from the `RESULT` "
               "lines of every program (their full output is in `raw/`); do not edit by hand. "
               "Hand-written analyses stay in `../RESULTS.md`. These machines are shared and "
               "noisy: compare ratios within one run rather than absolute numbers across runs. "
               "Charts are plain SVG written by report.py (no plotting dependency); Go's lines "
               "are dashed.\n")
    if args.quick:
        out.append("**This was a quick run (`run.sh --quick`): one repeat and smaller sizes, so "
                   "the numbers are indicative only. Run `bash benches/run.sh` for medians of "
                   "5.**\n")
    summary = []
    if args.repeats:
        summary.append(f"repeats per configuration: {args.repeats} (tables show medians)")
    if args.seconds is not None:
        summary.append(f"whole run: {args.seconds // 60} min {args.seconds % 60} s")
    if summary:
        out.append("; ".join(summary) + ".\n")
    out.append("## Machine\n")
    machine = results_dir / "machine.txt"
    out.append("```\n" + (machine.read_text().rstrip() if machine.exists() else "unknown") +
               "\n```\n")
    out.append("## Commands\n")
    commands = results_dir / "commands.txt"
    out.append("From the repository root (`cargo` with the pinned toolchain):\n")
    out.append("```\n" + (commands.read_text().rstrip() if commands.exists() else "") +
               "\n```\n")

    pingpong_section(records, out)
    sessions_section(records, out)
    msgsend_section(records, out, results_dir)
    ring_section(records, out, results_dir)
    port_set_section(records, out, results_dir)
    farm_section(records, out, results_dir)
    pipeline_section(records, out, results_dir)
    producer_consumer_section(records, out, results_dir)
    remote_section(records, out)
    (results_dir / "latest.md").write_text("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
