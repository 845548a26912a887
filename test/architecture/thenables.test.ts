// No class of the product is a thenable by accident (issue 52): an object with a method named `then`
// is taken for a promise wherever it is awaited or returned from an async function, and its `then`
// is called with resolve/reject. RealtimeAgent's `start()` returned `this` while it had a private
// `then(fn)` (run fn in order, unless finished): a session that ended while it connected never
// resolved its start. The claim: no class method of the product's rooms is named `then`.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sourceFiles } from './source-files';

const ROOMS = ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'sip-config', 'esl', 'evals'];

describe('architecture: no accidental thenables', () => {
  it('no class method of the product is named then', () => {
    const found: string[] = [];
    for (const f of ROOMS.flatMap(sourceFiles)) {
      const lines = fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n');
      lines.forEach((l, i) => {
        if (/^\s+(?:(?:private|protected|public|static|async)\s+)*then\s*[(<]/.test(l)) found.push(`${f}:${i + 1}`);
      });
    }
    expect(found).to.deep.equal([]);
  });
});
