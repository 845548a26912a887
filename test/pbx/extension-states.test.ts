// GET /v1.0/extension_states (our extension, docs/pbx.md "Console"): the busy-lamp state of every
// extension of the customer at once, read from what presence keeps, against a real call between two
// sipp phones through sip-server and media-app: the callee ringing while the caller dials, both in
// the call with each other as remote, then idle; registered or not; the park slots of the range;
// another customer's extensions never shown; an agent may read it, no credentials 401.
import { expect } from 'chai';
import request from 'supertest';
import { createAgent } from '../../testkit/api';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, createExtension, killAllSipp, registerOnly, sipp, until } from '../../testkit/media-app/harness';
import { callerPhone } from '../../testkit/media-app/phones';
import { Permission } from '../../core/permissions';
import { startStack, type Stack } from '../xfer/support';

interface Lamp {
  id: string;
  extension: string;
  registered: boolean;
  state: string;
  dialogs: { state: string; direction: string; remote: string }[];
}

describe('pbx: GET /extension_states (busy lamps of all extensions)', function () {
  this.timeout(90_000);
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    killAllSipp();
    await s?.close();
  });

  const field = async () => {
    const r = await s.api.get('/extension_states');
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { extensions: Lamp[]; park_slots: { slot: number; state: string }[] };
  };
  const lampOf = async (ext: string) => (await field()).extensions.find((e) => e.extension === ext);

  it('shows a real call: ringing and dialling, in a call with each other, then idle; registration; slots', async () => {
    const cid = s.f.customer.id;
    const caller = await createExtension(cid);
    const callee = await createExtension(cid);
    const quiet = await createExtension(cid);
    const stranger = await createExtension(); // another customer's
    const first = await field();
    expect(first.extensions.map((e) => e.extension)).to.include.members([caller.ext.extension, callee.ext.extension, quiet.ext.extension]);
    expect(first.extensions.map((e) => e.extension)).to.not.include(stranger.ext.extension);
    expect(first.extensions.find((e) => e.extension === quiet.ext.extension)).to.deep.include({ id: quiet.ext.id, registered: false, state: 'idle', dialogs: [] });
    expect(first.park_slots.map((p) => p.slot)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 701 + i));
    expect(first.park_slots.every((p) => p.state === 'free')).to.equal(true);

    const sipServer = `127.0.0.1:${s.p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(callee.ext.username, callee.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', callee.ext.username, '-ap', callee.password])
      .done;
    expect(reg.code, reg.errors).to.equal(0);
    expect((await lampOf(callee.ext.extension))!.registered).to.equal(true);
    const answering = sipp(
      answeringUas({ tag: '[pid]callee', contact: `<sip:${callee.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 20000, pauseMs: 2500 }),
      ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    await new Promise((r) => setTimeout(r, 300));
    const calling = sipp(
      callerPhone(caller.ext.username, caller.domain, callee.ext.extension, s.p.sipPort, { holdMs: 2500 }),
      [sipServer, '-i', '127.0.0.1', '-m', '1', '-au', caller.ext.username, '-ap', caller.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    const ringing = await until(async () => ((await lampOf(callee.ext.extension))?.state === 'ringing' ? lampOf(callee.ext.extension) : null), 15_000, 'callee ringing');
    expect(ringing!.dialogs[0]).to.include({ direction: 'recipient', remote: `sip:${caller.ext.extension}@${caller.domain}` });
    expect((await lampOf(caller.ext.extension))!.state).to.be.oneOf(['dialing', 'in_call']);
    await until(async () => (await lampOf(callee.ext.extension))?.state === 'in_call', 15_000, 'callee in the call');
    const up = await lampOf(caller.ext.extension);
    expect(up!.state).to.equal('in_call');
    expect(up!.registered, 'the caller phone registered first').to.equal(true);
    expect(up!.dialogs[0]).to.include({ state: 'confirmed', direction: 'initiator', remote: `sip:${callee.ext.extension}@${callee.domain}` });
    const [rc, ra] = await Promise.all([calling.done, answering.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(ra.code, ra.errors).to.equal(0);
    await until(
      async () => {
        const f = await field();
        return [caller, callee].every((x) => f.extensions.find((e) => e.extension === x.ext.extension)?.state === 'idle');
      },
      10_000,
      'both idle after the call',
    );
  });

  it('an agent may read it; no credentials 401 in the error envelope', async () => {
    const agent = await createAgent(s.t.ctx, s.f.customer.id, Permission.CustomerAgent);
    const r = await request(s.t.app).get('/v1.0/extension_states').set('Authorization', `Bearer ${agent.token}`);
    expect(r.status).to.equal(200);
    expect(r.body.extensions).to.be.an('array');
    const anon = await request(s.t.app).get('/v1.0/extension_states');
    expect(anon.status).to.equal(401);
    expect(anon.body.error).to.have.property('reason');
  });
});
