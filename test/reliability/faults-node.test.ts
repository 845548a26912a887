// Issue 13 item 4, first fault: kill -9 of a media-app node with calls up (bounded form: 20 calls;
// `scripts/soak/faults.ts --calls 50` is the long form). sip-server ends the dead application's calls
// (BYE to every caller), the node sweeper finalises the records, fails the commands queued to the
// node, ends the recordings (valid WAV up to the crash) and the OS frees the RTP ports.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { Redis } from 'ioredis';
import { eventStreamKey, EventPublisher } from '../../core/events/bus';
import { NodeSweeper, repairWav } from '../../core/calls/node-sweep';
import { MEDIA_NODES_KEY, nodeCallsKey } from '../../core/calls/node-keys';
import { nodeAliveKey, nodeQueueName } from '../../core/commands/contracts';
import { CommandBus } from '../../core/commands/bus';
import { callsRepo } from '../../core/repos/calls';
import { repos } from '../../core/repos';
import { readWavInfo, wavHeader } from '../../media-engine/audio/wav';
import { testDb, testDatabaseUrl } from '../../testkit/db';
import { killAllSipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { runNodeFault } from '../../testkit/reliability/node-fault';

describe('reliability: kill -9 of media-app with calls up', function () {
  this.timeout(150_000);
  after(() => killAllSipp());

  it('ends 20 calls within 5 s, finalises their records, keeps the recordings valid, frees the ports, fails queued commands once', async () => {
    const r = await runNodeFault({ db: await testDb(), databaseUrl: await testDatabaseUrl(), redisUrl: process.env.TEST_REDIS_URL!, calls: 20 });
    // every caller got a BYE (sipp exits 0 only when each call received its BYE), soon after the kill
    expect(
      r.byeAll,
      r.sippResults
        .map((s) => s.errors)
        .join('\n')
        .slice(0, 2000),
    ).to.equal(true);
    expect(r.byeMs, 'BYE after the kill').to.be.below(5000);
    expect(r.sipDialogsLeft).to.equal(0);
    // records: every call hung up by the platform, one call_hangup each
    expect(r.rows).to.have.length(20);
    for (const row of r.rows) {
      expect(row, row.id).to.include({ status: 'hangup', hangup_by: 'local', hangup_reason: 'normal' });
      expect(r.hangupEvents.get(row.id), `call_hangup events of ${row.id}`).to.equal(1);
    }
    expect(r.reports.find((x) => x.calls.length)?.calls).to.have.length(20);
    // recordings: ended, the header agrees with the file, sox reads them, more than a second of audio
    expect(r.recordings).to.have.length(10);
    for (const rec of r.recordings) {
      expect(rec.status).to.equal('ended');
      expect(rec.declaredBytes, rec.file).to.equal(rec.fileBytes - 44);
      expect(rec.durationMs).to.be.above(1000);
      expect(Math.abs(rec.soxSeconds * 1000 - rec.durationMs)).to.be.below(50);
    }
    // the node's RTP ports: held before (the check can fail), all bindable after
    expect(r.rtpPorts).to.be.at.least(20);
    expect(r.rtpPortsFreed).to.equal(r.rtpPorts);
    // commands queued to the dead node: each failed once, with the reason, none applied
    expect(r.commands).to.have.length(8);
    for (const c of r.commands) {
      expect(c.state, `${c.type} ${c.id}`).to.equal('failed');
      expect(c.reason).to.match(/is gone/);
    }
    expect(r.rows.filter((x) => x.mute_direction === 'in')).to.have.length(0); // the queued mutes never ran
    expect(r.appliedBefore).to.deep.equal({ state: 'completed', attempts: 1, mute: 'both' });
  });

  it('never sweeps a live node, and sweeps a dead one once', async () => {
    const db = await testDb();
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    const prefix = `tns${process.pid}_${randomBytes(3).toString('hex')}:`;
    const sweeper = new NodeSweeper({ db, redis, keyPrefix: prefix, events: new EventPublisher(redis, eventStreamKey(prefix)), logger: pino({ level: 'silent' }) });
    try {
      await redis.sadd(prefix + MEDIA_NODES_KEY, 'alive-node', 'dead-node');
      await redis.set(prefix + nodeAliveKey('alive-node'), '1', 'PX', 10_000);
      await redis.sadd(prefix + nodeCallsKey('alive-node'), '00000000-0000-0000-0000-00000000000a');
      await redis.sadd(prefix + nodeCallsKey('dead-node'), '00000000-0000-0000-0000-00000000000b'); // no such row: nothing to write
      const first = await sweeper.tick();
      expect(first.map((x) => x.nodeId)).to.deep.equal(['dead-node']);
      expect(first[0]!.calls).to.deep.equal([]);
      expect(await redis.smembers(prefix + MEDIA_NODES_KEY)).to.deep.equal(['alive-node']);
      expect(await redis.scard(prefix + nodeCallsKey('alive-node'))).to.equal(1);
      expect(await sweeper.tick()).to.deep.equal([]);
    } finally {
      await redis.del(prefix + MEDIA_NODES_KEY, prefix + nodeAliveKey('alive-node'), prefix + nodeCallsKey('alive-node'));
      redis.disconnect();
    }
  });

  it('a node restarted under the same id finalises what its previous run left, before taking commands', async () => {
    const db = await testDb();
    const nodeId = `again-${process.pid}-${randomBytes(2).toString('hex')}`;
    const prefix = `tnr${process.pid}_${randomBytes(3).toString('hex')}:`;
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    const bus = new CommandBus({ redis, keyPrefix: prefix });
    let p: Platform | null = null;
    try {
      const cid = (await repos(db).customers.create({ email: `nr${Date.now()}@example.test`, status: 'active', name: 'nr' })).id;
      const left = await callsRepo(db).create({
        customer_id: cid,
        source: { type: 'tel', target: '+15550100' },
        destination: { type: 'tel', target: '+15550101' },
        direction: 'incoming',
        status: 'progressing',
        node_id: nodeId,
      } as never);
      const other = await callsRepo(db).create({
        customer_id: cid,
        source: { type: 'tel', target: '+15550100' },
        destination: { type: 'tel', target: '+15550101' },
        direction: 'incoming',
        status: 'progressing',
        node_id: `${nodeId}-other`,
      } as never);
      await redis.sadd(prefix + nodeCallsKey(nodeId), left.id);
      const cmd = await bus.toNode(nodeId, { type: 'call.hangup', callId: left.id });
      p = await startPlatform({ MEDIA_APP_NODE_ID: nodeId, REDIS_KEY_PREFIX: prefix });
      expect(await callsRepo(db).get(left.id)).to.include({ status: 'hangup', hangup_by: 'local', hangup_reason: 'normal' });
      expect((await callsRepo(db).get(other.id))!.status, "another node's call").to.equal('progressing');
      const job = await bus.queue(nodeQueueName(nodeId)).getJob(cmd.commandId);
      expect(await job!.getState()).to.equal('failed');
      expect(await redis.scard(prefix + nodeCallsKey(nodeId))).to.equal(0);
    } finally {
      await p?.close();
      await bus.close();
      redis.disconnect();
    }
  });

  it('repairs a WAV cut between its audio and its header update, and leaves other files alone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wav-repair-'));
    try {
      const wav = path.join(dir, 'cut.wav');
      // header says 1,000 bytes, 1,601 follow (an odd byte of a half-written sample)
      fs.writeFileSync(wav, Buffer.concat([wavHeader(1000), Buffer.alloc(1601, 7)]));
      expect(repairWav(wav)).to.equal(true);
      expect(fs.statSync(wav).size).to.equal(44 + 1600);
      expect(readWavInfo(wav).dataBytes).to.equal(1600);
      expect(fs.readFileSync(wav).readUInt32LE(4)).to.equal(36 + 1600);
      const text = path.join(dir, 'notes.wav');
      fs.writeFileSync(text, 'not a wav at all');
      expect(repairWav(text)).to.equal(false);
      expect(fs.readFileSync(text, 'utf8')).to.equal('not a wav at all');
      expect(repairWav(path.join(dir, 'missing.wav'))).to.equal(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
