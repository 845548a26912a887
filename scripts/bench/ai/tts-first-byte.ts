/**
 * The platform's own share of a cloud voice's first audio: a vendor stand-in (testkit/vendors) waits
 * --first-byte ms (default 100) and then streams; the share is from the stand-in's first audio byte
 * to the first voiced RTP packet on the caller's sink (adapter, decode/resample, fork injection,
 * the media worker's next 20 ms tick, RTP). One greeting per call through ai_talk.
 *
 *   source .data/env && npx tsx scripts/bench/ai/tts-first-byte.ts [--vendor elevenlabs] [--calls 20] [--first-byte 100]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reportPath } from '../report';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { aisRepo } from '../../../core/repos/ais';
import { repos } from '../../../core/repos';
import { testDb } from '../../../testkit/db';
import { startLlmServer } from '../../../testkit/llm-server';
import { killAllSipp, sipp, startPlatform } from '../../../testkit/media-app/harness';
import { aiCallerScenario, TimedSink } from '../../../testkit/ai/audio';
import type { StandIn, StandInVendor } from '../../../testkit/vendors/marker';
import { startElevenLabs } from '../../../testkit/vendors/elevenlabs';
import { startCartesia } from '../../../testkit/vendors/cartesia';
import { startDeepgramSpeak } from '../../../testkit/vendors/deepgram';
import { startOpenAiSpeech } from '../../../testkit/vendors/openai';
import { startAzureSpeech } from '../../../testkit/vendors/azure';
import { startLmnt } from '../../../testkit/vendors/lmnt';
import { AWS_TEST_KEY_ID, AWS_TEST_SECRET, startPolly } from '../../../testkit/vendors/aws';
import { startGoogleTts } from '../../../testkit/vendors/google';
import { startRime } from '../../../testkit/vendors/rime';
import { startPlayHt } from '../../../testkit/vendors/playht';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const VENDOR = arg('vendor', 'elevenlabs') as StandInVendor;
const CALLS = Number(arg('calls', '20'));
const FIRST_BYTE = Number(arg('first-byte', '100'));
const STARTERS: Record<StandInVendor, (o: { firstByteMs: number }) => Promise<StandIn>> = {
  elevenlabs: startElevenLabs,
  cartesia: startCartesia,
  deepgram: startDeepgramSpeak,
  openai: startOpenAiSpeech,
  azure: startAzureSpeech,
  lmnt: startLmnt,
  aws: startPolly,
  google: startGoogleTts,
  rime: startRime,
  playht: startPlayHt,
};
/** Vendors whose key is two variables: the platform's settings besides <PREFIX>_BASE_URL. */
const KEYS: Partial<Record<StandInVendor, Record<string, string>>> = {
  aws: { AWS_ACCESS_KEY_ID: AWS_TEST_KEY_ID, AWS_SECRET_ACCESS_KEY: AWS_TEST_SECRET, AWS_REGION: 'us-east-1' },
  playht: { PLAYHT_USER_ID: 'playht-user', PLAYHT_API_KEY: 'playht-test-key' },
};
const ENV: Record<StandInVendor, [string, string, string]> = {
  elevenlabs: ['ELEVENLABS', 'el-test-key', ''],
  cartesia: ['CARTESIA', 'ca-test-key', ''],
  deepgram: ['DEEPGRAM', 'dg-test-key', ''],
  openai: ['OPENAI', 'sk-openai-test', '/v1'],
  azure: ['AZURE', 'az-test-key', ''],
  lmnt: ['LMNT', 'lmnt-test-key', ''],
  aws: ['AWS', '', ''],
  google: ['GOOGLE', 'gg-test-key', ''],
  rime: ['RIME', 'rime-test-key', ''],
  playht: ['PLAYHT', '', ''],
};

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

async function main() {
  if (!STARTERS[VENDOR]) throw new Error(`--vendor must be one of ${Object.keys(STARTERS).join(', ')}`);
  const vendor = await STARTERS[VENDOR]({ firstByteMs: FIRST_BYTE });
  const llm = await startLlmServer({
    respond: (req) => (req.messages.some((m) => m.role === 'user') ? { text: '' } : { text: 'Hello, how can I help?', tool_calls: [{ name: 'stop_service', arguments: {} }] }),
  });
  const [prefix, key, suffix] = ENV[VENDOR];
  const keys = KEYS[VENDOR] ?? { [`${prefix}_API_KEY`]: key };
  const p = await startPlatform({ LOG_LEVEL: 'warn', EGRESS_ALLOW_CIDRS: '127.0.0.0/8', [`${prefix}_BASE_URL`]: vendor.url + suffix, ...keys });
  const db = await testDb();
  const share: number[] = [];
  const total: number[] = [];
  try {
    const cid = (await repos(db).customers.create({ email: `benchtts${Date.now()}@example.test`, status: 'active', name: 'bench' })).id;
    await trunksRepo(db).create(cid, `benchtts${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, { name: 'bench', engine_url: llm.url, engine_model: 'openai.bench', tts_type: VENDOR, tool_names: ['all'] });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_id: ai.id, assistance_type: 'ai', duration: 20 } }, { type: 'hangup' }]),
    });
    const number = `+8994400${String(Date.now() % 100000).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    for (let c = 0; c < CALLS; c++) {
      const sink = await TimedSink.open();
      const asked = vendor.requests.length;
      const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, [], 20_000), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '30s'], {
        killAfterMs: 40_000,
      }).done;
      sink.close();
      if (r.code !== 0) throw new Error(`sipp failed: ${r.errors.slice(0, 500)}`);
      const first = sink.voicedTimes()[0];
      const byte = vendor.firstBytes.at(-1);
      if (first === undefined || byte === undefined || vendor.requests.length === asked) continue;
      share.push(first - byte);
      total.push(first - (byte - FIRST_BYTE));
    }
  } finally {
    killAllSipp();
    await p.close();
    await llm.close();
    await vendor.close();
  }
  if (!share.length) throw new Error('no greeting was heard');
  const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 99).toFixed(1)} |`;
  const lines = [
    `# Benchmark: cloud voice first audio (${VENDOR} stand-in, ${FIRST_BYTE} ms to first byte)`,
    '',
    `Command: \`source .data/env && npx tsx scripts/bench/ai/tts-first-byte.ts --vendor ${VENDOR} --calls ${CALLS} --first-byte ${FIRST_BYTE}\` (${new Date().toISOString()}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)})`,
    '',
    '| measure | n | p50 ms | p99 ms |',
    '|---|---|---|---|',
    row("platform's share: vendor's first audio byte → first voiced RTP packet", share),
    row('request at the stand-in → first voiced RTP packet (includes the stand-in delay)', total),
    '',
  ];
  const out = reportPath(`ai-tts-first-byte-${VENDOR}`);
  fs.writeFileSync(out, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
