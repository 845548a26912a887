/**
 * Safe priority for media workers (issue 25): MediaServerOptions.workerNice sets the nice value of
 * the worker threads only (Linux keeps it per thread), never of the API thread or the process.
 * A positive value is used here: lowering it needs CAP_SYS_NICE, raising it does not.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import { MediaServer } from '../../media-engine';
import { procStat } from '../../media-engine/worker/proc-stat';
import { portRange } from '../../testkit/media-engine/support';

/** nice value of each thread of this process (/proc/<pid>/task/<tid>/stat) */
function threadNices(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${process.pid}/task`)) {
    out.set(Number(tid), procStat(process.pid, Number(tid)).nice);
  }
  return out;
}

describe('media-engine: worker thread priority (workerNice)', function () {
  this.timeout(20000);
  it('gives each worker thread the nice value and leaves the API thread alone', async () => {
    const before = threadNices();
    const ms = await MediaServer.start({ workers: 2, rtpPorts: portRange(101), workerNice: 7 });
    try {
      const after = threadNices();
      const niced = [...after.entries()].filter(([tid, n]) => n === 7 && !before.has(tid));
      expect(niced.length, 'threads at nice 7').to.equal(2);
      expect(after.get(process.pid), 'the API thread').to.equal(before.get(process.pid));
    } finally {
      await ms.destroy();
    }
  });

  it('leaves the workers at the default without the option', async () => {
    const ms = await MediaServer.start({ workers: 1, rtpPorts: portRange(101) });
    try {
      const main = threadNices().get(process.pid);
      expect([...threadNices().values()].every((n) => n === main)).to.equal(true);
    } finally {
      await ms.destroy();
    }
  });
});
