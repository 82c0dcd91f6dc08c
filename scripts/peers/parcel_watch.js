// SPDX-License-Identifier: GPL-2.0
// make peers: @parcel/watcher's documented recursive watch, defaults:
// subscribe(ROOT, callback) with no options.  One line per event:
// "<type>\t<path>"; "READY" once subscribe() resolved; "ERROR\t<msg>"
// for each error the callback is given (an overflow would be one).
const watcher = require('@parcel/watcher');
const root = process.argv[2];
watcher.subscribe(root, (err, events) => {
  if (err) {
    process.stdout.write('ERROR\t' + String(err && err.message || err) + '\n');
    return;
  }
  let s = '';
  for (const e of events) s += e.type + '\t' + e.path + '\n';
  process.stdout.write(s);
}).then(() => process.stdout.write('READY\n'));
process.on('SIGTERM', () => process.exit(0));
