// The extension's no-answer timer against the callee's answer (docs/pbx.md "The extension's
// voicemail"): sipp callees answer around the moment `voicemail_timeout` runs out, spread over a few
// tens of milliseconds either side, each called by another sipp extension that talks 3 s, then hangs
// up. Whichever comes first decides, once: the call is bridged to the callee (it talks until the
// caller's BYE) or it goes to the box (a callee's 200 that crossed the CANCEL gets ACK and BYE).
// Never both, and never neither: the caller is not answered and then hung up by the platform.
import { expect } from 'chai';
import request from 'supertest';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { buildTestApp, type TestApp } from '../../testkit/api';
import { answeringUas, createExtension, killAllSipp, registerOnly, sipp, until, type Platform, startPlatform } from '../../testkit/media-app/harness';
import { callerPhone } from '../../testkit/media-app/phones';
import { extensionWithBox, pbxCustomer } from '../../testkit/pbx/voicemail';
import { repos } from '../../core/repos';

const TIMEOUT_SEC = 5;

describe('pbx: the no-answer timer and an answer at the same moment', function () {
  this.timeout(180_000);
  let p: Platform;
  let t: TestApp;

  before(async () => {
    // sipp answers only MD5 challenges
    p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' });
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
  });
  after(async () => {
    killAllSipp();
    await t?.close();
    await p?.close();
  });

  /** An extension with a box that takes its unanswered calls after `timeoutSec`, registered from a port of its own. */
  async function registeredCallee(cid: string, token: string, number: string, timeoutSec: number) {
    const callee = await extensionWithBox(cid, { number, pin: '2468', greeting_text: 'Leave it.' });
    const put = await request(t.app)
      .put(`/v1.0/extensions/${callee.ext.id}`)
      .query({ accesskey: token })
      .send({ voicemail_on: { no_answer: true, busy: false }, voicemail_timeout: timeoutSec });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const port = await freePort();
    const args = [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-au', callee.ext.username, '-ap', callee.password];
    const reg = await sipp(registerOnly(callee.ext.username, callee.domain), args).done;
    expect(reg.code, reg.errors).to.equal(0);
    return { callee, port };
  }

  /** One caller/callee pair whose callee answers `answerAfterMs` after the INVITE reached it. */
  async function pair(cid: string, token: string, i: number, answerAfterMs: number) {
    const db = await testDb();
    const { callee, port } = await registeredCallee(cid, token, `9${process.pid % 1000}${i}`, TIMEOUT_SEC);
    const phone = sipp(
      answeringUas({ tag: '[pid]callee', contact: `<sip:${callee.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 30_000, pauseMs: answerAfterMs, cancelWhileRinging: true }),
      ['-i', '127.0.0.1', '-p', String(port), '-m', '1'],
      {
        killAfterMs: 40_000,
      },
    );
    const caller = await createExtension(cid);
    const calling = sipp(
      callerPhone(caller.ext.username, caller.domain, callee.ext.extension, p.sipPort, { holdMs: 3000 }),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '1', '-au', caller.ext.username, '-ap', caller.password],
      { killAfterMs: 40_000 },
    );
    const [c] = await Promise.all([calling.done, phone.done]);
    // the caller's call and what became of it
    const mine = () => db('calls').where({ customer_id: cid, direction: 'incoming' }).whereRaw(`source->>'target' = ?`, [caller.ext.extension]).first();
    const master = await until(async () => (await mine())?.tm_hangup && mine(), 15_000, `pair ${i}: the caller's call ended`).catch(async () => {
      const row = await mine();
      const legs = row ? await db('calls').where({ master_call_id: row.id }) : [];
      const af = row?.activeflow_id ? await db('activeflows').where({ id: row.activeflow_id }).first() : null;
      throw new Error(
        `pair ${i} (answer after ${answerAfterMs} ms): the caller's call did not end: ${row?.status}; legs ${legs.map((l) => `${l.status} ${l.hangup_reason} ${l.tm_progressing?.toISOString()} ${l.tm_hangup?.toISOString()}`).join()}; flow ${JSON.stringify(af)}; caller ${c.code} ${c.errors}`,
      );
    });
    const leg = await db('calls').where({ master_call_id: master.id }).first();
    const af = master.activeflow_id ? await db('activeflows').where({ id: master.activeflow_id }).first() : null;
    const voicemail = !!af && (af.executed_actions as { type: string }[]).some((a) => a.type === 'voicemail');
    const talkedMs = leg?.tm_progressing && leg.tm_hangup ? new Date(leg.tm_hangup).getTime() - new Date(leg.tm_progressing).getTime() : 0;
    return { i, answerAfterMs, callerOk: c.code === 0, callerLog: c.errors + c.messages.slice(-1500), voicemail, bridged: talkedMs >= 2000, talkedMs };
  }

  // The race's loser was a 200 that crossed the timer's CANCEL: the dialler BYE'd it and waited for the
  // BYE's answer before saying "not answered", so a callee that did not answer the BYE (sipp, once the
  // CANCEL had upset its scenario) held the caller ringing for the BYE's 32 s transaction timeout.
  it('a 200 crossing the CANCEL whose BYE is never answered: the caller reaches the box at once', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'vm-cross' });
    const { callee, port } = await registeredCallee(cid, token, `8${process.pid % 1000}1`, 5);
    const phone = sipp(
      answeringUas({ tag: '[pid]cross', contact: `<sip:${callee.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 30_000, answerOverCancel: true }),
      ['-i', '127.0.0.1', '-p', String(port), '-m', '1'],
      {
        killAfterMs: 30_000,
      },
    );
    const caller = await createExtension(cid);
    const calling = sipp(
      callerPhone(caller.ext.username, caller.domain, callee.ext.extension, p.sipPort, { holdMs: 1000 }),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '1', '-au', caller.ext.username, '-ap', caller.password],
      { killAfterMs: 30_000 },
    );
    // the box answers 5 s after the INVITE, plus the time to start it: well inside 15 s (the BYE's
    // transaction, had the dialler waited for it, takes 32 s)
    const master = await until(
      async () => {
        const row = await db('calls').where({ customer_id: cid, direction: 'incoming' }).whereRaw(`source->>'target' = ?`, [caller.ext.extension]).first();
        return row?.tm_progressing ? row : null;
      },
      15_000,
      'the caller answered by the box',
    );
    const [c, ph] = await Promise.all([calling.done, phone.done]);
    expect(c.code, c.errors).to.equal(0);
    expect(ph.code, `the callee's 200 crossed the CANCEL and got ACK and BYE: ${ph.errors}`).to.equal(0);
    const af = await until(async () => (await db('activeflows').where({ id: master.activeflow_id }).first()) ?? null, 5000, 'the flow');
    expect((af.executed_actions as { type: string }[]).some((a) => a.type === 'voicemail')).to.equal(true);
  });

  it('decides once: bridged to the callee or to the box, never both or neither', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'vm-race' });
    // answers spread around the timeout (the callee's INVITE comes a little after the timer starts)
    const offsets = [-120, -80, -50, -30, -15, 0, 15, 30, 50, 80];
    const runs = await Promise.all(offsets.map((o, i) => pair(cid, token, i, TIMEOUT_SEC * 1000 + o)));
    const summary = runs
      .map((r) => `${r.answerAfterMs} ms: ${r.bridged ? 'bridged' : ''}${r.voicemail ? 'voicemail' : ''}${r.callerOk ? '' : ' caller hung up by the platform'} (leg talked ${r.talkedMs} ms)`)
      .join('\n');
    for (const r of runs) {
      expect(r.callerOk, `${summary}\npair ${r.i}: ${r.callerLog}`).to.equal(true);
      expect(Number(r.bridged) + Number(r.voicemail), `exactly one outcome\n${summary}`).to.equal(1);
    }
  });
});
