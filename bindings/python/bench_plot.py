"""The program table as a picture: `bench_programs.py --svg FILE`.

One panel per size; in each, a row per program and a bar per contender
showing its time over lazyfuse's on a logarithmic axis (the line at 1 is
lazyfuse; a bar to the right is slower than lazyfuse, to the left
faster). Plain SVG, written by hand: no plotting package to install."""

import math

COLOURS = {"NumPy": "#1f77b4", "numexpr": "#ff7f0e", "Numba": "#2ca02c", "JAX": "#d62728",
           "CuPy": "#9467bd", "cupy.fuse": "#8c564b"}
RANGE = (1 / 16, 64)  # the axis: lazyfuse 16 times slower to 64 times faster
PANEL_W, ROW_H, BAR_H, LEFT, TOP = 260, 34, 5, 120, 50


def _x(ratio, x0):
    """Where `ratio` lies on a panel starting at `x0` (clamped to the axis)."""
    lo, hi = (math.log(r) for r in RANGE)
    at = (math.log(min(max(ratio, RANGE[0]), RANGE[1])) - lo) / (hi - lo)
    return x0 + at * PANEL_W


def write_svg(records, others, path, title):
    """Writes `records` — `(program, elements, {contender: time over
    lazyfuse's})` in table order — for the contenders `others` to `path`."""
    sizes = list(dict.fromkeys(n for _, n, _ in records))
    programs = list(dict.fromkeys(p for p, _, _ in records))
    ratios = {(p, n): r for p, n, r in records}
    width = max(LEFT + len(sizes) * (PANEL_W + 30) + 20, LEFT + len(others) * 110 + 340)
    height = TOP + len(programs) * ROW_H + 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="18" font-size="13">{title}</text>']
    for row, program in enumerate(programs):
        y = TOP + row * ROW_H + ROW_H / 2
        out.append(f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end">{program}</text>')
    for column, n in enumerate(sizes):
        x0 = LEFT + column * (PANEL_W + 30)
        bottom = TOP + len(programs) * ROW_H
        out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP - 10}" text-anchor="middle">'
                   f'{n:.0e} elements</text>')
        for tick in (1 / 16, 1 / 4, 1, 4, 16, 64):
            x = _x(tick, x0)
            label = f"{tick:g}" if tick >= 1 else f"1/{round(1 / tick)}"
            colour = "#000" if tick == 1 else "#ddd"
            out.append(f'<line x1="{x}" y1="{TOP}" x2="{x}" y2="{bottom}" stroke="{colour}"/>')
            out.append(f'<text x="{x}" y="{bottom + 14}" text-anchor="middle">{label}</text>')
        for row, program in enumerate(programs):
            r = ratios.get((program, n), {})
            for k, who in enumerate(w for w in others if w in r):
                y = TOP + row * ROW_H + 4 + k * (BAR_H + 1)
                x1, x2 = sorted((_x(1, x0), _x(r[who], x0)))
                out.append(f'<rect x="{x1}" y="{y}" width="{max(x2 - x1, 1)}" height="{BAR_H}" '
                           f'fill="{COLOURS.get(who, "#777")}"><title>{who} {program} {n:.0e}: '
                           f'{r[who]:.2f} of lazyfuse\'s time</title></rect>')
    legend_y = TOP + len(programs) * ROW_H + 36
    for k, who in enumerate(others):
        x = LEFT + k * 110
        out.append(f'<rect x="{x}" y="{legend_y - 9}" width="10" height="10" '
                   f'fill="{COLOURS.get(who, "#777")}"/>')
        out.append(f'<text x="{x + 14}" y="{legend_y}">{who}</text>')
    out.append(f'<text x="{LEFT + len(others) * 110}" y="{legend_y}">time over lazyfuse\'s '
               '(right of 1: lazyfuse is faster)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
