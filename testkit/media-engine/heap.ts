// What a piece of hot-path code allocates, counted with V8's GC profiler (heap growth plus what each
// GC freed during the run), which does not depend on the machine's load.
import v8 from 'node:v8';

/** Bytes of JS heap allocated per call over `n` calls of `fn` (one round; the process's other work adds to it). */
export function allocatedPerCall(fn: (i: number) => void, n: number): number {
  const prof = new v8.GCProfiler();
  const before = v8.getHeapStatistics().used_heap_size;
  prof.start();
  for (let i = 0; i < n; i++) fn(i);
  const after = v8.getHeapStatistics().used_heap_size;
  let freed = 0;
  for (const g of prof.stop().statistics) freed += g.beforeGC.heapStatistics.usedHeapSize - g.afterGC.heapStatistics.usedHeapSize;
  return (after - before + freed) / n;
}
