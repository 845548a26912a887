// scripts/build-web.ts replaces each built file whole (written aside, then renamed over the old one): the
// parallel mocha processes of scripts/test-run.ts build the same app (webphone, console and scale suites
// sit in different shards) while another one's control-api serves it to Chromium, which must never read
// a file cut in the middle of a rewrite.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { buildWebApp } from '../../scripts/build-web';

describe('scripts/build-web.ts: atomic output', function () {
  this.timeout(60_000);

  it('a rebuild replaces main.js and index.html by rename: a reader of the old file keeps a whole file', async () => {
    const out = await buildWebApp('phone');
    const files = ['main.js', 'index.html'].map((f) => path.join(out, f));
    const held = files.map((f) => ({ f, fd: fs.openSync(f, 'r'), ino: fs.statSync(f).ino, size: fs.statSync(f).size }));
    try {
      await buildWebApp('phone');
      for (const h of held) {
        expect(fs.statSync(h.f).ino, `${path.basename(h.f)} replaced, not rewritten in place`).to.not.equal(h.ino);
        expect(fs.fstatSync(h.fd).size, `the old ${path.basename(h.f)} is still whole`).to.equal(h.size);
      }
      expect(
        fs.readdirSync(out).filter((f) => f.includes('.tmp-')),
        'no temporary files left',
      ).to.deep.equal([]);
    } finally {
      for (const h of held) fs.closeSync(h.fd);
    }
  });
});
