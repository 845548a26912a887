// An IVR end to end: sipp (a trunk) calls a number whose flow answers, talks a menu, collects a
// digit that sipp sends from its shipped RFC 2833 pcap, branches on it to a prompt served over HTTP,
// records the caller (sipp plays its shipped G.711 pcap) and hangs up. The test hears the menu on
// the wire, reads the activeflow's path and variables, and checks the recording holds the caller.
import { endedActiveflow } from '../../testkit/call-ends';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import request from 'supertest';
import { buildTestApp } from '../../testkit/api';
import { readWav, rms } from '../../testkit/media-engine/support';
import { testDb } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { killAllSipp, RtpSink, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';

const SIPP_DIR = '/usr/share/sip-tester';
const ID = {
  menu: '1a000000-0000-4000-8000-000000000001',
  digits: '1a000000-0000-4000-8000-000000000002',
  branch: '1a000000-0000-4000-8000-000000000003',
  sales: '1a000000-0000-4000-8000-000000000004',
  invalid: '1a000000-0000-4000-8000-000000000005',
  record: '1a000000-0000-4000-8000-000000000006',
};

// Run on both media backends: 'embedded' (media-engine in media-app) and 'fsmrf' (media-app's calls on
// drachtio-fsmrf against our switch, esl/, over its event socket: startPlatform's mediaServer). Each
// backend has its own numbers (both run in one database).
const BACKENDS = [
  { backend: 'embedded', numbers: '+8991000007' },
  { backend: 'fsmrf', numbers: '+8991000017' },
] as const;

for (const { backend, numbers } of BACKENDS)
  describe(`media-app IVR end to end (sipp DTMF and audio pcaps) on the ${backend} media backend`, function () {
    this.timeout(90_000);
    let p: Platform;
    let dir: string;
    let server: http.Server;
    let promptUrl: string;
    let promptFetches = 0;

    before(async () => {
      p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, { mediaServer: backend }); // the prompt is served on loopback: opted in
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ivr-'));
      // the branch target's prompt: one second of a 600 Hz tone, served over loopback HTTP
      const wav = path.join(dir, 'sales.wav');
      execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'synth', '1', 'sine', '600', 'vol', '0.5']);
      server = http.createServer((req, res) => {
        promptFetches++;
        if (req.url !== '/sales.wav') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'audio/wav' });
        fs.createReadStream(wav).pipe(res);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      promptUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/sales.wav`;
    });
    after(async () => {
      killAllSipp();
      server?.close();
      await p?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    /** A customer with a trunk trusted by address and a number whose flow runs `actions`. */
    async function numberWithFlow(number: string, actions: unknown[]): Promise<string> {
      const db = await testDb();
      const cid = (await repos(db).customers.create({ email: `ivr${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'ivr' })).id;
      await trunksRepo(db).create(cid, `ivr${Date.now()}${Math.floor(Math.random() * 1000)}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
      const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions(actions) } as never);
      await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
      return cid;
    }

    function ivrNumber(number: string): Promise<string> {
      return numberWithFlow(number, [
        { type: 'answer' },
        { id: ID.menu, type: 'talk', option: { text: 'Welcome. For sales press five.', language: 'en-US' } },
        { id: ID.digits, type: 'digits_receive', option: { duration: 10000, length: 1 } },
        { id: ID.branch, type: 'branch', option: { variable: 'svc.call.digits', default_target_id: ID.invalid, target_ids: { '5': ID.sales } } },
        { id: ID.invalid, type: 'talk', option: { text: 'That is not a valid choice.', language: 'en-US' } },
        { type: 'hangup' },
        { id: ID.sales, type: 'play', option: { stream_urls: [promptUrl] } },
        { id: ID.record, type: 'recording_start', option: { duration: 3 } },
        { type: 'sleep', option: { duration: 3500 } },
        { type: 'hangup' },
      ]);
    }

    /** The customer's one call once hung up, and its activeflow once ended. */
    async function finished(cid: string) {
      const db = await testDb();
      const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'hangup');
      const af = await endedActiveflow(call.activeflow_id);
      return { call, af };
    }

    /** sipp offers PCMA (its shipped audio pcap is A-law): menu heard first, then digit, then the caller talks. */
    function ivrScenario(number: string, rtpPort: number, digitPcap: string): string {
      // the menu plays to the sink in the SDP until sipp's first packet moves it (symmetric RTP)
      const steps = [
        '<pause milliseconds="3500"/>',
        `<nop><action><exec play_pcap_audio="${SIPP_DIR}/${digitPcap}"/></action></nop>`,
        '<pause milliseconds="1800"/>',
        `<nop><action><exec play_pcap_audio="${SIPP_DIR}/g711a.pcap"/></action></nop>`,
      ].join('\n');
      return uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', rtpPort, { steps }).replace('RTP/AVP 0 101', 'RTP/AVP 8 101').replace('a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000');
    }

    it('menu → digit 5 → branch → HTTP prompt → recording of the caller → hangup', async () => {
      const cid = await ivrNumber(numbers + '01');
      const channels = p.switch?.sw.esl.sessions.sinceStartup ?? 0;
      const sink = await RtpSink.open();
      try {
        const r = await sipp(
          ivrScenario(numbers + '01', sink.port, 'dtmf_2833_5.pcap'),
          [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
          { killAfterMs: 40_000 },
        ).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
        // the menu was spoken (PCMA toward the SDP address, before sipp's own RTP latched the stream)
        expect(sink.voiced, `levels ${sink.levels.slice(0, 60).map(Math.round).join(',')}`).to.be.greaterThan(25);
      } finally {
        sink.close();
      }
      const db = await testDb();
      const { call, af } = await finished(cid);
      // the call ran on the backend named: on fsmrf its leg was a channel of the switch, and media-app has no engine
      if (backend === 'fsmrf') {
        expect(p.app.engine).to.equal(null);
        expect((p.switch?.sw.esl.sessions.sinceStartup ?? 0) - channels, "the call's leg is a channel of the switch").to.equal(1);
      } else expect(p.switch).to.equal(null);
      // branch read the digit and reset svc.call.digits (voipbin), so the path is the evidence
      expect(af.variables['svc.call.digits']).to.equal('');
      const path_ = (af.executed_actions as { id: string; type: string }[]).map((a) => a.type);
      expect(path_).to.deep.equal(['answer', 'talk', 'digits_receive', 'branch', 'play', 'recording_start', 'sleep', 'hangup']);
      expect(promptFetches).to.be.greaterThan(0);
      // the recording holds the caller: sipp's G.711 pcap audio, not silence
      const rec = await until(async () => (await db('recordings').where({ reference_id: call.id, status: 'ended' }))[0], 10_000, 'recording ended');
      const wav = readWav(path.join(p.config.dataDir, 'recordings', rec.filenames[0]));
      expect(wav.rate).to.equal(8000);
      expect(wav.samples.length / 8000).to.be.within(2, 3.5);
      expect(rms(wav.samples), 'caller audio in the recording').to.be.greaterThan(200);
      // and the API lists it for the customer (GET /v1.0/recordings), as on any backend
      const api = await buildTestApp();
      try {
        const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'ivr' });
        const list = await request(api.app).get('/v1.0/recordings').query({ accesskey: token });
        expect(list.status).to.equal(200);
        expect(list.body.result.map((x: { id: string }) => x.id)).to.include(rec.id);
      } finally {
        await api.close();
      }
    });

    it('another digit takes the default branch and never fetches the sales prompt', async () => {
      const cid = await ivrNumber(numbers + '02');
      const before = promptFetches;
      const sink = await RtpSink.open();
      try {
        const scenario = ivrScenario(numbers + '02', sink.port, 'dtmf_2833_9.pcap').replace(/<pause milliseconds="1800"\/>\n<nop>.*g711a.*\n/, '');
        const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 }).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
      } finally {
        sink.close();
      }
      const db = await testDb();
      const { call, af } = await finished(cid);
      expect(af.variables['svc.call.digits']).to.equal('');
      expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['answer', 'talk', 'digits_receive', 'branch', 'talk', 'hangup']);
      expect(promptFetches).to.equal(before);
      expect(await db('recordings').where({ reference_id: call.id })).to.have.length(0);
    });

    if (backend === 'fsmrf')
      it('ai_talk fails its action with a reason naming the fsmrf backend (the AI voice path needs the engine), and the call ends', async () => {
        const cid = await numberWithFlow(numbers + '05', [
          { type: 'answer' },
          { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: '1a000000-0000-4000-8000-0000000000a1', duration: 10 } },
          { type: 'hangup' },
        ]);
        const sink = await RtpSink.open();
        try {
          const r = await sipp(uacWaitsForBye(`${numbers}05@127.0.0.1:${p.sipPort}`, 'pbx', sink.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 30_000 }).done;
          expect(r.code, r.errors + r.messages).to.equal(0);
        } finally {
          sink.close();
        }
        const { af } = await finished(cid);
        expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['answer', 'ai_talk']);
        expect(JSON.stringify(af)).to.include('ai_talk (the AI voice path) is not available on the fsmrf media backend');
        expect(await (await testDb())('aicalls').where({ reference_id: af.reference_id }), 'no AI call was started').to.have.length(0);
      });

    it('a play URL that a variable turned into a local path is refused at run time, and the call still ends', async () => {
      const cid = await numberWithFlow(numbers + '03', [
        { type: 'answer' },
        { type: 'variable_set', option: { key: 'prompt', value: path.join(p.config.dataDir, 'recordings', 'someone-else.wav') } },
        { type: 'play', option: { stream_urls: ['${prompt}'] } },
        { type: 'talk', option: { text: 'never reached', language: 'en-US' } },
      ]);
      const sink = await RtpSink.open();
      try {
        const r = await sipp(uacWaitsForBye(`${numbers}03@127.0.0.1:${p.sipPort}`, 'pbx', sink.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 30_000 }).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
      } finally {
        sink.close();
      }
      const { af } = await finished(cid);
      expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['answer', 'variable_set', 'play']);
      expect(JSON.stringify(af)).to.match(/not an http or https URL/);
    });

    it("a connect's hold_music URL that a variable turned into a local path is refused before anything is dialled", async () => {
      const cid = await numberWithFlow(numbers + '04', [
        { type: 'answer' },
        { type: 'variable_set', option: { key: 'moh', value: path.join(p.config.dataDir, 'recordings', 'someone-else.wav') } },
        { type: 'connect', option: { destinations: [{ type: 'sip', target: 'nobody@127.0.0.1:9' }], hold_music: { url: '${moh}' } } },
        { type: 'talk', option: { text: 'never reached', language: 'en-US' } },
      ]);
      const sink = await RtpSink.open();
      try {
        const r = await sipp(uacWaitsForBye(`${numbers}04@127.0.0.1:${p.sipPort}`, 'pbx', sink.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 30_000 }).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
      } finally {
        sink.close();
      }
      const { af } = await finished(cid);
      expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['answer', 'variable_set', 'connect']);
      expect(JSON.stringify(af)).to.match(/hold_music\.url is not an http or https URL/);
      expect(await (await testDb())('calls').where({ customer_id: cid, direction: 'outgoing' }), 'no leg dialled').to.have.length(0);
    });
  });
