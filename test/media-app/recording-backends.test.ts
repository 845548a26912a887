// recording_start .. recording_stop on both media backends ('embedded' and 'fsmrf', where the switch's
// `record` app writes the platform's file): sipp (a trunk) calls a number whose flow records about
// 1.5 s between the two actions; the row ends, GET /v1.0/recordings lists it, and the file is as long
// as what was recorded.
import { expect } from 'chai';
import path from 'node:path';
import request from 'supertest';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { buildTestApp } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { readWav } from '../../testkit/media-engine/support';
import { loopbackTrunk } from '../../testkit/trunks';
import { sippMediaPort } from '../../testkit/ports';
import { killAllSipp, RtpSink, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';

const BACKENDS = [
  { backend: 'embedded', number: '+8991000037' },
  { backend: 'fsmrf', number: '+8991000047' },
] as const;

for (const { backend, number } of BACKENDS)
  describe(`media-app recording_start .. recording_stop on the ${backend} media backend`, function () {
    this.timeout(60_000);
    let p: Platform;

    before(async () => {
      p = await startPlatform({}, { mediaServer: backend });
    });
    after(async () => {
      killAllSipp();
      await p?.close();
    });

    it('the recording ends at recording_stop; the API lists it with its duration', async () => {
      const db = await testDb();
      const cid = (await repos(db).customers.create({ email: `recb${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'recb' })).id;
      const trunk = await loopbackTrunk(db, cid, `recb${Date.now()}${Math.floor(Math.random() * 1000)}`);
      const flow = await flowsRepo(db).create({
        customer_id: cid,
        actions: parseActions([
          { type: 'answer' },
          { type: 'recording_start', option: {} },
          { type: 'sleep', option: { duration: 1500 } },
          { type: 'recording_stop' },
          { type: 'sleep', option: { duration: 500 } },
          { type: 'hangup' },
        ]),
      } as never);
      await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
      const sink = await RtpSink.open();
      const api = await buildTestApp();
      try {
        const r = await sipp(
          uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'trunk', sink.port),
          [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
          {
            killAfterMs: 40_000,
          },
        ).done;
        expect(r.code, r.errors + r.messages.slice(-4000)).to.equal(0);
        const rec = await until(async () => (await db('recordings').where({ customer_id: cid, status: 'ended' }))[0] as { id: string; filenames: string[] } | undefined, 10_000, 'recording ended');
        const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'recb' });
        const list = await request(api.app).get('/v1.0/recordings').query({ accesskey: token });
        expect(list.status).to.equal(200);
        expect(list.body.result.map((x: { id: string }) => x.id)).to.include(rec.id);
        // recorded from recording_start to recording_stop: the sleep between them
        const wav = readWav(path.join(p.config.dataDir, 'recordings', rec.filenames[0]!));
        expect(wav.samples.length / wav.rate).to.be.within(1.2, 2.2);
      } finally {
        sink.close();
        await api.close();
        await trunksRepo(db).softDelete(trunk.id);
      }
    });
  });
