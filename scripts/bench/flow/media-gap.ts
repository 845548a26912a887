/**
 * Media gap on live calls: the silence between two media actions (end of one prompt → first packet
 * of the next), measured on the RTP the platform sends.
 *   source .data/env && npx tsx scripts/bench/flow/media-gap.ts [--calls 20] [--prompts 25]
 *
 * Whole call plane on loopback: sipp (a trunk) places --calls concurrent calls to a number; each
 * call's flow answers and plays --prompts prompts of 300 ms (15 frames of tone, served over loopback
 * HTTP), one `play` action each, then hangs up. Every call's RTP lands on one UDP receiver here
 * (sipp sends none, so nothing re-latches), split by the engine port it came from.
 *
 * Gap = arrival of the first tone packet of prompt k+1 − arrival of the last tone packet of prompt k
 * − 20 ms; 0 means the next prompt's audio came in the very next frame. Baseline, same run: the same
 * prompts as ONE play action with all URLs, i.e. the engine switching files without the flow runner.
 */
process.env.LOG_LEVEL ??= 'silent';
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { repos } from '../../../core/repos';
import { decodeG711 } from '../../../core/audio/g711';
import { testDb } from '../../../testkit/db';
import { sipp, startPlatform, uacWaitsForBye } from '../../../testkit/media-app/harness';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 20);
const PROMPTS = arg('prompts', 25);
const TONE_FRAMES = 15;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

/** Per engine port: arrival time and level of each packet. */
class Receiver {
  readonly sock = dgram.createSocket('udp4');
  readonly streams = new Map<number, { t: number[]; level: number[] }>();
  async open(): Promise<number> {
    await new Promise<void>((r) => this.sock.bind(0, '127.0.0.1', r));
    this.sock.on('message', (buf, rinfo) => {
      const t = performance.now();
      if (buf.length < 12 || (buf[1]! & 0x7f) !== 0) return;
      const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
      let sum = 0;
      for (const v of decodeG711('PCMU', payload)) sum += Math.abs(v);
      let s = this.streams.get(rinfo.port);
      if (!s) this.streams.set(rinfo.port, (s = { t: [], level: [] }));
      s.t.push(t);
      s.level.push(payload.length ? sum / payload.length : 0);
    });
    return this.sock.address().port;
  }
}

/** The N−1 gaps of one call; null when the call did not deliver every prompt's frames. */
function gapsOf(s: { t: number[]; level: number[] }): number[] | null {
  const voiced = s.level.map((l) => l > 1000);
  const first = voiced.indexOf(true);
  if (first < 0) return null;
  const gaps: number[] = [];
  let run = 0;
  let lastVoiced = -1;
  for (let i = first; i < voiced.length; i++) {
    if (!voiced[i]) continue;
    if (lastVoiced >= 0 && (i !== lastVoiced + 1 || run === TONE_FRAMES)) {
      // a new prompt starts here: either after silent packets / a time jump, or right after 15 frames
      gaps.push(Math.max(0, s.t[i]! - s.t[lastVoiced]! - 20));
      run = 0;
    }
    run++;
    lastVoiced = i;
  }
  return gaps.length === PROMPTS - 1 ? gaps : null;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-gap-'));
  const urls: string[] = [];
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(req.url ?? ''));
    if (!fs.existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'audio/wav' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  for (let k = 0; k < PROMPTS; k++) {
    // different files (different pitches), so no prompt is the previous one replayed from memory
    const f = path.join(dir, `p${k}.wav`);
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', f, 'synth', String(TONE_FRAMES * 0.02), 'sine', String(500 + 20 * k), 'vol', '0.5']);
    urls.push(`${base}/p${k}.wav`);
  }

  const p = await startPlatform({ RTP_PORT_MIN: '42000', RTP_PORT_MAX: '43999', MEDIA_WORKERS: '1' });
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `gap${Date.now()}@example.test`, status: 'active', name: 'gap' })).id;
  await trunksRepo(db).create(cid, `gap${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const flows = {
    'flow: one play action per prompt': parseActions([{ type: 'answer' }, ...urls.map((u) => ({ type: 'play', option: { stream_urls: [u] } })), { type: 'hangup' }]),
    'baseline: one play action, all URLs': parseActions([{ type: 'answer' }, { type: 'play', option: { stream_urls: urls } }, { type: 'hangup' }]),
  };
  const rows: string[] = [];
  let n = 0;
  for (const [name, actions] of Object.entries(flows)) {
    const flow = await flowsRepo(db).create({ customer_id: cid, actions } as never);
    const number = `+8991999000${10 + n++}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    // warm the engine's fetch cache, so both variants play from disk
    const rx0 = new Receiver();
    const warm = sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', await rx0.open()), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 60_000 });
    await warm.done;
    rx0.sock.close();

    const rx = new Receiver();
    const port = await rx.open();
    const r = await sipp(
      uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', port),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', String(CALLS), '-l', String(CALLS), '-r', String(CALLS)],
      { killAfterMs: 120_000 },
    ).done;
    rx.sock.close();
    const gaps: number[] = [];
    let complete = 0;
    for (const s of rx.streams.values()) {
      const g = gapsOf(s);
      if (!g) continue;
      complete++;
      gaps.push(...g);
    }
    rows.push(
      `| ${name} | ${complete}/${CALLS} | ${gaps.length} | ${pct(gaps, 50).toFixed(1)} | ${pct(gaps, 99).toFixed(1)} | ${Math.max(...gaps).toFixed(1)} | ${r.code === 0 ? 'ok' : `sipp exit ${r.code}`} |`,
    );
    process.stdout.write(rows[rows.length - 1] + '\n');
  }
  await p.close();
  server.close();
  await db.destroy();
  fs.rmSync(dir, { recursive: true, force: true });

  const out = ['| variant | calls complete | gaps | p50 ms | p99 ms | max ms | sipp |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
  process.stdout.write('\n' + out + '\n');
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(String(err?.stack ?? err) + '\n');
    process.exit(1);
  },
);
