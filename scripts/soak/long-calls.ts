/**
 * Long calls on a platform with its DEFAULT timers (issue 52): a harness platform (sip-server, a
 * media-app node and control-api in process, nothing set but loopback egress) takes three calls at
 * once and holds each --minutes (default 5) with audio flowing both ways:
 *   ext → ext       a registered extension's phone calls another extension, which answers;
 *   REST → ext      POST /v1.0/calls to a registered extension whose flow echoes it;
 *   TwiML <Dial>    a trunk caller's number runs <Dial><Sip> to a sipp phone.
 * In each, one party (the caller, the callee, the callee) hangs up after the hold. It prints, per call,
 * whether it was ended only by that party (no row left `progressing` and no party got a BYE during
 * the hold; audio both ways after it) with the hangup records, and PASS/FAIL; exit code 1 on FAIL.
 *
 *   source .data/env && npx tsx scripts/soak/long-calls.ts --minutes 5
 */
import request from 'supertest';
import twilio from 'twilio';
import type { Knex } from 'knex';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { RtpParty } from '../../testkit/conference/party';
import { createExtension, killAllSipp, registerOnly, sipp, until, type SippResult } from '../../testkit/media-app/harness';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { customerWithTrunk, placeCall, startStack, type Stack } from '../../testkit/streams/support';
import { TwimlServer } from '../../testkit/twiml/server';
import { callUp, legOf } from '../../testkit/long-calls/calls';
import { holdFor } from '../../testkit/long-calls/hold';
import { answerer, extensionCaller } from '../../testkit/long-calls/parties';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const MINUTES = arg('minutes', 5);
/** The hold: the minutes asked, and a little past them (a 60 s timer armed at the dial fires inside it). */
const HOLD_MS = MINUTES * 60_000 + 2000;
/** The party hanging up does so this long after its answer: past the hold and the audio check. */
const HANGUP_AFTER_MS = HOLD_MS + 6000;

interface Outcome {
  name: string;
  endedOnlyByParty: boolean;
  problem: string;
  records: { call: string; status: string; hangup_by: string; hangup_reason: string }[];
}

const sippArgs = async (port: number) => [
  '-i',
  '127.0.0.1',
  '-p',
  String(port),
  '-m',
  '1',
  '-timeout',
  `${Math.ceil(HANGUP_AFTER_MS / 1000) + 60}s`,
  '-mi',
  '127.0.0.1',
  '-mp',
  String(await sippMediaPort()),
];
const KILL_MS = HANGUP_AFTER_MS + 90_000;

async function registered(s: Stack, customerId: string, freq: number) {
  const e = await createExtension(customerId);
  const port = await freePort();
  const reg = await sipp(registerOnly(e.ext.username, e.domain), [`127.0.0.1:${s.platform.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-au', e.ext.username, '-ap', e.password]).done;
  if (reg.code !== 0) throw new Error(`REGISTER failed: ${reg.errors}`);
  return { e, port, audio: await RtpParty.open(freq) };
}

/** Holds the calls, checks audio on `ears` after it, waits for the parties' ends and reads the records. */
async function judge(db: Knex, name: string, calls: string[], parties: { name: string; done: Promise<SippResult> }[], ears: { what: string; heard: () => boolean }[]): Promise<Outcome> {
  let problem = '';
  try {
    await holdFor(HOLD_MS, { db, calls, parties, pollMs: 1000 });
    for (const e of ears) await until(e.heard, 10_000, e.what);
    for (const p of parties) {
      const r = await p.done;
      if (r.code !== 0) throw new Error(`${p.name}'s scenario failed: ${r.errors.slice(0, 400)}`);
    }
  } catch (err) {
    problem = (err as Error).message;
  }
  const records = await Promise.all(
    calls.map(async (id) => {
      const r = await until(async () => ((await callsRepo(db).get(id))?.status === 'hangup' ? callsRepo(db).get(id) : null), 30_000, `call ${id} ended`).catch(() => callsRepo(db).get(id));
      return { call: id, status: r?.status ?? 'missing', hangup_by: r?.hangup_by ?? '', hangup_reason: r?.hangup_reason ?? '' };
    }),
  );
  return { name, endedOnlyByParty: !problem, problem, records };
}

const hearsTone = (p: RtpParty, freq: number) => () => p.presence(freq, Date.now() - 600) > 0.5 && p.framesBetween(Date.now() - 600) > 10;

async function extToExt(s: Stack, db: Knex, customerId: string): Promise<Outcome> {
  const [a, b] = [await registered(s, customerId, 400), await registered(s, customerId, 1600)];
  const bPhone = sipp(answerer({ rtpPort: b.audio.port, user: b.e.ext.username, timeoutMs: KILL_MS }), await sippArgs(b.port), { killAfterMs: KILL_MS });
  const aPhone = sipp(
    extensionCaller({ user: a.e.ext.username, domain: a.e.domain, target: b.e.ext.extension, rtpPort: a.audio.port, hangupAfterMs: HANGUP_AFTER_MS }),
    [`127.0.0.1:${s.platform.sipPort}`, ...(await sippArgs(await freePort())), '-au', a.e.ext.username, '-ap', a.e.password],
    { killAfterMs: KILL_MS },
  );
  const leg = await until(
    async () => (await db('calls').where({ customer_id: customerId, direction: 'outgoing' }).whereRaw("destination->>'target' = ?", [b.e.ext.extension]).first()) as CallRow | undefined,
    30_000,
    'B’s leg',
  );
  await callUp(db, leg.id, 'B answered');
  await callUp(db, leg.master_call_id, 'A up');
  const out = await judge(
    db,
    'ext → ext (A hangs up)',
    [leg.master_call_id, leg.id],
    [
      { name: 'A', done: aPhone.done },
      { name: 'B', done: bPhone.done },
    ],
    [
      { what: 'A hears B', heard: hearsTone(a.audio, 1600) },
      { what: 'B hears A', heard: hearsTone(b.audio, 400) },
    ],
  );
  a.audio.close();
  b.audio.close();
  return out;
}

async function restToExt(s: Stack, db: Knex, token: string, customerId: string): Promise<Outcome> {
  const b = await registered(s, customerId, 1200);
  const bPhone = sipp(answerer({ rtpPort: b.audio.port, user: b.e.ext.username, hangupAfterMs: HANGUP_AFTER_MS, timeoutMs: KILL_MS }), await sippArgs(b.port), { killAfterMs: KILL_MS });
  const res = await request(s.api.app)
    .post('/v1.0/calls')
    .set('Authorization', `Bearer ${token}`)
    .send({
      source: { type: 'tel', target: '+899100000001' },
      destinations: [{ type: 'extension', target: b.e.ext.extension }],
      actions: [{ type: 'echo', option: { duration: HANGUP_AFTER_MS + 60_000 } }],
    });
  if (res.status !== 200) throw new Error(`POST /v1.0/calls: ${res.status} ${JSON.stringify(res.body)}`);
  const id = res.body.calls[0].id as string;
  await callUp(db, id, 'the extension answered');
  const out = await judge(db, 'REST → ext (the callee hangs up)', [id], [{ name: 'the callee', done: bPhone.done }], [{ what: 'the callee hears its echo', heard: hearsTone(b.audio, 1200) }]);
  b.audio.close();
  return out;
}

async function twimlDial(s: Stack, db: Knex, customerId: string, app: TwimlServer): Promise<Outcome> {
  const audio = await RtpParty.open(900);
  const port = await freePort();
  const callee = sipp(answerer({ rtpPort: audio.port, hangupAfterMs: HANGUP_AFTER_MS, timeoutMs: KILL_MS }), await sippArgs(port), { killAfterMs: KILL_MS });
  const doc = new twilio.twiml.VoiceResponse();
  doc.dial().sip(`sip:long@127.0.0.1:${port}`);
  app.on('/long-dial', doc.toString());
  const call = await placeCall(s, customerId, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url('/long-dial') } }], { killAfterMs: KILL_MS });
  const leg = await legOf(db, call.callId, 'progressing', 'the <Dial> answered');
  const out = await judge(
    db,
    'TwiML <Dial><Sip> (the callee hangs up)',
    [call.callId, leg.id],
    [
      { name: 'the caller', done: call.sipp },
      { name: 'the callee', done: callee.done },
    ],
    [
      { what: 'the callee gets RTP', heard: () => audio.framesBetween(Date.now() - 600) > 10 },
      { what: 'the caller hears the callee', heard: () => call.peer.voiced() > 25 },
    ],
  );
  call.peer.close();
  audio.close();
  return out;
}

async function main(): Promise<void> {
  const started = Date.now();
  // default timers: only loopback egress (the parties) is set
  const s = await startStack();
  const f = await customerWithTrunk(s.api);
  const app = await TwimlServer.start(twilioAuthToken(s.platform.config.jwtSecret, f.customer.id, 0));
  const db = s.api.ctx.db;
  console.log(`platform up (CALL_DIAL_TIMEOUT_MS default); three calls, each held ${HOLD_MS / 1000} s`);
  try {
    const outcomes = await Promise.all([extToExt(s, db, f.customer.id), restToExt(s, db, f.token, f.customer.id), twimlDial(s, db, f.customer.id, app)]);
    for (const o of outcomes) {
      console.log(`\n${o.endedOnlyByParty ? 'OK  ' : 'FAIL'} ${o.name}${o.problem ? `\n     ${o.problem}` : ''}`);
      for (const r of o.records) console.log(`     call ${r.call}: ${r.status}, hangup_by '${r.hangup_by}', hangup_reason '${r.hangup_reason}'`);
    }
    const pass = outcomes.every((o) => o.endedOnlyByParty);
    console.log(
      `\n${pass ? 'PASS' : 'FAIL'}: ${outcomes.filter((o) => o.endedOnlyByParty).length} of ${outcomes.length} calls ended only by their party (${Math.round((Date.now() - started) / 1000)} s)`,
    );
    process.exitCode = pass ? 0 : 1;
  } finally {
    killAllSipp();
    await app.close();
    await s.close();
  }
}

main().catch((err) => {
  console.error(err);
  killAllSipp();
  process.exit(1);
});
