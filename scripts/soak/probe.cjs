// Preloaded (--require) into each process of a soak run: writes its heap figures to
// $SOAK_PROBE_DIR/<pid>.json every second, so the soak can sample heap from outside.
const fs = require('node:fs');
const path = require('node:path');
const dir = process.env.SOAK_PROBE_DIR;
if (dir) {
  const file = path.join(dir, `${process.pid}.json`);
  const write = () => {
    const m = process.memoryUsage();
    try {
      fs.writeFileSync(file, JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, at: Date.now() }));
    } catch {
      /* the soak's directory is gone: it has finished */
    }
  };
  setInterval(write, 1000).unref();
  write();
}
