// The event stream was one Redis key, `events`, for every test process on the machine (CI runs two shards at a
// time; a suite's spawned control-api is a process too); it is now under each deployment's REDIS_KEY_PREFIX
// (test/architecture/event-stream-key), but suites and processes sharing a prefix still share it, and a
// consumer group hands each event to ONE of its readers. A suite that reads it through a default group (webhooks, events-store, twilio-callbacks) shares
// that group with every other such reader: the other process takes part of the suite's events, finds their
// customer missing from its own database and acknowledges them, so they are never delivered. That is how
// test/evals/run-events.test.ts lost eval_run_* webhooks in full runs while its WebSocket (no group) saw them
// all. The claim: every consumer-group reader a suite starts names its own group or its own stream.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sourceFiles } from './source-files';

/** Functions that start a consumer-group reader of the event stream, each defaulting to a shared group. */
const READERS = ['startWebhooks', 'startEventStore', 'startTwilioCallbacks', 'startEventServices'];

/** Calls whose options come from their caller, and where the group is enforced instead. */
const PASSED_THROUGH: Record<string, string> = {
  'test/reliability/faults/platform.ts': 'its `webhooks` option type requires a group',
};

/** The text of the call whose "(" is at `open`, up to its matching ")". */
function callText(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

/** Each reader call of `text` that names neither a group nor a stream, as "file:line: call". */
function sharedGroupReaders(file: string, text: string): string[] {
  const out: string[] = [];
  const call = new RegExp(`(?<![\\w.])(${READERS.join('|')})\\(`, 'g');
  for (const m of text.matchAll(call)) {
    const line = text.slice(0, m.index).split('\n').length;
    const lineText = text.split('\n')[line - 1]!;
    if (/^\s*(export\s+)?(async\s+)?function\b|^\s*import\b/.test(lineText)) continue;
    const args = callText(text, m.index + m[1]!.length);
    if (/\b(group|stream)\b/.test(args)) continue;
    out.push(`${file}:${line}: ${m[1]}${args.replace(/\s+/g, ' ')}`);
  }
  return out;
}

describe('architecture: suites read the shared event stream through groups of their own', () => {
  it('the check finds a default-group reader and passes one with its own group or stream', () => {
    expect(sharedGroupReaders('x.ts', 'hooks = await startWebhooks(t.ctx, { baseDelayMs: 100 });')).to.deep.equal(['x.ts:1: startWebhooks(t.ctx, { baseDelayMs: 100 })']);
    expect(sharedGroupReaders('x.ts', 'const s = await startEventStore(db, redis);')).to.have.length(1);
    expect(sharedGroupReaders('x.ts', 'await startWebhooks(t.ctx, {\n  group: `g-${newId()}`,\n});')).to.deep.equal([]);
    expect(sharedGroupReaders('x.ts', 'await startEventStore(t.ctx.db, t.ctx.redis, { stream });')).to.deep.equal([]);
  });

  it('every reader a test or testkit file starts names its own group or stream', () => {
    const offences = [...sourceFiles('test'), ...sourceFiles('testkit')]
      .filter((f) => !(f in PASSED_THROUGH) && f !== 'test/architecture/stream-groups.test.ts')
      .flatMap((f) => sharedGroupReaders(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offences).to.deep.equal([]);
  });
});
