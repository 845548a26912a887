import fs from 'node:fs';
import { wavHeader } from '../../../media-engine/audio/wav';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, buildTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { newId } from '../../../core/ids';
import { clock } from '../../../core/clock';
import { insertRecording } from '../../../testkit/recordings';
import { bufferBody } from '../../../testkit/buffer-body';

/** A 1 s 8 kHz 16-bit mono WAV: a 440 Hz tone at half scale, then silence. */
function wavBytes(): Buffer {
  const n = 8000;
  const data = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) data.writeInt16LE(i < n / 2 ? Math.round(16384 * Math.sin((2 * Math.PI * 440 * i) / 8000)) : 0, i * 2);
  return Buffer.concat([wavHeader(data.length), data]);
}

describe('recordings and signed downloads', function () {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));

  async function recording(customerId: string): Promise<{ id: string; filename: string; bytes: Buffer }> {
    const id = newId();
    const filename = `${id}_in.wav`;
    const bytes = wavBytes();
    const dir = path.join(t.ctx.config.dataDir, 'recordings');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, filename), bytes);
    await insertRecording(t.ctx.db, customerId, id, filename, { tm_start: new Date(Date.now() - 1000), tm_end: new Date() });
    return { id, filename, bytes };
  }

  const api = (method: 'get' | 'delete', p: string, who: Fixture = f) => request(t.app)[method](`/v1.0${p}`).query({ accesskey: who.accesskey });

  it('lists and gets recordings; another customer gets 404', async () => {
    const r = await recording(f.customer.id);
    const list = await api('get', '/recordings');
    expect(list.status).to.equal(200);
    expect(list.body.result.map((x: { id: string }) => x.id)).to.include(r.id);
    const one = await api('get', `/recordings/${r.id}`);
    expect(one.body).to.include({ id: r.id, status: 'ended', format: 'wav' });
    const other = await createFixture(t.ctx);
    expect((await api('get', `/recordings/${r.id}`, other)).status).to.equal(404);
    expect((await api('get', '/recordings/not-a-uuid')).status).to.equal(400);
  });

  it('playfiles give a signed URL that downloads before expiry and not after', async () => {
    const r = await recording(f.customer.id);
    const res = await api('get', `/recordings/${r.id}/playfiles`);
    expect(res.status).to.equal(200);
    const [pf] = res.body as { filename: string; direction: string; uri_download: string; tm_download_expire: string; filesize: number; duration: number; peaks: number[] }[];
    expect(pf!.filename).to.equal(r.filename);
    expect(pf!.direction).to.equal('in');
    expect(pf!.filesize).to.equal(r.bytes.length);
    expect(pf!.duration).to.be.closeTo(1, 0.001);
    expect(pf!.peaks.length).to.equal(100);
    expect(Math.max(...pf!.peaks)).to.be.closeTo(0.5, 0.01);
    expect(pf!.peaks[99]).to.equal(0);
    // Idempotent: the same URL again.
    expect((await api('get', `/recordings/${r.id}/playfiles`)).body[0].uri_download).to.equal(pf!.uri_download);

    const u = new URL(pf!.uri_download);
    const dl = await request(t.app)
      .get(u.pathname + u.search)
      .buffer(true)
      .parse(bufferBody);
    expect(dl.status).to.equal(200);
    expect(dl.headers['content-type']).to.equal('audio/wav');
    expect(Buffer.compare(dl.body as Buffer, r.bytes)).to.equal(0);

    // A tampered signature or another file name is refused.
    const tampered = u.search.replace(/signature=[^&]+/, 'signature=AAAA');
    expect((await request(t.app).get(u.pathname + tampered)).status).to.equal(403);
    expect((await request(t.app).get(`/v1.0/recordingfiles/${newId()}${u.search}`)).status).to.equal(403);
    expect((await request(t.app).get(u.pathname)).status).to.equal(400);

    clock.setNow(Date.now() + 2 * 3600 * 1000);
    try {
      const late = await request(t.app).get(u.pathname + u.search);
      expect(late.status).to.equal(403);
      expect(late.body.error.message).to.match(/expired/);
    } finally {
      clock.reset();
    }
  });

  it('a signed download answers Range requests, so a player can seek: 206, 416, Accept-Ranges', async () => {
    const r = await recording(f.customer.id);
    const u = new URL(((await api('get', `/recordings/${r.id}/playfiles`)).body as { uri_download: string }[])[0]!.uri_download);
    const get = (range?: string) => {
      const q = request(t.app).get(u.pathname + u.search);
      return (range ? q.set('Range', range) : q).buffer(true).parse(bufferBody);
    };
    const whole = await get();
    expect(whole.status).to.equal(200);
    expect(whole.headers['accept-ranges']).to.equal('bytes');
    const part = await get('bytes=44-1043');
    expect(part.status).to.equal(206);
    expect(part.headers['content-range']).to.equal(`bytes 44-1043/${r.bytes.length}`);
    expect(part.headers['content-length']).to.equal('1000');
    expect(Buffer.compare(part.body as Buffer, r.bytes.subarray(44, 1044))).to.equal(0);
    const past = await request(t.app)
      .get(u.pathname + u.search)
      .set('Range', `bytes=${r.bytes.length}-`);
    expect(past.status).to.equal(416);
    expect(past.headers['content-range']).to.equal(`bytes */${r.bytes.length}`);
    expect(past.body.error).to.include({ reason: 'RANGE_NOT_SATISFIABLE' });
  });

  it('delete removes the recording and its file', async () => {
    const r = await recording(f.customer.id);
    expect((await api('delete', `/recordings/${r.id}`)).status).to.equal(200);
    expect((await api('get', `/recordings/${r.id}`)).status).to.equal(404);
    expect(fs.existsSync(path.join(t.ctx.config.dataDir, 'recordings', r.filename))).to.equal(false);
    expect((await api('delete', `/recordings/${r.id}`)).status).to.equal(404);
  });

  it('answers 503 SIGNING_NOT_CONFIGURED when signing is off', async () => {
    const saved = process.env.STORAGE_SIGNING_KEY;
    process.env.STORAGE_SIGNING_KEY = 'none';
    const t2 = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', DATA_DIR: path.join(t.ctx.config.dataDir, 'nosign') } });
    try {
      const g = await createFixture(t2.ctx);
      const r = await recording(g.customer.id);
      const res = await request(t2.app).get(`/v1.0/recordings/${r.id}/playfiles`).query({ accesskey: g.accesskey });
      expect(res.status).to.equal(503);
      expect(res.body.error.reason).to.equal('SIGNING_NOT_CONFIGURED');
      const dl = await request(t2.app).get(`/v1.0/recordingfiles/${r.id}?expires=1&signature=x`);
      expect(dl.status).to.equal(503);
    } finally {
      if (saved === undefined) delete process.env.STORAGE_SIGNING_KEY;
      else process.env.STORAGE_SIGNING_KEY = saved;
      await t2.close();
    }
  });
});
