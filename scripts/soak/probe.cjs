// Preloaded (--require) into each process of a soak run: writes its heap figures to
// $SOAK_PROBE_DIR/<pid>.json every two seconds, so the soak can sample heap from outside. With
// --expose-gc it collects first, so the figure is the live heap (flat when nothing leaks), not
// wherever the collector's sawtooth happens to be.
const fs = require('node:fs');
const path = require('node:path');
const dir = process.env.SOAK_PROBE_DIR;
if (dir) {
  const file = path.join(dir, `${process.pid}.json`);
  const write = () => {
    if (typeof global.gc === 'function') global.gc();
    const m = process.memoryUsage();
    try {
      // write then rename: the soak never reads half a file
      fs.writeFileSync(`${file}.tmp`, JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, at: Date.now() }));
      fs.renameSync(`${file}.tmp`, file);
    } catch {
      /* the soak's directory is gone: it has finished */
    }
  };
  setInterval(write, 2000).unref();
  write();
}
