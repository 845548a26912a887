// A worker thread whose code is a module beside the caller's own file: from TypeScript sources (the tests,
// tsx, `npm start` in development) through tsx's require hook in the thread, from compiled JavaScript as it is.
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** A worker running the module `name` of `callerFile`'s directory (pass `__filename`), with `workerData`. */
export function workerBeside(callerFile: string, name: string, workerData: unknown): Worker {
  const ext = path.extname(callerFile);
  const entry = path.join(path.dirname(callerFile), `${name}${ext}`);
  return ext === '.ts' ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(entry)});`, { eval: true, workerData }) : new Worker(entry, { workerData });
}
