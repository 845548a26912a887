// The SIP capture's bounds and cost, on the real test Redis: messages kept per Call-ID are capped,
// each stream expires after the retention, SIP_CAPTURE=off captures nothing, REGISTER/OPTIONS are
// not captured, bad settings are refused by name; and the per-message cost on the stack's hot path
// (what SipStack pays per message) is measured. The pcap writer's TCP and IPv6 forms are read by tcpdump.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { parseMessage, type SourceInfo } from '../../sip-server/message';
import { SipCapture, startCapture } from '../../sip-server/capture';
import { loadConfig } from '../../core/config';
import { testEnv } from '../../testkit/api';
import { captureKey, captureSettings, readCaptured, type CapturedMessage } from '../../core/sip/capture-store';
import { buildPcap } from '../../control-api/timelines/pcap';

const src: SourceInfo = { transport: 'udp', address: '127.0.0.1', port: 5070, localAddress: '127.0.0.1', localPort: 5060 };

function invite(callId: string, method = 'INVITE', cseq = 1): Buffer {
  return Buffer.from(
    [
      `${method} sip:bob@127.0.0.1 SIP/2.0`,
      'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-' + randomBytes(4).toString('hex'),
      'From: <sip:a@127.0.0.1>;tag=1',
      'To: <sip:bob@127.0.0.1>',
      `Call-ID: ${callId}`,
      `CSeq: ${cseq} ${method}`,
      'Max-Forwards: 70',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
  );
}

function tcpdump(file: Buffer, extra: string[] = []): string[] {
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pcap-')), 'x.pcap');
  fs.writeFileSync(p, file);
  try {
    return execFileSync('tcpdump', ['-r', p, '-nn', '-q', ...extra], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .split('\n')
      .filter(Boolean);
  } finally {
    fs.rmSync(path.dirname(p), { recursive: true, force: true });
  }
}

describe('SIP capture: bounds, settings, cost; the pcap writer', function () {
  this.timeout(30_000);
  let redis: Redis;
  const prefix = `tcap${process.pid}_${randomBytes(3).toString('hex')}:`;
  before(() => {
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  after(() => redis.disconnect());

  it('keeps at most SIP_CAPTURE_MAX_PER_CALL messages per Call-ID (the newest), with the retention as TTL', async () => {
    const cap = new SipCapture(redis, prefix, captureSettings({ SIP_CAPTURE_MAX_PER_CALL: '10', SIP_CAPTURE_RETENTION_SECONDS: '120' }));
    for (let i = 1; i <= 25; i++) {
      const data = invite('bound-1', 'INFO', i);
      cap.received(parseMessage(data), data, src);
    }
    await cap.close();
    const got = await readCaptured(redis, prefix, ['bound-1']);
    expect(got).to.have.length(10);
    expect(got[0]!.raw).to.include('CSeq: 16 INFO');
    expect(got[9]!.raw).to.include('CSeq: 25 INFO');
    const ttl = await redis.ttl(captureKey(prefix, 'bound-1'));
    expect(ttl).to.be.within(100, 120);
  });

  it('SIP_CAPTURE=off captures nothing; REGISTER and OPTIONS are never captured', async () => {
    const off = new SipCapture(redis, prefix, captureSettings({ SIP_CAPTURE: 'off' }));
    const d = invite('off-1');
    off.received(parseMessage(d), d, src);
    await off.close();
    expect(await redis.exists(captureKey(prefix, 'off-1'))).to.equal(0);
    const on = new SipCapture(redis, prefix, captureSettings({}));
    for (const m of ['REGISTER', 'OPTIONS']) {
      const r = invite(`skip-${m}`, m);
      on.received(parseMessage(r), r, src);
    }
    await on.close();
    expect(await redis.exists(captureKey(prefix, 'skip-REGISTER'), captureKey(prefix, 'skip-OPTIONS'))).to.equal(0);
    expect(on.stats.captured).to.equal(0);
  });

  it("with no REDIS_KEY_PREFIX the sip-server writes where the API reads (the platform's default prefix)", async () => {
    const env: NodeJS.ProcessEnv = { ...testEnv(), SIP_CAPTURE: 'on' };
    delete env.REDIS_KEY_PREFIX;
    const apiPrefix = loadConfig(env, { persistSecret: false }).redisKeyPrefix;
    const callId = `default-prefix-${randomBytes(4).toString('hex')}`;
    const running = startCapture(env)!;
    const d = invite(callId);
    running.capture.received(parseMessage(d), d, src);
    await running.close();
    try {
      expect(await readCaptured(redis, apiPrefix, [callId])).to.have.length(1);
    } finally {
      await redis.del(captureKey(apiPrefix, callId));
    }
  });

  it('bad settings are refused naming the variable', () => {
    expect(() => captureSettings({ SIP_CAPTURE: 'maybe' })).to.throw(/SIP_CAPTURE: must be on or off/);
    expect(() => captureSettings({ SIP_CAPTURE_RETENTION_SECONDS: '5' })).to.throw(/SIP_CAPTURE_RETENTION_SECONDS/);
    expect(() => captureSettings({ SIP_CAPTURE_MAX_PER_CALL: 'x' })).to.throw(/SIP_CAPTURE_MAX_PER_CALL/);
    expect(captureSettings({})).to.deep.equal({ enabled: true, retentionSeconds: 86_400, maxPerCall: 500 });
  });

  it("costs little per message on the stack's path (measured: the record and the batched write)", async () => {
    const cap = new SipCapture(redis, prefix, captureSettings({ SIP_CAPTURE_MAX_PER_CALL: '10', SIP_CAPTURE_RETENTION_SECONDS: '60' }));
    const N = 15_000;
    const msgs = Array.from({ length: 50 }, (_, i) => {
      const d = invite(`cost-${i}`);
      return { m: parseMessage(d), d };
    });
    for (let i = 0; i < 2000; i++) {
      const x = msgs[i % 50]!;
      cap.received(x.m, x.d, src);
    } // warm-up
    await cap.flush();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) {
      const x = msgs[i % 50]!;
      cap.received(x.m, x.d, src);
    }
    const hot = Number(process.hrtime.bigint() - t0) / N;
    // what the stack pays anyway for each message: its parse
    const t2 = process.hrtime.bigint();
    for (let i = 0; i < 2000; i++) parseMessage(msgs[i % 50]!.d);
    const parse = Number(process.hrtime.bigint() - t2) / 2000;
    // the write's CPU in this process (building the pipeline, reading the replies), not Redis's time
    const c0 = process.cpuUsage();
    await cap.close();
    const c = process.cpuUsage(c0);
    const write = (c.user + c.system) / N;
    console.log(`      capture: ${hot.toFixed(0)} ns per message on the hot path (a parse: ${parse.toFixed(0)} ns), ${write.toFixed(1)} µs CPU per message written (one script call per 500)`);
    expect(cap.stats.written + cap.stats.dropped).to.equal(N + 2000);
    // a fraction of what parsing the same message costs (both measured here, on a shared machine)
    expect(hot).to.be.below(parse / 4);
  });

  it('writes a batch of many Call-IDs with one Redis command per 500 messages, each stream as captured', async () => {
    const cap = new SipCapture(redis, prefix, captureSettings({ SIP_CAPTURE_MAX_PER_CALL: '10', SIP_CAPTURE_RETENTION_SECONDS: '90' }));
    const ids = Array.from({ length: 300 }, (_, i) => `batch-${process.pid}-${i}`);
    for (let round = 1; round <= 4; round++) {
      for (const id of ids) {
        const d = invite(id, 'INFO', round);
        cap.received(parseMessage(d), d, src);
      }
    }
    // count what the capture's connection sends (the real client, the real Redis)
    let commands = 0;
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = (...a: Parameters<Redis['sendCommand']>) => {
      commands++;
      return send(...a);
    };
    try {
      await cap.close();
    } finally {
      redis.sendCommand = send;
    }
    expect(cap.stats.written).to.equal(1200);
    expect(cap.stats.writeErrors).to.equal(0);
    expect(commands, 'Redis commands for 1,200 messages').to.be.at.most(3);
    for (const id of [ids[0]!, ids[299]!]) {
      const mine = await readCaptured(redis, prefix, [id]);
      expect(mine.map((m) => m.raw.match(/CSeq: (\d+)/)![1])).to.deep.equal(['1', '2', '3', '4']);
    }
    const got = await readCaptured(redis, prefix, [ids[0]!]);
    expect(got[0]).to.include({ direction: 'in', transport: 'udp', srcIp: '127.0.0.1', srcPort: 5070, dstIp: '127.0.0.1', dstPort: 5060, sipCallId: ids[0] });
    expect(await redis.ttl(captureKey(prefix, ids[299]!))).to.be.within(60, 90);
  });

  it('a failed write counts the messages as write errors and the capture goes on', async () => {
    const cap = new SipCapture(redis, prefix, captureSettings({}));
    const id = `wrongtype-${process.pid}`;
    await redis.set(captureKey(prefix, id), 'not a stream');
    const ok = `fine-${process.pid}`;
    for (const c of [id, ok]) {
      const d = invite(c);
      cap.received(parseMessage(d), d, src);
    }
    await cap.close();
    expect(cap.stats).to.include({ written: 1, writeErrors: 1 });
    expect(await readCaptured(redis, prefix, [ok])).to.have.length(1);
    await redis.del(captureKey(prefix, id));
  });

  it('pcap: TCP segments and IPv6 packets are read by tcpdump with the right ports and lengths', () => {
    const base = { sipCallId: 'x', us: 1_700_000_000_000_000 };
    const raw = 'OPTIONS sip:a@[::1] SIP/2.0\r\nCall-ID: x\r\nContent-Length: 0\r\n\r\n';
    const msgs: CapturedMessage[] = [
      { ...base, direction: 'in', transport: 'tcp', srcIp: '127.0.0.1', srcPort: 40000, dstIp: '127.0.0.1', dstPort: 5060, raw },
      { ...base, us: base.us + 10, direction: 'out', transport: 'tcp', srcIp: '127.0.0.1', srcPort: 5060, dstIp: '127.0.0.1', dstPort: 40000, raw: 'SIP/2.0 200 OK\r\n\r\n' },
      { ...base, us: base.us + 20, direction: 'in', transport: 'udp', srcIp: '::1', srcPort: 5070, dstIp: '::1', dstPort: 5060, raw },
      { ...base, us: base.us + 30, direction: 'in', transport: 'tcp', srcIp: '127.0.0.1', srcPort: 40000, dstIp: '127.0.0.1', dstPort: 5060, raw },
    ];
    const lines = tcpdump(buildPcap(msgs), ['-v']).join('\n');
    expect(lines).to.include(`127.0.0.1.40000 > 127.0.0.1.5060: tcp ${raw.length}`);
    expect(lines).to.include('127.0.0.1.5060 > 127.0.0.1.40000: tcp 18');
    expect(lines).to.include(`::1.5070 > ::1.5060: [udp sum ok] UDP, length ${raw.length}`);
    expect(lines).not.to.match(/bad cksum|incorrect/i);
    expect(tcpdump(buildPcap([]))).to.deep.equal([]);
  });
});
