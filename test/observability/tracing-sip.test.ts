/**
 * One trace per call, sip-server's transactions and media operations (docs/observability.md "Traces"):
 * a trunk's sipp caller reaches a number whose flow answers, speaks (TTS), plays a URL, records and
 * connects to an extension a sipp phone registered (digest: 401, then 200) and answers; the caller
 * holds (re-INVITE) and hangs up (BYE), and media-app's BYE ends the callee's leg. Spans go over OTLP
 * to a loopback receiver that decodes them (test/support/otlp-receiver.ts): the call is one trace
 * rooted at the incoming `sip INVITE`, with the outgoing INVITE, the in-dialog requests both ways and
 * the media operations where they belong, and no orphan. Each REGISTER transaction is a root span
 * of its own that carries no credential. Trace headers the network puts on in-dialog requests, well
 * formed or not, are ignored, and media-app's context header never reaches the wire.
 */
import { wavHeader } from '../../media-engine/audio/wav';
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { WebSocketServer } from 'ws';
import type { Tracing } from '../../core/tracing';
import { numbersRepo } from '../../core/repos/numbers';
import { flowsRepo } from '../../core/repos/flows';
import { trunksRepo } from '../../core/repos/trunks';
import { parseActions } from '../../core/flow';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import type { Fixture, TestApp } from '../../testkit/api';
import { createExtension, killAllSipp, registerOnly, sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { calleePhone } from '../../testkit/media-app/phones';
import { reinvite, ack } from '../../testkit/media-app/sipp-steps';
import type { OtlpReceiver, ReceivedSpan } from '../support/otlp-receiver';
import { startTracedStack, type TracedStack } from './traced-stack';
import { Headers, parseMessage, type SipRequest } from '../../sip-server/message';
import { dropTraceHeader, endSipSpan, traceAppNewRequest, traceNewRequest } from '../../sip-server/drachtio/trace';
import { loopbackSdp } from '../../testkit/sdp';

const FORGED_TRACE = 'ef'.repeat(16);

/** Half a second of 8 kHz 16-bit mono silence, as a WAV file. */
function silenceWav(): Buffer {
  const data = Buffer.alloc(8000);
  return Buffer.concat([wavHeader(data.length), data]);
}

/** A loopback HTTP server with one WAV prompt (/prompt.wav); 404 for any other path. */
async function promptServer(): Promise<{ url: string; close(): Promise<void> }> {
  const wav = silenceWav();
  const server = http.createServer((req, res) => (req.url === '/prompt.wav' ? res.writeHead(200, { 'Content-Type': 'audio/wav', 'Content-Length': wav.length }).end(wav) : res.writeHead(404).end()));
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${port}/prompt.wav`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const sdp = (rtpPort: number, direction: string, version: number) => loopbackSdp(rtpPort, { version, direction, events: '0-15' });

/**
 * A trunk caller: INVITE, then after `holdAfterMs` a re-INVITE putting the call on hold (with a
 * forged but well-formed trace header), then after `byeAfterMs` a BYE (with a malformed one).
 */
function holdingCaller(ruri: string, rtpPort: number, holdAfterMs: number, byeAfterMs: number): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="holding-caller">
<send retrans="500"><![CDATA[
INVITE sip:${ruri} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: "Trunk Caller" <sip:caller@[local_ip]:[local_port]>;tag=[call_number]
To: <sip:${ruri}>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:caller@[local_ip]:[local_port]>
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

${sdp(rtpPort, 'sendrecv', 1)}
]]></send>
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true"/>
${ack(1)}
<pause milliseconds="${holdAfterMs}"/>
${reinvite(2, sdp(rtpPort, 'sendonly', 2), { user: 'caller', headers: [`X-Openvoice-Traceparent: 00-${FORGED_TRACE}-${'12'.repeat(8)}-01`, `traceparent: 00-${FORGED_TRACE}-${'34'.repeat(8)}-01`] })}
<pause milliseconds="${byeAfterMs}"/>
<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: 3 BYE
Max-Forwards: 70
X-Openvoice-Traceparent: 00-zz-not-a-trace-context
Content-Length: 0

]]></send>
<recv response="200"/>
</scenario>`;
}

/** The registered phone's answer, failing if the INVITE it gets carries our context header. */
const calleeWithoutTraceHeader = (user: string) =>
  calleePhone(user).replace(
    '<recv request="INVITE" timeout="20000"/>',
    `<recv request="INVITE" timeout="20000"><action><ereg regexp="X-Openvoice-Traceparent" search_in="msg" check_it_inverse="true" assign_to="1"/></action></recv>
<Reference variables="1"/>`,
  );

describe('OpenTelemetry: sip-server transactions and media operations in the call trace', function () {
  this.timeout(120_000);
  let stack: TracedStack | undefined;
  let otlp: OtlpReceiver;
  let tracing: Tracing;
  let p: Platform;
  let prompts: Awaited<ReturnType<typeof promptServer>>;
  let t: TestApp;
  let f: Fixture;

  before(async () => {
    stack = await startTracedStack();
    ({ otlp, tracing, p, t, f } = stack);
    prompts = await promptServer();
  });
  after(async () => {
    killAllSipp();
    await prompts?.close();
    await stack?.close();
  });

  it("trace headers: the network's is removed from every request; an application's unreadable one gives a root span", async () => {
    // a network request no span is made for (OPTIONS) still loses the header before the application sees it
    const options = parseMessage(
      `OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1\r\nFrom: <sip:a@127.0.0.1>;tag=1\r\nTo: <sip:x@127.0.0.1>\r\nCall-ID: opt-1\r\nCSeq: 1 OPTIONS\r\nX-Openvoice-Traceparent: 00-${FORGED_TRACE}-${'56'.repeat(8)}-01\r\nContent-Length: 0\r\n\r\n`,
    ) as SipRequest;
    expect(traceNewRequest(options, 'udp')).to.equal(undefined);
    expect(options.headers.has('X-Openvoice-Traceparent')).to.equal(false);
    // an application's header is taken off its template; an unreadable value parents nothing
    const tpl = new Headers({ 'X-Openvoice-Traceparent': '00-zz-not-a-context' });
    const unreadable = dropTraceHeader(tpl);
    expect(tpl.has('X-Openvoice-Traceparent')).to.equal(false);
    endSipSpan(traceAppNewRequest('INVITE', 'app-bad-header', 'udp', unreadable)!, 200);
    endSipSpan(traceAppNewRequest('INVITE', 'app-no-answer', 'udp', undefined)!, 408, undefined, true);
    expect(traceAppNewRequest('MESSAGE', 'app-message', 'udp', unreadable)).to.equal(undefined);
    const spans = await until(
      async () => {
        await tracing.flush();
        const mine = otlp.spans.filter((s) => ['app-bad-header', 'app-no-answer'].includes(String(s.attributes['sip.call_id'])));
        return mine.length === 2 ? mine : null;
      },
      10_000,
      'the two spans',
    );
    const [bad, lost] = ['app-bad-header', 'app-no-answer'].map((id) => spans.find((s) => s.attributes['sip.call_id'] === id)!);
    expect([bad!.kind, bad!.parentSpanId, bad!.attributes['sip.response.status_code'], bad!.statusCode]).to.deep.equal([3, '', 200, 0]);
    // no answer (the stack's own 408): no status code recorded, marked error
    expect([lost!.attributes['sip.response.status_code'], lost!.attributes['openvoice.sip.outcome'], lost!.statusCode]).to.deep.equal([undefined, 'no answer', 2]);
    expect(otlp.spans.some((s) => s.attributes['sip.call_id'] === 'opt-1' || s.attributes['sip.call_id'] === 'app-message')).to.equal(false);
  });

  it('a call that plays, records, holds, connects and hangs up is one trace; each REGISTER is a root span with no secret', async () => {
    const db = await testDb();
    const b = await createExtension();
    const customerId = b.customerId;
    // the callee registers (401 challenge, then 200) and answers on its registration port
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const callee = sipp(calleeWithoutTraceHeader(b.ext.username), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], {
      killAfterMs: 60_000,
    });

    await trunksRepo(db).create(customerId, `tr${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({
      customer_id: customerId,
      actions: parseActions([
        { type: 'answer' },
        { type: 'talk', option: { text: 'hello', language: 'en-US' } },
        { type: 'play', option: { stream_urls: [prompts.url] } },
        { type: 'recording_start' },
        { type: 'connect', option: { destinations: [{ type: 'extension', target: b.ext.extension }] } },
      ]),
    });
    const number = `+8991382${String(Date.now()).slice(-5)}`;
    await numbersRepo(db).create({ customer_id: customerId, number, type: 'virtual', call_flow_id: flow.id });
    const rtp = await sippMediaPort();
    const caller = await sipp(holdingCaller(`${number}@127.0.0.1:${p.sipPort}`, rtp, 1500, 7000), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(rtp)], { killAfterMs: 60_000 })
      .done;
    expect(caller.code, caller.errors + caller.messages).to.equal(0);
    const rc = await callee.done;
    expect(rc.code, rc.errors + rc.messages).to.equal(0);

    const rows = await until(async () => {
      const r = (await db('calls').where({ customer_id: customerId })) as { id: string; direction: string; status: string }[];
      return r.length === 2 && r.every((c) => c.status === 'hangup') ? r : null;
    }, 20_000);
    const incoming = rows.find((r) => r.direction === 'incoming')!;
    const outgoing = rows.find((r) => r.direction === 'outgoing')!;

    const byName = (spans: ReceivedSpan[], name: string, kind?: number): ReceivedSpan[] => spans.filter((s) => s.name === name && (kind === undefined || s.kind === kind));
    const spans = await until(
      async () => {
        await tracing.flush();
        const call = otlp.spans.find((s) => s.name === 'call' && s.attributes['openvoice.call.id'] === incoming.id);
        if (!call) return null;
        const mine = otlp.spans.filter((s) => s.traceId === call.traceId);
        const ready =
          byName(mine, 'sip BYE').length === 2 &&
          byName(mine, 'sip INVITE').length === 3 &&
          ['media play', 'tts synthesize', 'media record', 'action connect', 'activeflow'].every((n) => byName(mine, n).length > 0) &&
          byName(mine, 'call').length === 2;
        return ready ? mine : null;
      },
      20_000,
      'the call trace',
    ).catch((err: Error) => {
      // what arrived, to tell which span is missing
      const call = otlp.spans.find((s) => s.name === 'call' && s.attributes['openvoice.call.id'] === incoming.id);
      const seen = otlp.spans.filter((s) => !call || s.traceId === call.traceId).map((s) => `${s.name}/${s.kind}/${s.spanId}<${s.parentSpanId}`);
      throw new Error(`${err.message}: ${seen.join(', ')}`);
    });
    expect(otlp.refused).to.deep.equal([]);
    const one = (name: string, pred: (s: ReceivedSpan) => boolean = () => true): ReceivedSpan => {
      const found = spans.filter((s) => s.name === name && pred(s));
      expect(found, name).to.have.length(1);
      return found[0]!;
    };
    // the incoming INVITE's server span is the root; the call and its flow below it
    const root = one('sip INVITE', (s) => s.kind === 2 && s.parentSpanId === '');
    expect(root.attributes['sip.response.status_code']).to.equal(200);
    const inCall = one('call', (s) => s.attributes['openvoice.call.id'] === incoming.id);
    expect(inCall.parentSpanId).to.equal(root.spanId);
    const flowSpan = one('activeflow', (s) => s.parentSpanId === inCall.spanId);
    const action = (type: string) => one(`action ${type}`, (s) => s.parentSpanId === flowSpan.spanId);

    // media operations: children of the action that asked for them
    const plays = byName(spans, 'media play');
    expect(plays.map((s) => [s.attributes['openvoice.media.prompt'], s.attributes['openvoice.media.outcome']]).sort()).to.deep.equal([
      ['tts', 'played'],
      ['url', 'played'],
    ]);
    const ttsPlay = plays.find((s) => s.attributes['openvoice.media.prompt'] === 'tts')!;
    expect(ttsPlay.parentSpanId).to.equal(action('talk').spanId);
    expect(plays.find((s) => s.attributes['openvoice.media.prompt'] === 'url')!.parentSpanId).to.equal(action('play').spanId);
    const synth = one('tts synthesize');
    expect(synth.parentSpanId).to.equal(ttsPlay.spanId);
    expect(synth.attributes['openvoice.tts.provider']).to.be.a('string').and.not.equal('');
    expect(synth.attributes['openvoice.tts.cache_hit']).to.be.a('boolean');
    expect(synth.startNs >= ttsPlay.startNs && synth.endNs <= ttsPlay.endNs, 'synthesis within the play').to.equal(true);
    const rec = one('media record');
    expect(rec.parentSpanId).to.equal(action('recording_start').spanId);
    expect(rec.attributes['openvoice.media.sample_rate']).to.equal(8000);
    expect(Number(rec.attributes['openvoice.media.record.duration_ms'])).to.be.greaterThan(1000);

    // connect: the outgoing call, and its INVITE as sip-server's client span (answered 200)
    const outCall = one('call', (s) => s.attributes['openvoice.call.id'] === outgoing.id);
    expect(outCall.parentSpanId).to.equal(action('connect').spanId);
    const outInvite = one('sip INVITE', (s) => s.kind === 3);
    expect(outInvite.parentSpanId).to.equal(outCall.spanId);
    expect(outInvite.attributes['sip.response.status_code']).to.equal(200);
    expect(outInvite.attributes['network.transport']).to.equal('udp');

    // in-dialog requests: the caller's hold (re-INVITE) and BYE in the incoming INVITE's dialog; our BYE to the callee in its INVITE's
    const hold = one('sip INVITE', (s) => s.kind === 2 && s.parentSpanId !== '');
    expect(hold.parentSpanId).to.equal(root.spanId);
    expect(hold.attributes['sip.response.status_code']).to.equal(200);
    const callerBye = one('sip BYE', (s) => s.kind === 2);
    expect(callerBye.parentSpanId).to.equal(root.spanId);
    expect([callerBye.attributes['sip.method'], callerBye.attributes['sip.response.status_code']]).to.deep.equal(['BYE', 200]);
    const calleeBye = one('sip BYE', (s) => s.kind === 3);
    expect(calleeBye.parentSpanId).to.equal(outInvite.spanId);
    expect(calleeBye.attributes['sip.response.status_code']).to.equal(200);
    expect(calleeBye.attributes['sip.call_id']).to.equal(outInvite.attributes['sip.call_id']);

    // no span joined the trace the caller forged, and none names a parent the trace lacks
    expect(otlp.spans.filter((s) => s.traceId === FORGED_TRACE)).to.deep.equal([]);
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) if (s.parentSpanId) expect(ids.has(s.parentSpanId), `${s.name}'s parent`).to.equal(true);
    for (const s of spans) expect(s.endNs >= s.startNs, s.name).to.equal(true);

    // the registration: two root spans (the 401 challenge, then the 200), one Call-ID, no credential
    const registers = otlp.spans.filter((s) => s.name === 'sip REGISTER').sort((x, y) => (x.startNs < y.startNs ? -1 : 1));
    expect(registers.map((s) => [s.kind, s.parentSpanId, s.attributes['sip.response.status_code']])).to.deep.equal([
      [2, '', 401],
      [2, '', 200],
    ]);
    expect(registers[0]!.traceId).to.not.equal(registers[1]!.traceId);
    expect(registers[0]!.attributes['sip.call_id']).to.equal(registers[1]!.attributes['sip.call_id']);
    expect(registers.every((s) => s.statusCode !== 2)).to.equal(true);
    for (const s of otlp.spans) {
      const text = JSON.stringify(s.attributes);
      expect(text, s.name).to.not.include(b.password);
      expect(text, s.name).to.not.match(/Digest|response=|Authorization/i);
    }
  });

  it("a media stream's fork and a conference membership are spans of the actions that started them", async () => {
    const db = await testDb();
    // the customer's media server: a WebSocket server on loopback that takes the call's audio
    const wssPort = await freePort();
    const wss = new WebSocketServer({ host: '127.0.0.1', port: wssPort });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    let chunks = 0;
    wss.on('connection', (ws) => ws.on('message', () => chunks++));
    try {
      const conf = await request(t.app).post('/v1.0/conferences').query({ accesskey: f.accesskey }).send({ type: 'conference', name: 'traced room' });
      expect(conf.status, JSON.stringify(conf.body)).to.equal(200);
      const conferenceId = (conf.body as { id: string }).id;
      await until(async () => ((await db('conferences').where({ id: conferenceId }).first()) as { status: string } | undefined)?.status === 'progressing', 10_000, 'conference progressing');
      await trunksRepo(db).create(f.customer.id, `tm${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
      const flow = await flowsRepo(db).create({
        customer_id: f.customer.id,
        actions: parseActions([
          { type: 'answer' },
          { type: 'external_media_start', option: { url: `ws://127.0.0.1:${wssPort}/bot`, encapsulation: 'audiosocket' } },
          { type: 'sleep', option: { duration: 1500 } },
          { type: 'external_media_stop' },
          { type: 'conference_join', option: { conference_id: conferenceId } },
        ]),
      });
      const number = `+8991383${String(Date.now()).slice(-5)}`;
      await numbersRepo(db).create({ customer_id: f.customer.id, number, type: 'virtual', call_flow_id: flow.id });
      const rtp = await sippMediaPort();
      const a = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'caller', rtp, { hangUpAfterMs: 5000 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(rtp)], {
        killAfterMs: 60_000,
      }).done;
      expect(a.code, a.errors + a.messages).to.equal(0);
      expect(chunks, 'audio reached the media server').to.be.greaterThan(10);
      const row = await until(
        async () => (await db('calls').where({ customer_id: f.customer.id, direction: 'incoming', status: 'hangup' }).first()) as { id: string } | undefined,
        20_000,
        'the call ended',
      );
      const spans = await until(
        async () => {
          await tracing.flush();
          const call = otlp.spans.find((s) => s.name === 'call' && s.attributes['openvoice.call.id'] === row.id);
          const mine = call ? otlp.spans.filter((s) => s.traceId === call.traceId) : [];
          // the activeflow's span ends after the call's row says hangup: wait for it too
          return ['media fork', 'media mix', 'activeflow', 'sip BYE'].every((n) => mine.some((s) => s.name === n)) ? mine : null;
        },
        20_000,
        'the fork and mix spans',
      );
      const byName = (n: string) => spans.filter((s) => s.name === n);
      expect(byName('media fork')).to.have.length(1);
      expect(byName('media mix')).to.have.length(1);
      const fork = byName('media fork')[0]!;
      const mix = byName('media mix')[0]!;
      expect(fork.parentSpanId).to.equal(byName('action external_media_start')[0]!.spanId);
      expect([fork.attributes['openvoice.media.fork.target'], fork.attributes['openvoice.media.fork.target_id'], fork.attributes['openvoice.media.outcome']]).to.deep.equal([
        'call',
        row.id,
        'stopped',
      ]);
      expect(fork.statusCode).to.not.equal(2);
      // conference_join pushes confbridge_join, the action that stays in the mix until the call leaves
      expect(mix.parentSpanId).to.equal(byName('action confbridge_join')[0]!.spanId);
      expect([mix.attributes['openvoice.conference.id'], mix.attributes['openvoice.media.outcome']]).to.deep.equal([conferenceId, 'hangup']);
      expect(mix.endNs - mix.startNs > 1_000_000_000n, 'in the mix until the hangup').to.equal(true);
      const ids = new Set(spans.map((s) => s.spanId));
      for (const s of spans) if (s.parentSpanId) expect(ids.has(s.parentSpanId), `${s.name}'s parent`).to.equal(true);
    } finally {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    }
  });

  it('a play that fails is a failed `media play` whose status names no URL', async () => {
    const db = await testDb();
    await trunksRepo(db).create(f.customer.id, `tf${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const missing = `${prompts.url.replace('/prompt.wav', '/missing.wav')}?token=s3cr3t-in-url`;
    const flow = await flowsRepo(db).create({
      customer_id: f.customer.id,
      actions: parseActions([{ type: 'answer' }, { type: 'play', option: { stream_urls: [missing] } }, { type: 'hangup' }]),
    });
    const number = `+8991384${String(Date.now()).slice(-5)}`;
    await numbersRepo(db).create({ customer_id: f.customer.id, number, type: 'virtual', call_flow_id: flow.id });
    const before = new Set(((await db('calls').where({ customer_id: f.customer.id })) as { id: string }[]).map((r) => r.id));
    const rtp = await sippMediaPort();
    const a = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'caller', rtp, { byeTimeoutMs: 20_000 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(rtp)], {
      killAfterMs: 60_000,
    }).done;
    expect(a.code, a.errors + a.messages).to.equal(0);
    const callId = await until(
      async () => {
        const rows = (await db('calls').where({ customer_id: f.customer.id, direction: 'incoming', status: 'hangup' })) as { id: string }[];
        return rows.find((r) => !before.has(r.id))?.id;
      },
      20_000,
      'the call ended',
    );
    const play = await until(
      async () => {
        await tracing.flush();
        const call = otlp.spans.find((s) => s.name === 'call' && s.attributes['openvoice.call.id'] === callId);
        return call ? otlp.spans.find((s) => s.traceId === call.traceId && s.name === 'media play') : undefined;
      },
      20_000,
      'the failed play',
    );
    expect([play.attributes['openvoice.media.prompt'], play.attributes['openvoice.media.outcome'], play.statusCode]).to.deep.equal(['url', 'failed', 2]);
    expect(play.statusMessage).to.match(/^play failed/);
    for (const s of otlp.spans) expect(JSON.stringify(s.attributes) + s.statusMessage, s.name).to.not.include('s3cr3t-in-url');
  });
});
