// The timer-heavy objects of media-app beside the call and the voice agent (issue 53): a queue entry, a
// parked call and a ringing groupcall change state through their move tables (queue/entry-moves.ts,
// pbx/park-moves.ts, groupcall/ring-moves.ts on call/move-table.ts) and arm every timer through the
// TimerHost their table's states own, never a bare setTimeout / setInterval, so leaving a state cancels
// its timers and the tests run them on virtual time.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** A file's code, comments stripped. */
const code = (f: string) =>
  fs
    .readFileSync(path.join(ROOT, f), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');

const OBJECTS = [
  'media-app/call/move-table.ts',
  'media-app/queue/entry-moves.ts',
  'media-app/queue/service.ts',
  'media-app/pbx/park-moves.ts',
  'media-app/pbx/park.ts',
  'media-app/groupcall/ring-moves.ts',
  'media-app/groupcall/runner.ts',
];

describe('architecture: move tables for the queue entry, the parked call and the ringing groupcall', () => {
  it('the check finds a bare timer', () => {
    expect(/\bset(Timeout|Interval)\(/.test("const t = setTimeout(() => finish('timeout'), ms);")).to.equal(true);
    expect(/\bset(Timeout|Interval)\(/.test('this.timers.set(DISPATCH_INTERVAL_MS, this.sweep);')).to.equal(false);
  });

  for (const f of OBJECTS) {
    it(`${f} arms no bare setTimeout / setInterval`, () => {
      expect(code(f)).not.to.match(/\bset(Timeout|Interval)\(/);
    });
  }

  it('the queue entry, the parked call and the ringing groupcall move through their tables', () => {
    expect(code('media-app/queue/service.ts')).to.match(/new EntryMoves\(/);
    expect(code('media-app/pbx/park.ts')).to.match(/new ParkMoves\(/);
    expect(code('media-app/groupcall/runner.ts')).to.match(/ringMoves\(/);
    // the groupcall's flags became its states
    expect(code('media-app/groupcall/runner.ts')).not.to.match(/\b(stopping|finished)\s*=[^=]/);
    // no state written beside the table: the entry has no state field, the parked call no `left` flag
    for (const f of ['media-app/queue/service.ts', 'media-app/queue/dequeue.ts', 'media-app/queue/dequeue-leg.ts']) expect(code(f), f).not.to.match(/\.state\s*=[^=]/);
    expect(code('media-app/pbx/park.ts')).not.to.match(/\.left\s*=[^=]/);
  });
});
