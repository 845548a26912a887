import { expect } from 'chai';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { type MediaServer, type DtmfEvent, type Endpoint, type RecordResult } from '../../media-engine';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { bestCorrelation, readWav, useMediaServer } from '../../testkit/media-engine/support';
import { decodeG711 } from '../../core/audio/g711';

const SIPP_DIR = '/usr/share/sip-tester';

/** The RTP audio of a pcap (payload type `pt`, A-law) decoded and placed by timestamp. */
function pcapAudio(file: string, pt: number): Int16Array {
  const b = fs.readFileSync(file);
  let off = 24;
  let first: number | null = null;
  const packets: { ts: number; payload: Uint8Array }[] = [];
  while (off + 16 <= b.length) {
    const incl = b.readUInt32LE(off + 8);
    const pkt = b.subarray(off + 16, off + 16 + incl);
    off += 16 + incl;
    const rtp = pkt.subarray(14 + 20 + 8); // ethernet, IPv4 without options, UDP
    if (rtp.length < 12 || (rtp[1] & 0x7f) !== pt) continue;
    const ts = rtp.readUInt32BE(4);
    if (first === null) first = ts;
    packets.push({ ts: ts - first, payload: rtp.subarray(12) });
  }
  const end = packets.reduce((m, p) => Math.max(m, p.ts + p.payload.length), 0);
  const out = new Int16Array(end);
  for (const p of packets) out.set(decodeG711('PCMA', p.payload), p.ts);
  return out;
}

/** Samples between the first and the last 20 ms frame that carries sound. */
function activeSeconds(x: Int16Array): number {
  let a = -1;
  let z = -1;
  for (let i = 0; i + 160 <= x.length; i += 160) {
    let s = 0;
    for (let k = i; k < i + 160; k++) s += Math.abs(x[k]);
    if (s / 160 > 30) {
      if (a < 0) a = i;
      z = i + 160;
    }
  }
  return a < 0 ? 0 : (z - a) / 8000;
}

function header(msg: string, name: string): string {
  const m = new RegExp(`^${name}:\\s*(.*)$`, 'mi').exec(msg);
  return m ? m[1].trim() : '';
}

describe('media-engine end to end with sipp (uac_pcap)', function () {
  this.timeout(60000);
  let ms: MediaServer;
  let dir: string;

  useMediaServer(
    {
      ports: 100,
      workers: 1,
      prepare(d) {
        fs.mkdirSync(path.join(d, 'pcap'));
        // sipp's built-in uac_pcap looks for pcap/ relative to its working directory
        fs.symlinkSync(path.join(SIPP_DIR, 'g711a.pcap'), path.join(d, 'pcap', 'g711a.pcap'));
        fs.symlinkSync(path.join(SIPP_DIR, 'dtmf_2833_1.pcap'), path.join(d, 'pcap', 'dtmf_2833_1.pcap'));
      },
    },
    (f) => ({ ms, dir } = f),
  );

  it('answers a sipp call, records its G.711 audio and detects its RFC 2833 digit', async () => {
    const sipPort = await freePort();
    const sippPort = await freePort();
    const mediaPort = await sippMediaPort();
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(sipPort, '127.0.0.1', () => r()));
    const digits: DtmfEvent[] = [];
    let ep: Endpoint | null = null;
    let recording: Promise<RecordResult> | null = null;
    let okResponse = '';
    const answered = new Set<string>();
    // a minimal UAS: 200 OK with our SDP to the INVITE, 200 OK to the BYE
    const uasErrors: unknown[] = [];
    const onMessage = async (buf: Buffer, rinfo: dgram.RemoteInfo): Promise<void> => {
      const msg = buf.toString();
      const reply = (status: string, body = '', extra: string[] = []) => {
        const lines = [
          `SIP/2.0 ${status}`,
          `Via: ${header(msg, 'Via')}`,
          `From: ${header(msg, 'From')}`,
          `To: ${header(msg, 'To')}${/;tag=/.test(header(msg, 'To')) ? '' : ';tag=me1'}`,
          `Call-ID: ${header(msg, 'Call-ID')}`,
          `CSeq: ${header(msg, 'CSeq')}`,
          ...extra,
          `Content-Length: ${Buffer.byteLength(body)}`,
          '',
          body,
        ];
        const out = lines.join('\r\n');
        sock.send(out, rinfo.port, rinfo.address);
        return out;
      };
      if (msg.startsWith('INVITE ')) {
        const callId = header(msg, 'Call-ID');
        if (answered.has(callId)) return void (okResponse && sock.send(okResponse, rinfo.port, rinfo.address));
        answered.add(callId);
        const sdp = msg.slice(msg.indexOf('\r\n\r\n') + 4);
        ep = await ms.createEndpoint({ remoteSdp: sdp });
        ep.on('dtmf', (e: DtmfEvent) => digits.push(e));
        recording = ep.record(path.join(dir, 'sipp.wav'), { separate: true });
        okResponse = reply('200 OK', ep.local.sdp, [`Contact: <sip:me@127.0.0.1:${sipPort}>`, 'Content-Type: application/sdp']);
      } else if (msg.startsWith('BYE ')) {
        reply('200 OK');
        await ep?.stopRecord();
      }
    };
    sock.on('message', (buf, rinfo) => {
      onMessage(buf, rinfo).catch((err: unknown) => uasErrors.push(err));
    });
    const code = await new Promise<number>((resolve, reject) => {
      const p = spawn(
        'sipp',
        ['-sn', 'uac_pcap', `127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-p', String(sippPort), '-mp', String(mediaPort), '-m', '1', '-nostdin', '-timeout', '40s', '-timeout_error'],
        { cwd: dir, stdio: 'ignore' },
      );
      p.on('error', reject);
      p.on('exit', (c) => resolve(c ?? -1));
    });
    sock.close();
    expect(uasErrors, 'the test UAS failed').to.deep.equal([]);
    expect(code, 'sipp exit code').to.equal(0);
    const r = await recording!;
    await ep!.destroy();
    expect(digits.map((d) => d.dtmf)).to.deep.equal(['1']);
    expect(digits[0].source).to.equal('rfc2833');
    const inbound = readWav(r.files[1].path).samples;
    const sent = pcapAudio(path.join(SIPP_DIR, 'g711a.pcap'), 8);
    const expected = activeSeconds(sent);
    expect(expected).to.be.greaterThan(5);
    expect(activeSeconds(inbound)).to.be.closeTo(expected, 0.3);
    expect(bestCorrelation(sent, inbound).corr).to.be.greaterThan(0.9);
    expect(r.recordMilliseconds / 1000).to.be.greaterThan(expected);
  });
});
