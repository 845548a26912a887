/**
 * Real-time scheduling with a watchdog for media workers (issue 25, MediaServerOptions.workerRealtime):
 * the worker thread, and only it, runs SCHED_RR; above its CPU limit it is dropped back to ordinary
 * scheduling, and after the cool-down, once idle, it is put back. A priority chrt refuses leaves the
 * thread as it was and says why. Read from /proc/<pid>/task/<tid>/stat (policy: 0 other, 2 RR).
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MediaServer, type Endpoint, type ScheduleChange } from '../../media-engine';
import { procStat } from '../../media-engine/worker/proc-stat';
import { portRange, tmpDir } from '../../testkit/media-engine/support';

const SCHED_OTHER = 0;
const SCHED_RR = 2;

function waitFor(ms: MediaServer, reason: ScheduleChange['reason'], timeoutMs: number): Promise<ScheduleChange> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no '${reason}' change within ${timeoutMs} ms`)), timeoutMs);
    ms.on('workerSchedule', function on(c) {
      if (c.reason !== reason) return;
      clearTimeout(t);
      ms.off('workerSchedule', on);
      resolve(c);
    });
  });
}

describe('media-engine: real-time worker scheduling with a watchdog (workerRealtime)', function () {
  this.timeout(60_000);

  it('puts the worker thread, and only it, on SCHED_RR at the priority given', async () => {
    const ms = await MediaServer.start({ workers: 1, rtpPorts: portRange(), workerRealtime: { priority: 3 } });
    try {
      const [w] = ms.schedules;
      expect(w!.policy).to.equal('rr');
      const s = procStat(process.pid, w!.tid);
      expect(s.policy, 'the worker thread').to.equal(SCHED_RR);
      expect(s.rtPriority).to.equal(3);
      expect(procStat(process.pid, process.pid).policy, 'the API thread').to.equal(SCHED_OTHER);
    } finally {
      await ms.destroy();
    }
  });

  it('drops a worker over its CPU limit back to ordinary scheduling, and puts it back once it has cooled down', async () => {
    const dir = tmpDir();
    const tone = path.join(dir, 'tone.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', tone, 'synth', '30', 'sine', '440']);
    const sink = dgram.createSocket('udp4');
    await new Promise<void>((r) => sink.bind(0, '127.0.0.1', () => r()));
    const sinkPort = sink.address().port;
    // a limit an idle worker stays well under (its clock alone costs 0-5 % of a core here) and 600 playing
    // legs go over (300 cost 11-13 % at a fast moment of the host: under it, no overrun, the CI failed)
    const ms = await MediaServer.start({ workers: 1, rtpPorts: portRange(1300), workerRealtime: { priority: 2, maxCpuShare: 0.15, windowMs: 1000, overrunWindows: 2, cooldownMs: 1500 } });
    const eps: Endpoint[] = [];
    try {
      const tid = ms.schedules[0]!.tid;
      expect(procStat(process.pid, tid).policy).to.equal(SCHED_RR);
      const dropped = waitFor(ms, 'overrun', 20_000);
      const sdp = `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${sinkPort} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;
      for (let i = 0; i < 600; i++) eps.push(await ms.createEndpoint({ remoteSdp: sdp, inbandDtmf: false }));
      for (const ep of eps) ep.play(tone).catch(() => {});
      const c = await dropped;
      expect(c.policy).to.equal('other');
      expect(c.cpuShare).to.be.greaterThan(0.15);
      expect(procStat(process.pid, tid).policy, 'dropped back').to.equal(SCHED_OTHER);
      expect(ms.schedules[0]!.policy).to.equal('other');
      // idle again: back on real time after the cool-down
      const back = waitFor(ms, 'cooled', 20_000);
      await Promise.all(eps.splice(0).map((ep) => ep.destroy()));
      expect((await back).policy).to.equal('rr');
      expect(procStat(process.pid, tid).policy).to.equal(SCHED_RR);
    } finally {
      await Promise.all(eps.map((ep) => ep.destroy()));
      await ms.destroy();
      sink.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a priority the kernel refuses leaves the worker as it was and says why', async () => {
    const ms = await MediaServer.start({ workers: 1, rtpPorts: portRange(), workerRealtime: { priority: 100 } });
    try {
      const [w] = ms.schedules;
      expect(w!.policy).to.equal('other');
      expect(w!.refused).to.be.a('string').and.not.equal('');
      expect(procStat(process.pid, w!.tid).policy).to.equal(SCHED_OTHER);
    } finally {
      await ms.destroy();
    }
  });
});
