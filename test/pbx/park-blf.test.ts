// Busy lamp keys on park slots (issue 37): a raw UDP subscriber (testkit/pbx/subscriber.ts) watches
// slot 701 with `Event: dialog` as a desk phone's BLF key does, before anything was ever parked; a
// sipp phone dials the lot (700) and is parked in 701: the key shows one confirmed dialog (the parked
// call, its caller as remote); the call retrieved or hung up: the dialog shows terminated, then none.
// And the extension API takes slot numbers as `blf_keys`, rendered like an extension's key.
import { expect } from 'chai';
import request from 'supertest';
import { XMLParser } from 'fast-xml-parser';
import { createExtension, until } from '../../testkit/media-app/harness';
import { Subscriber, type SipMessage } from '../../testkit/pbx/subscriber';
import { parkSlots } from '../../core/pbx/park-slots';
import { PresenceStore } from '../../core/presence/store';
import { callsRepo } from '../../core/repos/calls';
import { type Stack } from '../xfer/support';
import { call, caller, usePhoneStack } from './support';
import { actors, as, reset, startHarness, type Harness } from '../control-api/resources/support';
import { UA, yealinkCfg } from '../control-api/resources/provisioning-files';

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });
type Text = string | { '#text': string };
interface DialogXml {
  '@id': string;
  '@direction'?: string;
  state: Text;
  remote?: { identity: Text };
}
const text = (v: Text) => (typeof v === 'string' ? v : v['#text']);

function dialogInfo(n: SipMessage): { entity: string; dialogs: DialogXml[] } {
  expect(n.get('content-type')).to.equal('application/dialog-info+xml');
  const di = (xml.parse(n.body) as { 'dialog-info': { '@entity': string; dialog?: DialogXml | DialogXml[] } })['dialog-info'];
  return { entity: di['@entity'], dialogs: di.dialog === undefined ? [] : Array.isArray(di.dialog) ? di.dialog : [di.dialog] };
}
const states = (n: SipMessage) => dialogInfo(n).dialogs.map((d) => text(d.state));

describe('pbx: busy lamp keys on park slots', function () {
  this.timeout(120_000);
  let s: Stack;
  let sub: Subscriber;
  let cid: string;
  const { newPhone } = usePhoneStack((x) => ((s = x), (cid = x.f.customer.id)));
  before(async () => {
    sub = await Subscriber.open(s.p.sipPort);
  });
  after(() => sub?.close());

  const slots = () => parkSlots(s.p.redis, s.p.config.redisKeyPrefix);

  it('a key on 701 subscribed before any park: idle, confirmed while A is parked there, terminated when C retrieves it', async () => {
    const watcher = await createExtension(cid);
    const watch = await sub.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: '701', event: 'dialog', expires: 600 });
    expect(watch.response.status, watch.response.raw).to.be.oneOf([200, 202]);
    const idle = dialogInfo(await watch.waitFor());
    expect(idle.entity).to.equal(`sip:701@${watcher.domain}`);
    expect(idle.dialogs).to.have.length(0);

    const [a, c] = [await newPhone(400), await newPhone(2000)];
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: '700', rtpPort: a.audio.port }));
    const parked = await until(async () => (await slots().list(cid))[0] ?? null, 20_000, 'A parked');
    expect(parked.slot).to.equal(701);
    const lit = await watch.waitFor((n) => states(n).join() === 'confirmed', 10_000);
    const [d] = dialogInfo(lit).dialogs;
    expect(d!['@id']).to.equal(parked.call_id);
    expect(d!['@direction']).to.equal('recipient');
    expect(text(d!.remote!.identity)).to.equal(`sip:${a.extension}@${a.domain}`);

    // C dials the slot: the call leaves it, the key goes dark
    const cPhone = await call(s, c, caller({ user: c.user, domain: c.domain, target: '701', rtpPort: c.audio.port, hangupAfterMs: 2000 }));
    const dark = await watch.waitFor((n) => states(n).join() === 'terminated', 15_000);
    expect(dialogInfo(dark).dialogs[0]!['@id']).to.equal(parked.call_id);
    const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(ra.code, ra.errors).to.equal(0);
    // the next state read (a refresh) shows the slot idle again
    const seen = watch.notifies.length;
    expect((await watch.refresh(600)).status).to.be.oneOf([200, 202]);
    await watch.waitFor((n) => watch.notifies.indexOf(n) >= seen && dialogInfo(n).dialogs.length === 0, 5000);
  });

  it('the parked call hanging up turns the key off; a number outside the slots and not an extension is still 404', async () => {
    const watcher = await createExtension(cid);
    const base = { user: watcher.ext.username, domain: watcher.domain, password: watcher.password, event: 'dialog', expires: 600 };
    expect((await sub.subscribe({ ...base, resource: '799' })).response.status).to.equal(404);
    const watch = await sub.subscribe({ ...base, resource: '701' });
    expect(watch.response.status).to.be.oneOf([200, 202]);
    await watch.waitFor();
    const a = await newPhone(400);
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: '700', rtpPort: a.audio.port, hangupAfterMs: 5000 }));
    await watch.waitFor((n) => states(n).join() === 'confirmed', 20_000);
    await watch.waitFor((n) => states(n).join() === 'terminated', 15_000);
    const ra = await aPhone.done;
    expect(ra.code, ra.errors).to.equal(0);
  });

  it("a slot left lit by a node that died is turned off when the sweep frees it (the API's list)", async () => {
    const watcher = await createExtension(cid);
    const watch = await sub.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: '716', event: 'dialog', expires: 600 });
    expect(watch.response.status).to.be.oneOf([200, 202]);
    await watch.waitFor();
    // the dead node's park: its slot and its lamp, for a call that ended without freeing either
    const row = await callsRepo(s.t.ctx.db).create({
      customer_id: cid,
      source: { type: 'tel', target: '+899100000016' },
      destination: { type: 'sip', target: 'z@127.0.0.1:5999' },
      direction: 'outgoing',
    });
    await callsRepo(s.t.ctx.db).hangup(row.id, 'failure');
    const now = new Date().toISOString();
    expect(await slots().claim(716, 716, { call_id: row.id, customer_id: cid, node_id: 'gone', parker: null, tm_parked: now, tm_timeout: now })).to.include({ slot: 716 });
    await new PresenceStore(s.p.redis, s.p.config.redisKeyPrefix).publishState(cid, '716', [{ id: row.id, state: 'confirmed', direction: 'recipient' }]);
    await watch.waitFor((n) => states(n).join() === 'confirmed', 5000);
    expect((await s.api.get('/parkedcalls')).body.result).to.deep.equal([]);
    const dark = await watch.waitFor((n) => states(n).join() === 'terminated', 5000);
    expect(dialogInfo(dark).dialogs[0]!['@id']).to.equal(row.id);
  });
});

describe('pbx: park slots as blf_keys', function () {
  this.timeout(30_000);
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });
  after(async () => h?.close());

  it("takes a slot of the customer's range beside extensions, refuses one outside it, renders it as a Yealink BLF key", async () => {
    await reset();
    const a = await actors(h);
    const mk = async (extension: string, extra: Record<string, unknown> = {}) =>
      as(h, a.admin)
        .post('/v1.0/extensions')
        .send({ extension, password: 'blf-secret-pass-7', ...extra });
    expect((await mk('2001')).status).to.equal(200);
    const created = await mk('2000', { blf_keys: ['2001', '701', '720'] });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const phone = created.body as { id: string; blf_keys: string[] };
    expect(phone.blf_keys).to.deep.equal(['2001', '701', '720']);

    for (const keys of [['2001', '721'], ['0701'], ['700'], ['701', '701']]) {
      const r = await as(h, a.admin).put(`/v1.0/extensions/${phone.id}`).send({ blf_keys: keys });
      expect(r.status, JSON.stringify(keys)).to.equal(400);
      expect(r.body.error?.status).to.equal('INVALID_ARGUMENT');
      expect(JSON.stringify(r.body)).to.contain('blf_keys');
    }
    expect((await as(h, a.admin).get(`/v1.0/extensions/${phone.id}`)).body.blf_keys).to.deep.equal(['2001', '701', '720']);

    // the customer's own range counts, not the default one
    const put = await as(h, a.admin).put('/v1.0/pbx_settings').send({ park_slot_first: 801, park_slot_last: 810 });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(
      (
        await as(h, a.admin)
          .put(`/v1.0/extensions/${phone.id}`)
          .send({ blf_keys: ['701'] })
      ).status,
    ).to.equal(400);
    const moved = await as(h, a.admin)
      .put(`/v1.0/extensions/${phone.id}`)
      .send({ blf_keys: ['805', '2001'] });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(200);

    const token = (await as(h, a.admin).post(`/v1.0/extensions/${phone.id}/provisioning-token`)).body.token as string;
    const y = yealinkCfg((await request(h.app).get(`/provisioning/extension?token=${token}`).set('User-Agent', UA.yealink)).text);
    expect([2, 3].map((n) => [y.get(`linekey.${n}.type`), y.get(`linekey.${n}.line`), y.get(`linekey.${n}.value`), y.get(`linekey.${n}.label`)])).to.deep.equal([
      ['16', '1', '805', '805'],
      ['16', '1', '2001', '2001'],
    ]);
  });
});
