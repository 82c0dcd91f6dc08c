#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the log of a `make bench` run into markdown tables and SVG plots.

    bench-report.py LOG OUTDIR

LOG is the guest's serial log (build/guest-*/bench.log) or the output of
tests/bench/run.sh.  OUTDIR receives bench.md (the tables) and, drawn by
gnuplot, loop-ratios.svg (the 2004 loop: watched / unwatched time per row),
setup-scale.svg (setup time per watch against the number of watches) and
iterator-depth.svg (the library iterator's cost against path depth).  A
plot is written only when the log holds its data; bench.md says which were.

Every figure comes from the log; nothing is typed in.  Result lines (those
not starting with "#") are recognised by their key=value fields; a line no
rule knows goes into the "Other results" table verbatim, so a new row in
run.sh is never lost.
"""

import os
import re
import shutil
import subprocess
import sys

NUM = r'(-?[0-9]+(?:\.[0-9]+)?)'


def parse(path):
    """Steps in log order: [(id, title, [result lines])]."""
    steps = []
    cur = None
    header = []
    with open(path, errors='replace') as f:
        for raw in f:
            line = raw.rstrip('\r\n')
            # the serial log has the kernel's lines too; run.sh's own start
            m = re.match(r'^=== (\S+) ?(.*)$', line)
            if m and m.group(1) != 'inofd':
                cur = (m.group(1), m.group(2), [])
                steps.append(cur)
                continue
            if line.startswith('bench: ') and ('cpus' in line or 'max_' in line):
                header.append(line[len('bench: '):])
            if cur is None or not line.strip() or line.startswith('#'):
                continue
            if line.startswith('=== inofd') or line.startswith('bench: '):
                continue
            if re.match(r'^\[\s*[0-9.]+\]', line):  # a kernel message
                continue
            cur[2].append(line.strip())
    return header, steps


def fields(line):
    return dict(re.findall(r'([A-Za-z_][\w-]*)=(\S+)', line))


def fnum(pattern, line):
    m = re.search(pattern, line)
    return float(m.group(1)) if m else None


class Report:
    def __init__(self):
        self.loop = []      # (step, title, writer, mask, consumer, mode, med, ratio, min, ratio_min, us_line, events,
        #                      bytes_per_event, events_per_read, uid)
        self.setup = []     # (step, n, depth, method, ms, us_watch, vs_path)
        self.memory = {}    # method -> dict
        self.heap = []      # (step, n, method, bytes per watch)
        self.tree = []      # (step, line)
        self.lib = []       # (step, depth, events, raw_eps, lib_eps, ratio)
        self.walkers = []   # (step, dirs, uid, inotify_ms, fanotify_ms, ratio, ratio_min)
        self.other = []     # (step, line)

    def add(self, step, title, line):
        f = fields(line)
        if line.startswith('notify ') and 'mode' in f:
            med = fnum(r'median ' + NUM + ' s', line)
            ratios = re.findall(r'ratio ' + NUM, line)
            mn = fnum(r'min ' + NUM + ' s', line)
            usl = fnum(NUM + r' us/line', line)
            ev = fnum(r'events/run ' + NUM, line)
            if med is not None and len(ratios) >= 2:
                self.loop.append((step, title, f.get('writer', ''), f.get('mask', ''),
                                  f.get('consumer', ''), f['mode'], med,
                                  float(ratios[0]), mn, float(ratios[1]), usl, ev,
                                  fnum(r'bytes/event ' + NUM, line),
                                  fnum(r'events/read ' + NUM, line), f.get('uid', '')))
                return
        if line.startswith('walkers ') and 'dirs' in f:
            self.walkers.append((step, int(f['dirs']), f.get('uid', ''),
                                 fnum(r'bare-inotify-walker median ' + NUM, line),
                                 fnum(r'bare-fanotify-walker median ' + NUM, line),
                                 fnum(r'fanotify/inotify ' + NUM, line),
                                 fnum(r'of minimums ' + NUM, line)))
            return
        # any line giving a time per watch for a number of watches (the
        # 1b.setup step and the scale rows)
        n = f.get('n') or f.get('watches') or f.get('dirs')
        usw = fnum(NUM + r' us/watch', line)
        if n is not None and n.isdigit() and usw is not None:
            heap = fnum(r'heap ' + NUM + r' B/watch', line)
            if heap is not None:
                self.heap.append((step, int(n), f.get('method') or line.split()[0], heap))
            self.setup.append((step, int(n), f.get('depth', ''),
                               f.get('method') or line.split()[0],
                               fnum(r'median ' + NUM + ' ms', line), usw,
                               fnum(r'ratio vs path ' + NUM, line),
                               fnum(r'vs fd ' + NUM, line), fnum(r'vs fd\+rdopen ' + NUM, line),
                               f.get('uid', '')))
            return
        if line.startswith('memory ') and 'method' in f:
            d = self.memory.setdefault(f['method'], {})
            if 'watches' in f:
                d['watches'] = f['watches']
            v = fnum(r'meminfo Slab ' + NUM, line)
            if v is not None:
                d['meminfo'] = v
            v = fnum(r'fds held after setup: ' + NUM, line)
            if v is not None:
                d['fds'] = int(v)
            v = fnum(r'slabinfo total ' + NUM, line)
            if v is not None:
                d['slabinfo'] = v
            return
        if line.startswith('tree '):
            self.tree.append((step, line))
            return
        if (line.startswith('lib ') or step.startswith('1d')) and 'events' in f:
            ratio = fnum(r'lib/raw(?: time)? ' + NUM, line)
            raw = fnum(r'raw read\(\)(?:\+path)? ' + NUM + ' events/s', line)
            lib = fnum(r'iterator ' + NUM + ' events/s', line)
            if ratio is not None:
                # no depth= is the original 1d: files in the watched
                # directory itself, depth 0
                self.lib.append((step, int(f['depth']) if f.get('depth', '').isdigit() else 0,
                                 f['events'], raw, lib, ratio))
                return
        self.other.append((step, line))


def fmt(v, spec='.2f'):
    if v is None or v == '':
        return '—'
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def tables(rep, header, logname, plots):
    out = ['# Benchmark results', '',
           f'Generated by `scripts/bench-report.py` from `{logname}`; every '
           'figure below is taken from that log.', '']
    for h in header:
        out.append(f'- guest: {h}')
    if header:
        out.append('')
    if rep.loop:
        out += ['## 1a. The 2004 loop: watched time / unwatched time', '',
                'fanotify: an inode mark by a closed fd in a FAN_CLASS_NOTIF | '
                'FAN_REPORT_DFID_NAME group, FAN_EVENT_ON_CHILD, the same mask bits.', '',
                '| step | uid | writer | mask | consumer | none (median) | path | closed fd | fanotify '
                '| path, of minimums | closed fd, of minimums | fanotify, of minimums '
                '| events/run (path) | events/run (fanotify) |',
                '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |']
        for step in dict.fromkeys(r[0] for r in rep.loop):
            rows = {r[5]: r for r in rep.loop if r[0] == step}
            any_row = next(iter(rows.values()))
            none = rows.get('none')
            path = rows.get('path')
            fd = next((r for m, r in rows.items() if m.startswith('fd')), None)
            fan = rows.get('fanotify')
            out.append('| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |'.format(
                step, any_row[14] or '—', any_row[2], any_row[3], any_row[4],
                fmt(none[6], '.3f') + ' s' if none else '—',
                fmt(path[7]) if path else '—', fmt(fd[7]) if fd else '—',
                fmt(fan[7]) if fan else '—',
                fmt(path[9]) if path else '—', fmt(fd[9]) if fd else '—',
                fmt(fan[9]) if fan else '—',
                fmt(path[11], '.0f') if path else '—',
                fmt(fan[11], '.0f') if fan else '—'))
        out.append('')
    cost = [r for r in rep.loop if r[12] is not None]
    if cost:
        out += ['## 1a. Event size and read cost', '',
                'Bytes read per event and events per read(2) call that returned data '
                '(consumer buffer 256 KiB), per mode.', '',
                '| step | uid | consumer | mode | bytes/event | events/read | events/run |',
                '| --- | --- | --- | --- | --- | --- | --- |']
        for r in cost:
            out.append(f'| {r[0]} | {r[14] or "—"} | {r[4]} | {r[5]} | {fmt(r[12], ".1f")} '
                       f'| {fmt(r[13], ".1f")} | {fmt(r[11], ".0f")} |')
        out.append('')
    if rep.setup:
        out += ['## 1b. Watch setup', '',
                'fan-*: fanotify inode marks (FAN_REPORT_DFID_NAME group); fd+rdopen and '
                'fan-fd+open open O_RDONLY (fanotify refuses O_PATH).', '',
                '| step | uid | watches | depth | method | median | per watch | vs path | vs fd | vs fd+rdopen |',
                '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |']
        for r in rep.setup:
            ms = fmt(r[4], '.1f') + ' ms' if r[4] is not None else '—'
            out.append(f'| {r[0]} | {r[9] or "—"} | {r[1]:,} | {r[2]} | {r[3]} | {ms} '
                       f'| {fmt(r[5], ".1f")} µs | {fmt(r[6])} | {fmt(r[7])} | {fmt(r[8])} |')
        out.append('')
    if rep.heap:
        out += ['## 1b. The library\'s own heap per watch', '',
                'Bytes in use by malloc (chunk overhead included) across the call, '
                'divided by the watches it made.', '',
                '| step | watches | method | heap per watch |',
                '| --- | --- | --- | --- |']
        for r in rep.heap:
            out.append(f'| {r[0]} | {r[1]:,} | {r[2]} | {fmt(r[3], ".0f")} B |')
        out.append('')
    if rep.memory:
        out += ['## 1c. Memory per watch and fds held', '',
                '| method | watches | slabinfo | meminfo `Slab:` | fds held |',
                '| --- | --- | --- | --- | --- |']
        for m, d in rep.memory.items():
            out.append(f'| {m} | {d.get("watches", "—")} | {fmt(d.get("slabinfo"), ".1f")} B/watch '
                       f'| {fmt(d.get("meminfo"), ".0f")} B/watch | {d.get("fds", "—")} |')
        out.append('')
    if rep.tree:
        out += ['## 1b. Recursive watch of the kernel tree', '', '| step | result |', '| --- | --- |']
        out += [f'| {s} | `{line}` |' for s, line in rep.tree]
        out.append('')
    if rep.walkers:
        out += ['## 1b. Bare walkers: fanotify marks against inotify watches', '',
                'The same tree; each directory opened, marked (fanotify_mark by fd, or '
                'INOTIFY_IOC_WATCH), listed, closed.', '',
                '| step | uid | directories | inotify walker | fanotify walker | fanotify / inotify '
                '| of minimums |',
                '| --- | --- | --- | --- | --- | --- | --- |']
        for r in rep.walkers:
            out.append(f'| {r[0]} | {r[2] or "—"} | {r[1]:,} | {fmt(r[3], ".1f")} ms '
                       f'| {fmt(r[4], ".1f")} ms | {fmt(r[5])} | {fmt(r[6])} |')
        out.append('')
    if rep.lib:
        out += ['## 1d. Library iterator against a raw read() loop', '',
                'Depth is that of the event\'s file below the watched directory '
                '(a line without `depth=` is the original step: depth 0).', '',
                '| step | depth | events | raw read() | libinofd iterator | lib / raw time |',
                '| --- | --- | --- | --- | --- | --- |']
        for r in rep.lib:
            out.append(f'| {r[0]} | {fmt(r[1])} | {r[2]} | {fmt(r[3], ",.0f")} events/s '
                       f'| {fmt(r[4], ",.0f")} events/s | {fmt(r[5])} |')
        out.append('')
    if rep.other:
        out += ['## Other results', '',
                'Result lines this generator has no table for, as the log gives them.', '',
                '| step | result |', '| --- | --- |']
        out += ['| {} | `{}` |'.format(s, line.replace('|', '\\|')) for s, line in rep.other]
        out.append('')
    out += ['## Plots', '']
    for name, what, made in plots:
        out.append(f'- [{what}]({name})' if made else f'- {what}: no data in this log')
    out.append('')
    return '\n'.join(out)


def gnuplot(script, outdir):
    subprocess.run(['gnuplot'], input=script, text=True, cwd=outdir, check=True)


def q(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


TERM = 'set terminal svg size 900,520 dynamic enhanced font "sans,12" background "#ffffff"\n'


def plot_loop(rep, outdir):
    steps = list(dict.fromkeys(r[0] for r in rep.loop))
    rows = []
    for step in steps:
        by = {r[5]: r for r in rep.loop if r[0] == step}
        path = by.get('path')
        fd = next((r for m, r in by.items() if m.startswith('fd')), None)
        fan = by.get('fanotify')
        if path or fd or fan:
            rows.append((step, path[7] if path else float('nan'), fd[7] if fd else float('nan'),
                         fan[7] if fan else float('nan')))
    if not rows:
        return False
    with open(os.path.join(outdir, 'loop-ratios.dat'), 'w') as f:
        f.write('# step path closed-fd fanotify (median watched / unwatched time)\n')
        for s, p, d, a in rows:
            f.write(f'{s} {p} {d} {a}\n')
    top = max(x for r in rows for x in r[1:] if x == x)
    # a log without fanotify rows (older runs) draws the two inotify bars
    fan_plot = (', "" using 4 title "fanotify mark (closed fd)"'
                if any(r[3] == r[3] for r in rows) else '')
    gnuplot(TERM + f'''set output "loop-ratios.svg"
set title "The 2004 loop: writer's time watched / unwatched (median of the rounds)"
set ylabel "watched / unwatched time"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set grid ytics
set key top left
set yrange [0:{max(top * 1.15, 1.2):.2f}]
set arrow from graph 0, first 1.05 to graph 1, first 1.05 nohead dt 2 lc rgb "#c00000"
set label "2004 target 1.05" at graph 0.99, first 1.05 right offset 0,0.6 tc rgb "#c00000"
plot "loop-ratios.dat" using 2:xtic(1) title "path watch", "" using 3 title "closed-fd watch"{fan_plot}
''', outdir)
    return True


def plot_scale(rep, outdir):
    if not rep.setup:
        return False
    methods = list(dict.fromkeys(r[3] for r in rep.setup))
    with open(os.path.join(outdir, 'setup-scale.dat'), 'w') as f:
        for m in methods:
            f.write(f'# method {m}: watches us/watch\n')
            for r in sorted((r for r in rep.setup if r[3] == m), key=lambda r: r[1]):
                f.write(f'{r[1]} {r[5]}\n')
            f.write('\n\n')
    ns = {r[1] for r in rep.setup}
    plots = ', '.join(f'"setup-scale.dat" index {i} using 1:2 with linespoints title {q(m)}'
                      for i, m in enumerate(methods))
    gnuplot(TERM + f'''set output "setup-scale.svg"
set title "Watch setup: time per watch against the number of watches"
set xlabel "watches"
set ylabel "µs per watch (median of the rounds)"
{"set logscale x" if len(ns) > 1 else f"set xrange [{min(ns) / 2}:{min(ns) * 1.5}]"}
set xtics ({", ".join(str(n) for n in sorted(ns))})
set grid
set key outside right
set yrange [0:*]
set offsets graph 0.05, graph 0.05, 0, 0
plot {plots}
''', outdir)
    return True


def plot_depth(rep, outdir):
    rows = [r for r in rep.lib if r[3] and r[4]]
    if not rows:
        return False
    # a 1d step without depth= is the original one: paths at depth 0
    pts = sorted((r[1], 1e6 / r[3], 1e6 / r[4], r[5]) for r in rows)
    with open(os.path.join(outdir, 'iterator-depth.dat'), 'w') as f:
        f.write('# depth raw-us/event lib-us/event lib/raw\n')
        for p in pts:
            f.write('{} {:.4f} {:.4f} {}\n'.format(*p))
    gnuplot(TERM + f'''set output "iterator-depth.svg"
set title "libinofd iterator: cost per event against path depth"
set xlabel "depth of the watched directory"
set ylabel "µs per event"
set y2label "iterator / raw read() time"
set ytics nomirror
set y2tics
set grid
set key top left
set yrange [0:*]
set y2range [0:*]
{"set offsets 0.5, 0.5, 0, 0" if len({p[0] for p in pts}) > 1 else f"set xrange [{pts[0][0] - 1}:{pts[0][0] + 1}]"}
set xtics ({", ".join(str(d) for d in sorted({p[0] for p in pts}))})
plot "iterator-depth.dat" using 1:3 with linespoints title "libinofd iterator", \\
     "" using 1:2 with linespoints title "raw read()", \\
     "" using 1:4 axes x1y2 with linespoints dt 2 title "ratio (right axis)"
''', outdir)
    return True


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: bench-report.py LOG OUTDIR')
    log, outdir = sys.argv[1], sys.argv[2]
    if not shutil.which('gnuplot'):
        sys.exit("bench-report: gnuplot missing: run 'make deps' (package gnuplot-nox)")
    header, steps = parse(log)
    if not steps:
        sys.exit(f'bench-report: {log}: no benchmark steps ("=== ID" lines) in this log')
    rep = Report()
    for step, title, lines in steps:
        for line in lines:
            rep.add(step, title, line)
    os.makedirs(outdir, exist_ok=True)
    for name in ('loop-ratios', 'setup-scale', 'iterator-depth'):
        for ext in ('.svg', '.dat'):
            try:
                os.unlink(os.path.join(outdir, name + ext))
            except FileNotFoundError:
                pass
    plots = [('loop-ratios.svg', 'the 2004 loop, watched / unwatched time per row', plot_loop(rep, outdir)),
             ('setup-scale.svg', 'setup time per watch against the number of watches', plot_scale(rep, outdir)),
             ('iterator-depth.svg', 'the iterator\'s cost per event against depth', plot_depth(rep, outdir))]
    with open(os.path.join(outdir, 'bench.md'), 'w') as f:
        f.write(tables(rep, header, os.path.basename(log), plots))
    made = [p[0] for p in plots if p[2]]
    print(f'bench-report: {len(steps)} steps -> {outdir}/bench.md'
          + (f', {", ".join(made)}' if made else ', no plots (no data for them)'))


if __name__ == '__main__':
    main()
