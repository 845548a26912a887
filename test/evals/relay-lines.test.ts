// relay_lines (core/repos/relay-lines.ts, docs/evals.md "Agent kinds"): a ConversationRelay app's replies
// on a call, on the real database: timed from the call's answer, in order, only for a call of the
// customer's, bounded per call in count and size, read only by that customer, and gone with the call.
import { expect } from 'chai';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { insertCallRow } from '../../testkit/cdr';
import { RELAY_LINE_MAX_CHARS, RELAY_LINES_MAX, relayLinesRepo } from '../../core/repos/relay-lines';
import { evalReachRepo } from '../../core/repos/eval-reach';
import pino from 'pino';
import { relayLineSink } from '../../media-app/twiml/relay-lines';
import { until } from '../../testkit/media-app/harness';

describe('relay_lines: the ConversationRelay app replies of a call', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const answered = new Date('2026-11-27T03:00:00.000Z');
  const after = (ms: number) => new Date(answered.getTime() + ms);

  it('written in order, timed from the answer, the cut one marked; read by the customer only', async () => {
    const repo = relayLinesRepo(t.ctx.db);
    const callId = await insertCallRow(t.ctx.db, f.customer.id, { tm_create: answered, tm_progressing: answered });
    expect(await repo.add(f.customer.id, callId, { text: 'Welcome.', at: after(120), interrupted: false })).to.equal(1);
    expect(await repo.add(f.customer.id, callId, { text: 'We are open.', at: after(4250), interrupted: false })).to.equal(2);
    await repo.markInterrupted(f.customer.id, callId, 1);
    expect(await evalReachRepo(t.ctx.db).relayLines(f.customer.id, callId)).to.deep.equal([
      { seq: 1, text: 'Welcome.', t_ms: 120, interrupted: true },
      { seq: 2, text: 'We are open.', t_ms: 4250, interrupted: false },
    ]);
    const other = await createFixture(t.ctx);
    // another customer can neither write onto the call nor read or mark its lines
    expect(await repo.add(other.customer.id, callId, { text: 'Injected.', at: after(5000), interrupted: false })).to.equal(null);
    await repo.markInterrupted(other.customer.id, callId, 2);
    expect(await repo.ofCall(other.customer.id, callId)).to.deep.equal([]);
    expect((await repo.ofCall(f.customer.id, callId)).map((l) => [l.text, l.interrupted])).to.deep.equal([
      ['Welcome.', true],
      ['We are open.', false],
    ]);
  });

  it('bounded: RELAY_LINES_MAX replies a call, RELAY_LINE_MAX_CHARS characters a reply; gone with the call', async () => {
    const repo = relayLinesRepo(t.ctx.db);
    const callId = await insertCallRow(t.ctx.db, f.customer.id, { tm_create: answered, tm_progressing: answered });
    expect(await repo.add(f.customer.id, callId, { text: 'x'.repeat(RELAY_LINE_MAX_CHARS + 500), at: after(10), interrupted: false })).to.equal(1);
    for (let i = 2; i <= RELAY_LINES_MAX; i++) await repo.add(f.customer.id, callId, { text: `line ${i}`, at: after(i * 10), interrupted: false });
    expect(await repo.add(f.customer.id, callId, { text: 'one too many', at: after(99_000), interrupted: false })).to.equal(null);
    const lines = await repo.ofCall(f.customer.id, callId);
    expect(lines.length).to.equal(RELAY_LINES_MAX);
    expect(lines[0]!.text.length).to.equal(RELAY_LINE_MAX_CHARS);
    expect(lines.at(-1)!.text).to.equal(`line ${RELAY_LINES_MAX}`);
    // what was not kept is counted on the call: the 500 characters cut, the reply past the count
    expect(await evalReachRepo(t.ctx.db).relayLoss(f.customer.id, callId)).to.deep.equal({ replies: 1, chars: 500 + 'one too many'.length });
    // characters the writer already cut off a kept reply count too
    await t.ctx.db('relay_lines').where({ call_id: callId, seq: RELAY_LINES_MAX }).delete();
    expect(await repo.add(f.customer.id, callId, { text: 'kept', at: after(99_500), interrupted: false, cutChars: 70 })).to.equal(RELAY_LINES_MAX);
    expect(await repo.lossOf(f.customer.id, callId)).to.deep.equal({ replies: 1, chars: 500 + 'one too many'.length + 70 });
    // another customer's view: nothing, and it cannot count against the call
    const other = (await createFixture(t.ctx)).customer.id;
    await repo.lose(other, callId, { replies: 5, chars: 5 });
    expect(await repo.lossOf(other, callId)).to.equal(null);
    await t.ctx.db('calls').where({ id: callId }).delete();
    expect(await t.ctx.db('relay_lines').where({ call_id: callId }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);
    expect(await repo.lossOf(f.customer.id, callId)).to.equal(null);
  });

  it('a write that fails (the database refuses the text) counts the reply as lost; the next is kept', async () => {
    const callId = await insertCallRow(t.ctx.db, f.customer.id, { tm_create: answered, tm_progressing: answered });
    const logger = pino({ level: 'silent' });
    const sink = relayLineSink(t.ctx.db, logger, f.customer.id, callId);
    // Postgres refuses a NUL character in text: the row is not written
    sink.write('We are \u0000closed.', after(100), false, 3);
    sink.write('We are open.', after(200), false);
    const repo = relayLinesRepo(t.ctx.db);
    const lines = await until(
      async () => {
        const l = await repo.ofCall(f.customer.id, callId);
        return l.length ? l : null;
      },
      10_000,
      'the second reply written',
    );
    expect(lines.map((l) => l.text)).to.deep.equal(['We are open.']);
    expect(await repo.lossOf(f.customer.id, callId)).to.deep.equal({ replies: 1, chars: 'We are \u0000closed.'.length + 3 });
  });
});
