// Recordings on S3, from a real call: sipp calls a number whose flow records the caller (sipp plays
// its G.711 pcap). The finished file is offloaded by media-app to the loopback S3 server (every
// request SigV4-verified), leaves local disk, downloads through the playfile's signed uri_download
// (control-api streams it from S3), and is deleted from S3 with the recording. With S3 down the
// recording stays on local disk, is served from there, and is offloaded once S3 is back; a wrong
// secret answers 503 in the envelope and deletes nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { configureStorage, storageBackend } from '../../core/storage/backend';
import { RECORDING_PREFIX } from '../../core/storage/recording-files';
import type { S3Settings } from '../../core/storage/s3';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { sippMediaPort } from '../../testkit/ports';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { killAllSipp, RtpSink, sipp, sleep, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { bufferBody } from '../../testkit/buffer-body';

const SIPP_DIR = '/usr/share/sip-tester';

describe('recordings of real calls on S3', function () {
  this.timeout(120_000);
  let s3: S3TestServer;
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let dataDir: string;
  let number: string;
  let settings: S3Settings;

  before(async function () {
    this.timeout(120_000);
    s3 = await startS3Server();
    settings = s3.settings();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-rec-'));
    // one host: media-app and control-api share DATA_DIR (the not-yet-offloaded files), as in a single-node install
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', DATA_DIR: dataDir });
    configureStorage(p.config, settings);
    t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', DATA_DIR: dataDir } });
    configureStorage(t.ctx.config, settings);
    f = await createFixture(t.ctx);
    const cid = f.customer.id;
    await trunksRepo(t.ctx.db).create(cid, `s3${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(t.ctx.db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'recording_start', option: { duration: 2 } }, { type: 'sleep', option: { duration: 2500 } }, { type: 'hangup' }]),
    } as never);
    number = `+8991000007${String(Date.now()).slice(-2)}`;
    await numbersRepo(t.ctx.db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  });
  after(async () => {
    killAllSipp();
    if (dataDir) configureStorage({ dataDir }, null);
    await t?.close();
    await p?.close();
    await s3?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = (method: 'get' | 'delete', p_: string) => request(t.app)[method](`/v1.0${p_}`).query({ accesskey: f.accesskey });
  const binary = (r: request.Test) => r.buffer(true).parse(bufferBody);
  const local = (filename: string) => path.join(dataDir, 'recordings', filename);

  /** One call that records the caller; its recording row once ended. */
  async function recordedCall(): Promise<{ id: string; filename: string }> {
    const earlier = new Set((await t.ctx.db('calls').where({ customer_id: f.customer.id }).select('id')).map((c: { id: string }) => c.id));
    const sink = await RtpSink.open();
    try {
      const steps = `<nop><action><exec play_pcap_audio="${SIPP_DIR}/g711a.pcap"/></action></nop>`;
      const scenario = uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', sink.port, { steps })
        .replace('RTP/AVP 0 101', 'RTP/AVP 8 101')
        .replace('a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000');
      const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const call = await until(async () => (await t.ctx.db('calls').where({ customer_id: f.customer.id, status: 'hangup' })).find((c: { id: string }) => !earlier.has(c.id)), 10_000, 'hangup');
    const rec = await until(async () => (await t.ctx.db('recordings').where({ reference_id: call.id, status: 'ended' }))[0], 10_000, 'recording ended');
    return { id: rec.id as string, filename: (rec.filenames as string[])[0]! };
  }

  async function playfile(id: string) {
    const r = await api('get', `/recordings/${id}/playfiles`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body[0] as { uri_download: string; filesize: number; duration: number; peaks: number[] };
  }

  it('lands in S3, leaves local disk, downloads through uri_download, is deleted from S3 with the recording', async () => {
    const { id, filename } = await recordedCall();
    const key = RECORDING_PREFIX + filename;
    await until(() => s3.objects.has(key) && !fs.existsSync(local(filename)), 10_000, 'offloaded to S3');
    const obj = s3.objects.get(key)!;
    expect(obj.body.subarray(0, 4).toString()).to.equal('RIFF');
    expect(obj.contentType).to.equal('audio/wav');

    const pf = await playfile(id);
    expect(pf.filesize).to.equal(obj.body.length);
    expect(pf.duration).to.be.within(1, 3);
    expect(pf.peaks.length).to.be.greaterThan(10);
    expect(Math.max(...pf.peaks), 'the caller was recorded, not silence').to.be.greaterThan(0.01);
    const u = new URL(pf.uri_download);
    const dl = await binary(request(t.app).get(u.pathname + u.search));
    expect(dl.status).to.equal(200);
    expect((dl.body as Buffer).equals(obj.body), 'the bytes in S3').to.equal(true);

    // readers that need a file (transcription, summaries) get a temporary local copy
    const copy = (await storageBackend(t.ctx.config).recordings.localCopy(filename))!;
    expect(fs.readFileSync(copy.path).equals(obj.body)).to.equal(true);
    await copy.release();
    expect(fs.existsSync(copy.path)).to.equal(false);

    expect((await api('delete', `/recordings/${id}`)).status).to.equal(200);
    expect(s3.objects.has(key), 'deleted from S3').to.equal(false);
    expect(await storageBackend(t.ctx.config).recordings.localCopy(filename)).to.equal(null);
    expect(s3.log).to.include(`DELETE ${key} 204`);
    expect((await api('get', `/recordings/${id}`)).status).to.equal(404);
  });

  /** A playfile URL signed while storage works (signing needs no object storage). */
  async function playfileUrlWithoutStorage(id: string) {
    const cur = configureStorage(t.ctx.config, settings);
    try {
      return await playfile(id);
    } finally {
      configureStorage(t.ctx.config, { ...settings, secretAccessKey: cur.s3 ? 'wrong-secret' : '' });
    }
  }

  it('S3 down: the recording stays on local disk and downloads; offloaded when S3 is back; a wrong secret is a 503', async () => {
    await s3.pause();
    let rec: { id: string; filename: string };
    try {
      rec = await recordedCall();
      await sleep(2500); // a few offload sweeps fail meanwhile
      expect(fs.existsSync(local(rec.filename)), 'kept on local disk').to.equal(true);
      const row = await t.ctx.db('recordings').where({ id: rec.id }).first();
      expect(row!.status).to.equal('ended');
      const pf = await playfile(rec.id);
      expect(pf.filesize).to.be.greaterThan(1000);
      const u = new URL(pf.uri_download);
      const dl = await binary(request(t.app).get(u.pathname + u.search));
      expect(dl.status).to.equal(200);
      expect((dl.body as Buffer).equals(fs.readFileSync(local(rec.filename)))).to.equal(true);
    } finally {
      await s3.resume();
    }
    const key = RECORDING_PREFIX + rec.filename;
    // the offload backs off while S3 is down (at most 30 s; here a few seconds)
    await until(() => s3.objects.has(key) && !fs.existsSync(local(rec.filename)), 40_000, 'offloaded after S3 came back');

    // control-api with a wrong secret: the server refuses, the API says so, nothing is deleted
    configureStorage(t.ctx.config, { ...settings, secretAccessKey: 'wrong-secret' });
    try {
      const pf = await api('get', `/recordings/${rec.id}/playfiles`);
      expect(pf.status).to.equal(503);
      expect(pf.body.error).to.include({ reason: 'SERVICE_UNAVAILABLE' });
      // playfiles asks HeadObject, whose refusals carry no body: S3 says only 403 AccessDenied
      expect(pf.body.error.details).to.deep.equal([{ storage_error: 'AccessDenied' }]);
      const signed = (await playfileUrlWithoutStorage(rec.id)).uri_download;
      const u = new URL(signed);
      const dl = await request(t.app).get(u.pathname + u.search);
      expect(dl.status).to.equal(503);
      expect(dl.body.error.reason).to.equal('SERVICE_UNAVAILABLE');
      expect(dl.body.error.message).to.contain('SignatureDoesNotMatch');
      const del = await api('delete', `/recordings/${rec.id}`);
      expect(del.status).to.equal(503);
      expect((await api('get', `/recordings/${rec.id}`)).status, 'the recording survives').to.equal(200);
      expect(s3.objects.has(key)).to.equal(true);
    } finally {
      configureStorage(t.ctx.config, settings);
    }
    const ok = await playfile(rec.id);
    expect(ok.filesize).to.equal(s3.objects.get(key)!.body.length);
    expect((await api('delete', `/recordings/${rec.id}`)).status).to.equal(200);
    expect(s3.objects.has(key)).to.equal(false);
  });
});
