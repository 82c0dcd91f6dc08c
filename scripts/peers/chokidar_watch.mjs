// SPDX-License-Identifier: GPL-2.0
// make peers: chokidar's documented recursive watch, defaults:
// chokidar.watch(ROOT) with no options (so ignoreInitial is false: its
// initial 'add' events come before 'ready' and are not counted).  One
// line per event: "<event>\t<path>"; "READY" on 'ready'; "ERROR\t<msg>"
// on 'error'.
import chokidar from 'chokidar';
const root = process.argv[2];
const w = chokidar.watch(root);
w.on('all', (ev, path) => process.stdout.write(ev + '\t' + path + '\n'));
w.on('ready', () => process.stdout.write('READY\n'));
w.on('error', (e) => process.stdout.write('ERROR\t' + String(e && e.message || e) + '\n'));
process.on('SIGTERM', () => process.exit(0));
