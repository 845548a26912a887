// Supervisor refusals and DELETE, with real phones (sipp): the API's bad inputs in the spec's
// envelope (unknown call 404, ended call 409, agent role 403, bad mode 400, not supervised 404,
// supervised already 409), feature codes refused by SIP (not a supervisor 403, nothing to
// supervise 404), settings whose supervise prefixes clash 400; DELETE hangs the supervisor up and
// the call goes on.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createAgent } from '../../testkit/api';
import { eventsFor, sleep, until } from '../../testkit/media-app/harness';
import { Permission } from '../../core/permissions';
import { DEFAULT_FEATURE_CODES } from '../../core/pbx/feature-codes';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { party, type Stack } from '../xfer/support';
import { answerOn, call, caller, callWhere, hears, refusedCaller, shareOf, usePhoneStack } from './support';
import { api } from './supervise-support';

const [F_A, F_B, F_S] = [400, 1600, 2800];

describe('pbx: supervisor refusals', function () {
  this.timeout(150_000);
  let s: Stack;
  let cid: string;
  const { newPhone } = usePhoneStack((x) => ((s = x), (cid = x.f.customer.id)));

  it('feature codes: a phone not named a supervisor 403, nothing to supervise 404', async () => {
    const [b, sup, other] = [await newPhone(F_B), await newPhone(F_S), await newPhone(F_A)];
    await pbxSettingsRepo(s.t.ctx.db).put(cid, { ...DEFAULT_FEATURE_CODES, supervisor_extensions: [sup.extension] });
    const r1 = await (await call(s, other, refusedCaller({ user: other.user, domain: other.domain, target: `*1${b.extension}`, status: 403, phrase: 'Not A Supervisor' }))).done;
    expect(r1.code, r1.errors + r1.messages.slice(-1500)).to.equal(0);
    const r2 = await (await call(s, sup, refusedCaller({ user: sup.user, domain: sup.domain, target: `*2${b.extension}`, status: 404, phrase: 'Nothing To Supervise' }))).done;
    expect(r2.code, r2.errors + r2.messages.slice(-1500)).to.equal(0);
  });

  it('settings whose supervise prefixes clash are refused 400', async () => {
    expect((await api(s).put('/pbx_settings', { supervise_listen_prefix: '*9' })).status, 'voicemail *97 starts with it').to.equal(400);
    expect((await api(s).put('/pbx_settings', { supervise_barge_prefix: '**' })).status, 'the directed pickup prefix').to.equal(400);
    expect((await api(s).put('/pbx_settings', { supervise_whisper_prefix: '*1' })).status, 'two features on one prefix').to.equal(400);
    expect((await api(s).put('/pbx_settings', { supervisor_extensions: ['<x>'] })).status, 'not an extension').to.equal(400);
    const ok = await api(s).put('/pbx_settings', { supervise_listen_prefix: '*41', supervisor_extensions: ['201'] });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body).to.include({ supervise_listen_prefix: '*41', supervise_whisper_prefix: '*2' });
    expect((await api(s).put('/pbx_settings', { supervise_listen_prefix: '*1', supervisor_extensions: [] })).status).to.equal(200);
  });

  it('the API: 404, 403, 400, 409; DELETE hangs the supervisor up and the call goes on', async () => {
    const [a, b, sup] = [await newPhone(F_A), await newPhone(F_B), await newPhone(F_S)];
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, byeTimeoutMs: 120_000 }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 120_000 }));
    await hears(a.audio, F_B, 'A hears B');
    const bRow = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'progressing', "B's leg up");
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'progressing', "A's call up");
    const dest = { type: 'extension', target: sup.extension };
    const unknown = await api(s).post(`/calls/${randomUUID()}/supervise`, { mode: 'listen', destination: dest });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error, JSON.stringify(unknown.body)).to.include({ status: 'NOT_FOUND', reason: 'CALL_NOT_FOUND' });
    const bad = await api(s).post(`/calls/${bRow.id}/supervise`, { mode: 'spy', destination: dest });
    expect(bad.status, JSON.stringify(bad.body)).to.equal(400);
    expect(bad.body.error?.status).to.equal('INVALID_ARGUMENT');
    const agent = await createAgent(s.t.ctx, cid, Permission.CustomerAgent);
    const denied = await api(s, agent.token).post(`/calls/${bRow.id}/supervise`, { mode: 'listen', destination: dest });
    expect(denied.status, 'agent role').to.equal(403);
    expect(denied.body.error?.status).to.equal('PERMISSION_DENIED');
    expect((await api(s, agent.token).get(`/calls/${bRow.id}/supervise`)).status, 'agent role').to.equal(403);
    for (const r of [await api(s).get(`/calls/${bRow.id}/supervise`), await api(s).put(`/calls/${bRow.id}/supervise`, { mode: 'barge' }), await api(s).delete(`/calls/${bRow.id}/supervise`)])
      expect(r.status, 'not supervised').to.equal(404);
    // a supervision, then DELETE: the supervisor gets its BYE, A and B talk on
    const sPhone = await answerOn(sup, party({ rtpPort: sup.audio.port, byeTimeoutMs: 60_000 }));
    expect((await api(s).post(`/calls/${bRow.id}/supervise`, { mode: 'barge', destination: dest })).status).to.equal(201);
    await hears(a.audio, F_S, 'A hears S (barge)');
    expect((await api(s).put(`/calls/${bRow.id}/supervise`, { mode: 'nope' })).status).to.equal(400);
    expect((await api(s).delete(`/calls/${bRow.id}/supervise`)).status).to.equal(200);
    const rs = await sPhone.done;
    expect(rs.code, rs.errors).to.equal(0);
    await until(async () => (await api(s).get(`/calls/${bRow.id}/supervise`)).status === 404, 10_000, 'supervision gone');
    await until(() => shareOf(a.audio, F_S, 600) === 0 && shareOf(a.audio, F_B, 600) > 0.6, 10_000, 'A hears B, not S');
    await hears(b.audio, F_A, 'B hears A after the DELETE');
    // the call ends: 409 for it
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    await Promise.all([aPhone.done, bPhone.done]);
    await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'hangup', "B's leg ended");
    const ended = await api(s).post(`/calls/${bRow.id}/supervise`, { mode: 'listen', destination: dest });
    expect(ended.status, JSON.stringify(ended.body)).to.equal(409);
    expect(ended.body.error).to.include({ status: 'FAILED_PRECONDITION', reason: 'CALL_ALREADY_HANGUP' });
  });

  it('POST for a call that talks to no other call (parked) rings nobody and ends failed', async () => {
    const [a, sup] = [await newPhone(F_A), await newPhone(F_S)];
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: '700', rtpPort: a.audio.port, byeTimeoutMs: 60_000 }));
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'progressing', 'A parked');
    await sleep(1000);
    const r = await api(s).post(`/calls/${aRow.id}/supervise`, { mode: 'listen', destination: { type: 'extension', target: sup.extension } });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const ended = await until(async () => (await eventsFor(s.p.redis, r.body.id)).find((e) => e.event_type === 'supervise_ended') ?? null, 10_000, 'supervise_ended');
    expect(ended.data.reason).to.equal('failed');
    await sleep(1000);
    const rung = await s.t.ctx.db('calls').where({ customer_id: cid, direction: 'outgoing' }).whereRaw("destination->>'target' = ?", [sup.extension]);
    expect(rung, 'nobody rung').to.have.length(0);
    expect((await api(s).get(`/calls/${aRow.id}/supervise`)).status).to.equal(404);
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    expect((await aPhone.done).code).to.equal(0);
  });
});

// On the fsmrf backend supervision (the engine's mix) is refused by name before anyone is answered
// (media-app/pbx/supervise.ts check, docs/pbx.md "On the fsmrf media backend"); the call goes on.
describe('pbx: supervisor refusals on the fsmrf backend', function () {
  this.timeout(150_000);
  let s: Stack;
  let cid: string;
  const { newPhone } = usePhoneStack((x) => ((s = x), (cid = x.f.customer.id)), { mediaServer: 'fsmrf' });

  it('a feature code is refused 501 before it is answered; a POST rings nobody and ends failed; A and B talk on', async () => {
    const [a, b, sup] = [await newPhone(F_A), await newPhone(F_B), await newPhone(F_S)];
    await pbxSettingsRepo(s.t.ctx.db).put(cid, { ...DEFAULT_FEATURE_CODES, supervisor_extensions: [sup.extension] });
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, byeTimeoutMs: 120_000 }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 120_000 }));
    await hears(a.audio, F_B, 'A hears B');
    const bRow = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'progressing', "B's leg up");
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'progressing', "A's call up");
    const code = await (await call(s, sup, refusedCaller({ user: sup.user, domain: sup.domain, target: `*1${b.extension}`, status: 501, phrase: 'Supervision Not On This Media Backend' }))).done;
    expect(code.code, code.errors + code.messages.slice(-1500)).to.equal(0);
    const r = await api(s).post(`/calls/${bRow.id}/supervise`, { mode: 'listen', destination: { type: 'extension', target: sup.extension } });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const ended = await until(async () => (await eventsFor(s.p.redis, r.body.id)).find((e) => e.event_type === 'supervise_ended') ?? null, 10_000, 'supervise_ended');
    expect(ended.data.reason).to.equal('failed');
    // released before any ringing: the refusal is decided before the groupcall is made
    const rung = await s.t.ctx.db('calls').where({ customer_id: cid, direction: 'outgoing' }).whereRaw("destination->>'target' = ?", [sup.extension]);
    expect(rung, 'nobody rung').to.have.length(0);
    await hears(a.audio, F_B, 'A still hears B');
    await hears(b.audio, F_A, 'B still hears A');
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rb] = await Promise.all([aPhone.done, bPhone.done]);
    expect(ra.code, ra.errors).to.equal(0);
    expect(rb.code, rb.errors).to.equal(0);
  });
});
