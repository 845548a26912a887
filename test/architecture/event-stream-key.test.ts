// The event stream's Redis key is derived from REDIS_KEY_PREFIX in one place, core/events/bus.ts
// (`eventStreamKey`): a key built by hand elsewhere, the bare name `events` given to a Redis stream command,
// is how deployments sharing a Redis under different prefixes came to read each other's events (issue #53).
// The name itself is not exported (tsc refuses an import of it); this catches the literal.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sourceFiles } from './source-files';

const ROOMS = ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'esl', 'evals', 'scripts', 'test', 'testkit'];
const OWNER = 'core/events/bus.ts';

/** Redis stream commands (ioredis methods and raw `call`/`send_command` names) whose arguments are keys. */
const STREAM_COMMANDS = 'xadd|xread|xreadgroup|xrange|xrevrange|xgroup|xack|xlen|xtrim|xdel|xinfo|xpending|xclaim|xautoclaim|xsetid';

/** Each place of `text` that gives the bare stream name to a stream command, as "file:line: text". */
function handBuiltKeys(file: string, text: string): string[] {
  const out: string[] = [];
  const command = new RegExp(`\\.(?:${STREAM_COMMANDS})\\(([^;]*)|\\.(?:call|send_command)\\(\\s*['"\`](?:${STREAM_COMMANDS})['"\`]([^;]*)`, 'gi');
  for (const m of text.matchAll(command)) {
    const args = m[1] ?? m[2] ?? '';
    if (!/(^|[\s,(])['"`]events['"`]/.test(args)) continue;
    const line = text.slice(0, m.index).split('\n').length;
    out.push(`${file}:${line}: ${text.split('\n')[line - 1]!.trim()}`);
  }
  // `stream: 'events'`, an option of a publisher, reader or service
  for (const m of text.matchAll(/\bstream\s*[:=]\s*['"`]events['"`]/g)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push(`${file}:${line}: ${text.split('\n')[line - 1]!.trim()}`);
  }
  return out;
}

describe('architecture: the event stream key comes from eventStreamKey(REDIS_KEY_PREFIX) only', () => {
  it('the check finds the bare name given to a stream command or a stream option, and passes a derived key', () => {
    expect(handBuiltKeys('x.ts', "await redis.xadd('events', '*', 'e', '{}');")).to.have.length(1);
    expect(handBuiltKeys('x.ts', 'await r.xrange(`events`, "-", "+");')).to.have.length(1);
    expect(handBuiltKeys('x.ts', "await r.xgroup('CREATE', 'events', 'g', '$');")).to.have.length(1);
    expect(handBuiltKeys('x.ts', "await r.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', 'events', '>');")).to.have.length(1);
    expect(handBuiltKeys('x.ts', "new EventSubscriber(conn, { stream: 'events' });")).to.have.length(1);
    expect(handBuiltKeys('x.ts', 'await r.xrange(eventStreamKey(prefix), "-", "+");')).to.deep.equal([]);
    expect(handBuiltKeys('x.ts', "await db('events').insert(row);")).to.deep.equal([]);
    expect(handBuiltKeys('x.ts', "await r.xadd(`${prefix}events`, '*', 'e', '{}');")).to.deep.equal([]);
  });

  it(`no file but ${OWNER} names the stream`, () => {
    const offences = ROOMS.flatMap(sourceFiles)
      .filter((f) => f !== OWNER && f !== 'test/architecture/event-stream-key.test.ts')
      .flatMap((f) => handBuiltKeys(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offences).to.deep.equal([]);
  });

  it(`${OWNER} keeps the name to itself: not exported, read only by eventStreamKey`, () => {
    const text = fs.readFileSync(path.join(ROOT, OWNER), 'utf8');
    expect(text).to.not.match(/export\s+const\s+EVENT_STREAM\b/);
    expect(text.match(/\bEVENT_STREAM\b/g)).to.have.length(2); // its declaration and eventStreamKey's use
  });
});
