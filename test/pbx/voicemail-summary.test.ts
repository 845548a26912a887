// The optional AI summary of a voicemail message: a sipp caller speaks a message (espeak-ng speech
// in its RTP) into a box with `ai_summary` on; the platform's STT transcribes it, the platform's LLM
// (the OpenAI-compatible stand-in on loopback, reached through the egress policy) summarises the
// transcript, and the summary is on the message (REST, voicemail_message_updated) and in the mail,
// sent after it. When the LLM fails, the message stays with its transcript, no summary, and
// `summary_error` (event and log) says why. A box without ai_summary asks the LLM nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { testDb } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { buildTestApp, type TestApp } from '../../testkit/api';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { eventsFor, killAllSipp, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { callerPcap, speechPcm, ToneSink } from '../../testkit/pbx/audio';
import { extensionWithBox, numberWithFlow, pbxCustomer } from '../../testkit/pbx/voicemail';
import { repos } from '../../core/repos';
import { mailText, startSmtpReceiver, type SmtpReceiver } from '../support/smtp';

const SUMMARY = 'John asks to be called back about the invoice tomorrow.';

describe('voicemail: the optional AI summary of a message', function () {
  this.timeout(180_000);
  let p: Platform;
  let t: TestApp;
  let llm: LlmServer;
  let smtp: SmtpReceiver;
  let dir: string;
  let llmStatus = 0;
  let speech: Int16Array;

  before(async () => {
    llm = await startLlmServer({ respond: () => (llmStatus ? { status: llmStatus } : { text: ` ${SUMMARY} ` }) });
    process.env.AI_LLM_BASE_URL = llm.url;
    smtp = await startSmtpReceiver();
    // the LLM stand-in is on loopback: opened explicitly, as an operator would for a local LLM
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SMTP_URL: smtp.url, MAIL_FROM: 'voicemail@example.test' });
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vm-summary-'));
    speech = speechPcm('Hello, this is John. Please call me back about the invoice tomorrow morning. Thank you.');
  });
  after(async () => {
    delete process.env.AI_LLM_BASE_URL;
    killAllSipp();
    await t?.close();
    await p?.close();
    await smtp?.close();
    await llm?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A box (number `n`) with the settings put through REST, a number whose flow leaves a message in it, and a sipp caller speaking one. */
  async function leaveMessage(n: string, settings: Record<string, unknown>) {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'vm-summary' });
    const { box } = await extensionWithBox(cid, { number: n, pin: '2468', greeting_text: 'Leave it.' });
    const put = await request(t.app).put(`/v1.0/voicemail_boxes/${box.id}`).query({ accesskey: token }).send(settings);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const number = `+8991000047${n.slice(-2)}`;
    await numberWithFlow(cid, number, [{ type: 'voicemail', option: { box_id: box.id } }, { type: 'hangup' }]);
    const speechMs = Math.ceil(speech.length / 8);
    const pcap = callerPcap(path.join(dir, `${n}.pcap`), 4000 + speechMs + 1500, [
      { atMs: 3500, pcm: speech },
      { atMs: 3500 + speechMs + 800, digit: '#' },
    ]);
    const sink = await ToneSink.open();
    try {
      const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
      const r = await sipp(
        uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, '15557654399', sink.port, { steps, byeTimeoutMs: 40_000 }),
        [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
        { killAfterMs: 60_000 },
      ).done;
      expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
    } finally {
      sink.close();
    }
    const m = await until(async () => (await db('voicemail_messages').where({ box_id: box.id }))[0], 10_000, 'message stored');
    const api = (url: string) => request(t.app).get(`/v1.0${url}`).query({ accesskey: token });
    return { db, box, m, api, token };
  }

  /** Waits for a voicemail_message_updated event of message `id` whose data passes `test`. */
  function updateEvent(id: string, test: (d: { summary?: string; summary_error?: string }) => boolean, what: string) {
    return until(async () => (await eventsFor(p.redis, id)).find((e) => e.event_type === 'voicemail_message_updated' && test(e.data as { summary?: string; summary_error?: string })), 10_000, what);
  }

  /** The message as the API shows it once the summary step is done (a summary or its error). */
  function summaryDone(api: (path: string) => Promise<{ body: Record<string, string> }>, id: string) {
    return until(
      async () => {
        const r = await api(`/voicemail_messages/${id}`);
        return r.body.summary || r.body.summary_error ? r.body : null;
      },
      90_000,
      'the summary step done',
    );
  }

  it('summarises the transcript: on the message (REST, event) and in the mail sent after it', async () => {
    llmStatus = 0;
    const before = llm.requests.length;
    const { m, api } = await leaveMessage('4701', { ai_summary: true, email: 'owner@example.test' });
    const got = await summaryDone(api, m.id);
    expect(got.summary_error).to.equal('');
    expect(got.summary).to.equal(SUMMARY);
    expect(got.transcript.length, 'the STT transcript').to.be.greaterThan(0);
    // the LLM was asked once, with the transcript
    const asked = llm.requests.slice(before);
    expect(asked).to.have.length(1);
    expect(asked[0]!.messages.find((x) => x.role === 'user')?.content).to.include(got.transcript);
    // the row is written before its event is published: wait for the event, not a read of the moment
    await updateEvent(m.id, (d) => d.summary === SUMMARY, 'voicemail_message_updated with the summary');
    const mail = await until(() => smtp.received.find((x) => x.to.includes('owner@example.test')), 15_000, 'the mail');
    expect(mailText(mail)).to.include(`Summary: ${SUMMARY}`);
  });

  it('the LLM failing: the message stays with its transcript, no summary, summary_error says why', async () => {
    llmStatus = 500;
    const { m, api } = await leaveMessage('4702', { ai_summary: true });
    const got = await summaryDone(api, m.id);
    expect(got.summary).to.equal('');
    expect(got.summary_error).to.match(/500/);
    expect(got.folder).to.equal('new');
    expect(got.transcript.length).to.be.greaterThan(0);
    await updateEvent(m.id, (d) => /500/.test(d.summary_error ?? ''), 'the event says why');
  });

  it('a box without ai_summary asks the LLM nothing; a bad ai_summary is 400 and changes nothing', async () => {
    llmStatus = 0;
    const before = llm.requests.length;
    const { m, api, box, token } = await leaveMessage('4703', {});
    await until(async () => ((await api(`/voicemail_messages/${m.id}`)).body.transcript ? true : null), 90_000, 'the transcript');
    const got = (await api(`/voicemail_messages/${m.id}`)).body;
    expect(got).to.include({ summary: '', summary_error: '' });
    expect(llm.requests.length).to.equal(before);
    expect((await api(`/voicemail_boxes/${box.id}`)).body.ai_summary).to.equal(false);
    const bad = await request(t.app).put(`/v1.0/voicemail_boxes/${box.id}`).query({ accesskey: token }).send({ ai_summary: 'yes' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details[0].field).to.equal('ai_summary');
    expect((await api(`/voicemail_boxes/${box.id}`)).body.ai_summary).to.equal(false);
  });
});
