// Preloaded (--require) into each process of a soak run: writes its heap figures to
// $SOAK_PROBE_DIR/<pid>.json every $SOAK_PROBE_MS (default 2000) ms, so the soak can sample heap from outside. With
// --expose-gc it collects first, so the figure is the live heap (flat when nothing leaks), not
// wherever the collector's sawtooth happens to be.
const fs = require('node:fs');
const path = require('node:path');
const { isMainThread } = require('node:worker_threads');
const dir = process.env.SOAK_PROBE_DIR;
// --require reaches worker threads too (media workers): by default only the main thread reports (and
// collects), so no forced collection disturbs the workers' timing; with SOAK_PROBE_THREADS=1 each worker
// thread reports too, to `<pid>-t<threadId>.json` (its own V8 heap: process.memoryUsage().heapUsed is the
// calling thread's), for a measurement that asks which thread's heap grows (scripts/soak/ai-heap.ts).
const { threadId } = require('node:worker_threads');
if (dir && (isMainThread || process.env.SOAK_PROBE_THREADS === '1')) {
  const file = path.join(dir, isMainThread ? `${process.pid}.json` : `${process.pid}-t${threadId}.json`);
  const write = () => {
    if (typeof global.gc === 'function') global.gc();
    const m = process.memoryUsage();
    try {
      // write then rename: the soak never reads half a file
      fs.writeFileSync(`${file}.tmp`, JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, rss: m.rss, at: Date.now() }));
      fs.renameSync(`${file}.tmp`, file);
    } catch {
      /* the soak's directory is gone: it has finished */
    }
  };
  setInterval(write, Number(process.env.SOAK_PROBE_MS) || 2000).unref();
  write();
}
