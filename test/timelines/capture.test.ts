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
import { SipCapture } from '../../sip-server/capture';
import { captureKey, captureSettings, readCaptured, type CapturedMessage } from '../../core/sip/capture-store';
import { buildPcap } from '../../control-api/timelines/pcap';

const src: SourceInfo = { transport: 'udp', address: '127.0.0.1', port: 5070, localAddress: '127.0.0.1', localPort: 5060 };

function invite(callId: string, method = 'INVITE', cseq = 1): Buffer {
  return Buffer.from([
    `${method} sip:bob@127.0.0.1 SIP/2.0`, 'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-' + randomBytes(4).toString('hex'),
    'From: <sip:a@127.0.0.1>;tag=1', 'To: <sip:bob@127.0.0.1>', `Call-ID: ${callId}`, `CSeq: ${cseq} ${method}`, 'Max-Forwards: 70', 'Content-Length: 0', '', '',
  ].join('\r\n'));
}

function tcpdump(file: Buffer, extra: string[] = []): string[] {
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pcap-')), 'x.pcap');
  fs.writeFileSync(p, file);
  try {
    return execFileSync('tcpdump', ['-r', p, '-nn', '-q', ...extra], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n').filter(Boolean);
  } finally {
    fs.rmSync(path.dirname(p), { recursive: true, force: true });
  }
}

describe('SIP capture: bounds, settings, cost; the pcap writer', function () {
  this.timeout(30_000);
  let redis: Redis;
  const prefix = `tcap${process.pid}_${randomBytes(3).toString('hex')}:`;
  before(() => { redis = new Redis(process.env.TEST_REDIS_URL!); });
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

  it('bad settings are refused naming the variable', () => {
    expect(() => captureSettings({ SIP_CAPTURE: 'maybe' })).to.throw(/SIP_CAPTURE: must be on or off/);
    expect(() => captureSettings({ SIP_CAPTURE_RETENTION_SECONDS: '5' })).to.throw(/SIP_CAPTURE_RETENTION_SECONDS/);
    expect(() => captureSettings({ SIP_CAPTURE_MAX_PER_CALL: 'x' })).to.throw(/SIP_CAPTURE_MAX_PER_CALL/);
    expect(captureSettings({})).to.deep.equal({ enabled: true, retentionSeconds: 86_400, maxPerCall: 500 });
  });

  it('costs little per message on the stack\'s path (measured: the record and the batched write)', async () => {
    const cap = new SipCapture(redis, prefix, captureSettings({ SIP_CAPTURE_MAX_PER_CALL: '10', SIP_CAPTURE_RETENTION_SECONDS: '60' }));
    const N = 15_000;
    const msgs = Array.from({ length: 50 }, (_, i) => { const d = invite(`cost-${i}`); return { m: parseMessage(d), d }; });
    for (let i = 0; i < 2000; i++) { const x = msgs[i % 50]!; cap.received(x.m, x.d, src); } // warm-up
    await cap.flush();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) { const x = msgs[i % 50]!; cap.received(x.m, x.d, src); }
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
    console.log(`      capture: ${hot.toFixed(0)} ns per message on the hot path (a parse: ${parse.toFixed(0)} ns), ${write.toFixed(1)} µs CPU per message written (batched pipeline)`);
    expect(cap.stats.written + cap.stats.dropped).to.equal(N + 2000);
    // a fraction of what parsing the same message costs (both measured here, on a shared machine)
    expect(hot).to.be.below(parse / 4);
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
