// The caller's new fields in the eval scenarios API (issue 56, docs/evals.md "A goal caller",
// "Background audio", "What the caller heard"): a goal caller, a voice, hearing and background are accepted and
// read back with their defaults; a caller with both turns and a goal, or neither, max_turns without a
// goal, an unknown background or recogniser are 400s naming the field; all of it, the new check and the
// result's heard fields, are in the OpenAPI document.
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { numbersRepo } from '../../core/repos/numbers';

describe('eval scenarios API: the goal caller, hearing and background audio', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const NUMBER = '+899574000001';
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);
  const scenario = (caller: Record<string, unknown>, checks: unknown[] = []) => ({ name: 'goal', target: { type: 'number', target: NUMBER }, caller, checks });
  before(async () => {
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: NUMBER, type: 'virtual' });
  });

  it('accepts a goal caller with hearing and background, and reads it back with the defaults', async () => {
    const body = scenario({ goal: 'Book a table for two.', persona: 'A regular.', max_turns: 5, hear: { phrases: ['yes'] }, background: { type: 'babble' } }, [
      { type: 'transcript_heard_contains', text: 'booked' },
    ]);
    const made = await auth(request(t.app).post('/v1.0/eval_scenarios')).send(body).expect(200);
    expect(made.body.caller).to.deep.equal({
      language: 'en-US',
      goal: 'Book a table for two.',
      persona: 'A regular.',
      max_turns: 5,
      hear: { provider: 'pocketsphinx', phrases: ['yes'] },
      background: { type: 'babble', level_db: -35, voices: 4 },
    });
    expect(made.body.checks).to.deep.equal([{ type: 'transcript_heard_contains', text: 'booked' }]);
    const scripted = await auth(request(t.app).post('/v1.0/eval_scenarios'))
      .send(scenario({ turns: [{ hangup: true }], background: { type: 'echo' } }))
      .expect(200);
    expect(scripted.body.caller.background).to.deep.equal({ type: 'echo', gain_db: -20, delay_ms: 60 });
    const voiced = await auth(request(t.app).post('/v1.0/eval_scenarios'))
      .send(scenario({ language: 'en-GB', voice: 'f2', turns: [{ say: 'Hello.' }] }))
      .expect(200);
    expect(voiced.body.caller).to.deep.equal({ language: 'en-GB', voice: 'f2', turns: [{ say: 'Hello.' }] });
  });

  it('refuses callers with both turns and a goal or neither, max_turns or llm without a goal, unknown backgrounds and recognisers', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [scenario({ goal: 'x', turns: [{ hangup: true }] }), 'caller.turns'],
      [scenario({ language: 'en-US' }), 'caller.turns'],
      [scenario({ turns: [{ hangup: true }], max_turns: 3 }), 'caller.goal'],
      [scenario({ turns: [{ hangup: true }], llm: { ai_id: '00000000-0000-4000-8000-000000000000' } }), 'caller.goal'],
      [scenario({ goal: 'x', max_turns: 0 }), 'caller.max_turns'],
      [scenario({ goal: 'x', background: { type: 'music' } }), 'caller.background.type'],
      [scenario({ goal: 'x', background: { type: 'echo', gain_db: 6 } }), 'caller.background.gain_db'],
      [scenario({ goal: 'x', hear: { provider: 'whisper' } }), 'caller.hear.provider'],
      [scenario({ turns: [{ hangup: true }], voice: 'robot' }), 'caller.voice'],
      [scenario({ turns: [{ hangup: true }], voice: 'f2+m1' }), 'caller.voice'],
      [scenario({ goal: 'x' }, [{ type: 'transcript_heard_contains' }]), 'checks.0.text'],
    ];
    for (const [body, field] of bad) {
      const r = await auth(request(t.app).post('/v1.0/eval_scenarios')).send(body).expect(400);
      expect(
        (r.body.error.details as { field: string }[]).map((d) => d.field),
        `${field}: ${JSON.stringify(r.body.error)}`,
      ).to.include(field);
    }
  });

  it('the OpenAPI document has the caller fields, the check and the heard result', async () => {
    const doc = JSON.stringify((await request(t.app).get('/v1.0/openapi.json').expect(200)).body);
    for (const name of ['goal', 'persona', 'max_turns', 'hear', 'phrases', 'background', 'level_db', 'gain_db', 'delay_ms', 'heard_text', 'heard_t_ms', 'heard', 'reached'])
      expect(doc, name).to.contain(`"${name}"`);
    for (const c of ['transcript_heard_contains', 'noise', 'babble', 'echo', 'pocketsphinx', 'voice', 'f2', 'whisperf']) expect(doc, c).to.contain(`"${c}"`);
  });
});
