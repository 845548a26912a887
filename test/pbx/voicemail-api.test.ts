// Issue 37 voicemail REST (an extension of the reference API): /voicemail_boxes CRUD with a write-only,
// hashed PIN, /voicemail_boxes/{id}/messages newest first with the folder filter, /voicemail_messages/{id}
// get, media, move (read/unread) and delete; each count change publishes the MWI notice on Redis; bad
// ids, bad PINs and another customer's box answer in the error envelope.
import { wavHeader } from '../../media-engine/audio/wav';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import type { Redis } from 'ioredis';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { createRedis } from '../../control-api/context';
import { voicemailMessagesRepo } from '../../core/voicemail/messages';
import { mailboxSummary, mwiChannel, parseMwiNotice, type MwiNotice } from '../../core/voicemail/mwi';
import { checkPin } from '../../core/voicemail/boxes';
import { newId } from '../../core/ids';
import { bufferBody } from '../../testkit/buffer-body';

function wav(ms: number): Buffer {
  const n = (8000 * ms) / 1000;
  const data = Buffer.alloc(n * 2);
  return Buffer.concat([wavHeader(data.length), data]);
}

describe('voicemail REST: boxes, messages, MWI notice', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;
  let sub: Redis;
  const notices: MwiNotice[] = [];
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    f = await createFixture(t.ctx);
    sub = createRedis(t.ctx.config.redisUrl);
    await sub.subscribe(mwiChannel(t.ctx.config.redisKeyPrefix));
    sub.on('message', (_ch: string, m: string) => {
      const n = parseMwiNotice(m);
      if (n) notices.push(n);
    });
  });
  after(async () => {
    sub.disconnect();
    await t.close();
  });

  const api = (method: 'get' | 'post' | 'put' | 'delete', p: string, who: Fixture = f) => request(t.app)[method](`/v1.0${p}`).query({ accesskey: who.accesskey });
  let seq = 0;
  const boxNumber = () => `${process.pid % 10000}${++seq}`;

  async function message(boxId: string, at: Date, folder: 'new' | 'old' = 'new'): Promise<string> {
    const id = newId();
    const filename = `vm-${id}.wav`;
    const dir = path.join(t.ctx.config.dataDir, 'recordings');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, filename), wav(500));
    await t.ctx.db('voicemail_messages').insert({ id, customer_id: f.customer.id, box_id: boxId, folder, caller_number: '+15551230000', filename, duration_ms: 500, tm_create: at });
    return id;
  }

  it('creates a box with a hashed, write-only PIN; gets, lists, updates and deletes it', async () => {
    const number = boxNumber();
    const c = await api('post', '/voicemail_boxes').send({ number, pin: '4321', name: 'front desk', email: 'desk@example.test', max_message_sec: 60 });
    expect(c.status, JSON.stringify(c.body)).to.equal(200);
    expect(c.body).to.include({ number, name: 'front desk', extension_id: '', max_message_sec: 60, attach_audio: true });
    expect(c.body).to.not.have.property('pin');
    expect(c.body).to.not.have.property('pin_hash');
    const row = (await t.ctx.db('voicemail_boxes').where({ id: c.body.id }).first())!;
    expect(row.pin_hash).to.match(/^scrypt\$/);
    expect(await checkPin(row, '4321')).to.equal(true);
    expect(await checkPin(row, '1234')).to.equal(false);

    const g = await api('get', `/voicemail_boxes/${c.body.id}`);
    expect(g.body).to.include({ id: c.body.id, new_count: 0, old_count: 0 });
    const l = await api('get', '/voicemail_boxes');
    expect(l.body.result.map((b: { id: string }) => b.id)).to.include(c.body.id);

    const u = await api('put', `/voicemail_boxes/${c.body.id}`).send({ pin: '98765', greeting_text: 'Leave a message' });
    expect(u.status).to.equal(200);
    expect(u.body.greeting_text).to.equal('Leave a message');
    expect(await checkPin((await t.ctx.db('voicemail_boxes').where({ id: c.body.id }).first())!, '98765')).to.equal(true);

    const dup = await api('post', '/voicemail_boxes').send({ number, pin: '1111' });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.reason).to.equal('ALREADY_EXISTS');

    const d = await api('delete', `/voicemail_boxes/${c.body.id}`);
    expect(d.status).to.equal(200);
    expect((await api('get', `/voicemail_boxes/${c.body.id}`)).status).to.equal(404);
  });

  it('belongs a box to an extension of the customer, one box per extension', async () => {
    const ext = await t.ctx
      .db('extensions')
      .insert({ id: newId(), customer_id: f.customer.id, extension: `e${++seq}`, domain_name: 'd', username: `u${newId()}`, password: 'p', direct_hash: newId(), tm_create: new Date() })
      .returning('id');
    const extId = (ext[0] as { id: string }).id;
    const a = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234', extension_id: extId });
    expect(a.status).to.equal(200);
    expect(a.body.extension_id).to.equal(extId);
    const again = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234', extension_id: extId });
    expect(again.status).to.equal(409);
    const other = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234', extension_id: newId() });
    expect(other.status).to.equal(400);
    expect(other.body.error.details[0].field).to.equal('extension_id');
  });

  it('sets mwi_unsolicited on an extension (off by default), refusing what is not a boolean', async () => {
    const c = await api('post', '/extensions').send({ extension: `mwi${++seq}` });
    expect(c.status, JSON.stringify(c.body)).to.equal(200);
    expect(c.body.mwi_unsolicited).to.equal(false);
    const bad = await api('put', `/extensions/${c.body.id}`).send({ mwi_unsolicited: 'yes' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details[0].field).to.equal('mwi_unsolicited');
    const on = await api('put', `/extensions/${c.body.id}`).send({ mwi_unsolicited: true });
    expect(on.status).to.equal(200);
    expect(on.body.mwi_unsolicited).to.equal(true);
    expect((await api('get', `/extensions/${c.body.id}`)).body.mwi_unsolicited).to.equal(true);
  });

  it('uploads and removes greetings; refuses what is not a playable WAV and keeps nothing of it', async () => {
    const b = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234' });
    const dir = path.join(t.ctx.config.dataDir, 'recordings');
    const good = path.join(t.ctx.config.dataDir, `greeting-${process.pid}.wav`);
    fs.mkdirSync(path.dirname(good), { recursive: true });
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', good, 'synth', '1', 'sine', '500', 'vol', '0.5']);
    const filesBefore = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.startsWith(`vmg-${b.body.id}`)).length : 0;
    const notWav = await api('put', `/voicemail_boxes/${b.body.id}/greetings/unavailable`).attach('file', Buffer.from('hello, not audio'), 'greeting.wav');
    expect(notWav.status).to.equal(400);
    expect(notWav.body.error.details[0].field).to.equal('file');
    expect(fs.readdirSync(dir).filter((f) => f.startsWith(`vmg-${b.body.id}`)).length, 'nothing kept').to.equal(filesBefore);
    expect((await api('put', `/voicemail_boxes/${b.body.id}/greetings/holiday`).attach('file', good)).status).to.equal(400);
    const other = await createFixture(t.ctx);
    expect((await api('put', `/voicemail_boxes/${b.body.id}/greetings/busy`, other).attach('file', good)).status).to.equal(404);

    const up = await api('put', `/voicemail_boxes/${b.body.id}/greetings/busy`).attach('file', good);
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    expect(up.body).to.include({ greeting_busy: true, greeting_unavailable: false });
    const first = (await t.ctx.db('voicemail_boxes').where({ id: b.body.id }).first())!.greeting_busy;
    expect(fs.existsSync(path.join(dir, first))).to.equal(true);
    // a new upload replaces the file
    expect((await api('put', `/voicemail_boxes/${b.body.id}/greetings/busy`).attach('file', good)).status).to.equal(200);
    const second = (await t.ctx.db('voicemail_boxes').where({ id: b.body.id }).first())!.greeting_busy;
    expect(second).to.not.equal(first);
    expect(fs.existsSync(path.join(dir, first))).to.equal(false);
    const del = await api('delete', `/voicemail_boxes/${b.body.id}/greetings/busy`);
    expect(del.status).to.equal(200);
    expect(del.body.greeting_busy).to.equal(false);
    expect(fs.existsSync(path.join(dir, second))).to.equal(false);
  });

  it('refuses bad input in the error envelope and loses nothing', async () => {
    for (const pin of ['12', '12345678901', 'abcd', '12 4', 1234]) {
      const r = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin });
      expect(r.status, String(pin)).to.equal(400);
      expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
      expect(r.body.error.details.map((d: { field: string }) => d.field)).to.include('pin');
    }
    expect((await api('post', '/voicemail_boxes').send({ number: '12a', pin: '1234' })).status).to.equal(400);
    expect((await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234', max_message_sec: 1 })).status).to.equal(400);
    expect((await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234', bogus: 1 })).status).to.equal(400);
    const b = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234' });
    expect((await api('put', `/voicemail_boxes/${b.body.id}`).send({ pin: '1' })).status).to.equal(400);
    const row = (await t.ctx.db('voicemail_boxes').where({ id: b.body.id }).first())!;
    expect(await checkPin(row, '1234')).to.equal(true);
    expect((await api('get', '/voicemail_boxes/not-a-uuid')).status).to.equal(400);
    expect((await api('get', `/voicemail_boxes/${newId()}`)).status).to.equal(404);
    expect((await api('get', '/voicemail_messages/not-a-uuid')).status).to.equal(400);
    expect((await api('get', `/voicemail_messages/${newId()}`)).status).to.equal(404);
    expect((await api('get', `/voicemail_boxes/${b.body.id}/messages`).query({ folder: 'trash' })).status).to.equal(400);
  });

  it("another customer's box and messages are 404", async () => {
    const b = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234' });
    const m = await message(b.body.id, new Date());
    const other = await createFixture(t.ctx);
    expect((await api('get', `/voicemail_boxes/${b.body.id}`, other)).status).to.equal(404);
    expect((await api('get', `/voicemail_boxes/${b.body.id}/messages`, other)).status).to.equal(404);
    expect((await api('put', `/voicemail_boxes/${b.body.id}`, other).send({ name: 'x' })).status).to.equal(404);
    expect((await api('delete', `/voicemail_boxes/${b.body.id}`, other)).status).to.equal(404);
    expect((await api('get', `/voicemail_messages/${m}`, other)).status).to.equal(404);
    expect((await api('get', `/voicemail_messages/${m}/media`, other)).status).to.equal(404);
    expect((await api('put', `/voicemail_messages/${m}`, other).send({ folder: 'old' })).status).to.equal(404);
    expect((await api('delete', `/voicemail_messages/${m}`, other)).status).to.equal(404);
    expect((await api('get', `/voicemail_messages/${m}`)).status).to.equal(200);
  });

  it('lists messages newest first with pages and the folder filter; media, move and delete change the counts and publish MWI', async () => {
    const b = await api('post', '/voicemail_boxes').send({ number: boxNumber(), pin: '1234' });
    const base = Date.now() - 60_000;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await message(b.body.id, new Date(base + i * 1000), i < 3 ? 'new' : 'old'));
    const p1 = await api('get', `/voicemail_boxes/${b.body.id}/messages`).query({ page_size: '2' });
    expect(p1.body.result.map((m: { id: string }) => m.id)).to.deep.equal([ids[4], ids[3]]);
    const p2 = await api('get', `/voicemail_boxes/${b.body.id}/messages`).query({ page_size: '2', page_token: p1.body.next_page_token });
    expect(p2.body.result.map((m: { id: string }) => m.id)).to.deep.equal([ids[2], ids[1]]);
    const onlyNew = await api('get', `/voicemail_boxes/${b.body.id}/messages`).query({ folder: 'new' });
    expect(onlyNew.body.result.map((m: { id: string }) => m.id)).to.deep.equal([ids[2], ids[1], ids[0]]);
    expect(await mailboxSummary(t.ctx.db, b.body.id)).to.deep.equal({ newCount: 3, oldCount: 2, urgentNew: 0, urgentOld: 0 });

    const media = await api('get', `/voicemail_messages/${ids[0]}/media`).buffer(true).parse(bufferBody);
    expect(media.status).to.equal(200);
    expect(media.headers['content-type']).to.match(/audio\/wav/);
    expect((media.body as Buffer).subarray(0, 4).toString()).to.equal('RIFF');

    notices.length = 0;
    const read = await api('put', `/voicemail_messages/${ids[0]}`).send({ folder: 'old' });
    expect(read.status).to.equal(200);
    expect(read.body.folder).to.equal('old');
    expect((await api('put', `/voicemail_messages/${ids[0]}`).send({ folder: 'trash' })).status).to.equal(400);
    const del = await api('delete', `/voicemail_messages/${ids[1]}`);
    expect(del.status).to.equal(200);
    expect((await api('get', `/voicemail_messages/${ids[1]}`)).status).to.equal(404);
    expect(fs.existsSync(path.join(t.ctx.config.dataDir, 'recordings', `vm-${ids[1]}.wav`))).to.equal(false);
    const g = await api('get', `/voicemail_boxes/${b.body.id}`);
    expect(g.body).to.include({ new_count: 1, old_count: 3 });
    const deadline = Date.now() + 2000;
    while (notices.filter((n) => n.box_id === b.body.id).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const mine = notices.filter((n) => n.box_id === b.body.id);
    expect(mine.map((n) => n.summary)).to.deep.equal([
      { newCount: 2, oldCount: 3, urgentNew: 0, urgentOld: 0 },
      { newCount: 1, oldCount: 3, urgentNew: 0, urgentOld: 0 },
    ]);
    expect(mine[0]!.customer_id).to.equal(f.customer.id);
    // moving to the folder it is in changes nothing and publishes nothing
    notices.length = 0;
    expect((await api('put', `/voicemail_messages/${ids[0]}`).send({ folder: 'old' })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(notices.filter((n) => n.box_id === b.body.id)).to.deep.equal([]);
    expect(await voicemailMessagesRepo(t.ctx.db).count(b.body.id)).to.equal(4);
  });
});
