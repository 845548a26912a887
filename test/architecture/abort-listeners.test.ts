// An abort listener on a flow's signal must go when its wait ends (issue 52's soak): an action's signal is
// an AbortSignal.any() of the flow's, and Node keeps such a signal, and all its listeners hold, alive as
// long as it has an abort listener and has not aborted. One listener left by the OpenAI Realtime link held
// every AI call in memory for good. The claim: in media-app, each file removes as many abort listeners as
// it adds (media-app/kit/clock.ts onceAborted adds one and returns its remover).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sourceFiles } from './source-files';

describe('architecture: abort listeners are removed', () => {
  it('every media-app file removes as many abort listeners as it adds', () => {
    const unbalanced: string[] = [];
    for (const f of sourceFiles('media-app')) {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
      const added = text.match(/addEventListener\(\s*'abort'/g)?.length ?? 0;
      const removed = text.match(/removeEventListener\(\s*'abort'/g)?.length ?? 0;
      if (added > removed) unbalanced.push(`${f}: ${added} added, ${removed} removed`);
    }
    expect(unbalanced).to.deep.equal([]);
  });
});
