// Preloaded (--require) into each process of a soak run: writes its heap figures to
// $SOAK_PROBE_DIR/<pid>.json every $SOAK_PROBE_MS (default 2000) ms, so the soak can sample heap from outside. With
// --expose-gc it collects first, so the figure is the live heap (flat when nothing leaks), not
// wherever the collector's sawtooth happens to be.
const fs = require('node:fs');
const path = require('node:path');
const { isMainThread } = require('node:worker_threads');
const dir = process.env.SOAK_PROBE_DIR;
// --require reaches worker threads too (media workers): only the main thread reports (and collects);
// the workers' memory shows in the process's RSS, and no forced collection disturbs their timing.
if (dir && isMainThread) {
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
  setInterval(write, Number(process.env.SOAK_PROBE_MS) || 2000).unref();
  write();
}
