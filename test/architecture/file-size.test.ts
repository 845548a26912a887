// The brief's small files, as a rule: no source file the repository tracks (TypeScript, C, the browser
// scripts) is longer than MAX_LINES. A file that grows past it is split by what it owns (one object a
// file), not squeezed. Generated files (dist/) and vendored ones are not ours to split.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, trackedFiles } from './source-files';

export const MAX_LINES = 500;
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs|c|h)$/;

/** The tracked source files longer than `max` lines, as "path: N lines". */
export function overLong(files: string[], read: (f: string) => string, max: number): string[] {
  const out: string[] = [];
  for (const f of files) {
    const text = read(f);
    const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
    if (lines > max) out.push(`${f}: ${lines} lines`);
  }
  return out;
}

describe('architecture: small files', () => {
  it(`no tracked source file is longer than ${MAX_LINES} lines`, () => {
    const files = trackedFiles(SOURCE);
    expect(files.length, 'the walk finds the sources').to.be.greaterThan(500);
    expect(overLong(files, (f) => fs.readFileSync(path.join(ROOT, f), 'utf8'), MAX_LINES)).to.deep.equal([]);
  });

  it('counts lines as wc -l does, with or without a last newline', () => {
    const text: Record<string, string> = { 'a.ts': 'x\n'.repeat(3), 'b.ts': 'x\n'.repeat(3) + 'y', 'c.ts': '' };
    expect(overLong(Object.keys(text), (f) => text[f]!, 3)).to.deep.equal(['b.ts: 4 lines']);
    expect(overLong(Object.keys(text), (f) => text[f]!, 2)).to.deep.equal(['a.ts: 3 lines', 'b.ts: 4 lines']);
  });
});
