// A speech-to-speech session that ends while its link still has messages it received and has not reported:
// Deepgram's link takes its messages one after the other through a queue (binary audio is read
// asynchronously), so a ConversationText that arrived just before the hang-up waited there, and the
// session's end closed the link first: the agent's last words never reached the transcript. Now the
// session's end drains what the link already received (bounded: LINK_DRAIN_MAX_MESSAGES, LINK_DRAIN_MAX_MS)
// into the transcript before closing. A real endpoint, the real Deepgram link against its loopback stand-in;
// the session is ended inside the very socket event that brought the words, so they are always still queued.
// Gemini's link gathers transcript pieces until a turn completes: a session ending mid-turn recorded none of
// the model's words; now they are given as it ends (ModelLink.drain), cut. OpenAI's link reports each whole
// transcript as its event comes: one that arrives as the session ends is recorded (a guard).
import fs from 'node:fs';
import { expect } from 'chai';
import type WebSocket from 'ws';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import type { Endpoint } from '../../media-engine';
import { RealtimeAgent } from '../../media-app/ai/realtime';
import type { AiSession } from '../../core/ai/session';
import type { ModelLink } from '../../media-app/ai/s2s/link';
import { DeepgramAgentLink } from '../../media-app/ai/s2s/deepgram';
import { startDeepgramAgentServer, type DeepgramAgentServer } from '../../testkit/ai/deepgram-agent-server';
import { GeminiLiveLink } from '../../media-app/ai/s2s/gemini';
import { startGeminiLiveServer, type GeminiLiveServer } from '../../testkit/ai/gemini-live-server';
import { usePcmuLeg } from '../../testkit/media-engine/support';
import { OpenAiRealtimeLink } from '../../media-app/ai/s2s/openai';
import { startRealtimeServer, type RealtimeServer } from '../../testkit/ai/realtime-server';
import { bounded } from '../../testkit/bounded';

const KEY = 'dg-drain-key-0123456789';
const GREETING = 'Hello, Acme Bikes, how can I help?';
const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));

/**
 * A session on `link` that is ended inside the socket event `endsOn` picks: `socketOf` gives the link's socket once
 * started (its own listener is first, so the link has taken the message when the session ends). Checks that the
 * session ends as aborted; gives what it recorded (words, turns' latencies) and whether the message came.
 */
async function endedOnMessage(ep: Endpoint, link: ModelLink, socketOf: () => WebSocket, endsOn: (data: WebSocket.RawData, isBinary: boolean) => boolean) {
  const spoken: { role: string; text: string }[] = [];
  const turns: unknown[] = [];
  const session = {
    currentAi: { id: 'ai-1' },
    realtimeSetup: () => ({ instructions: 'You take orders.', tools: [] }),
    recordSpoken: async (role: string, text: string) => {
      spoken.push({ role, text });
      return { id: `m-${spoken.length}` };
    },
    recordTurn: async (_ids: string[], latency: unknown) => void turns.push(latency),
  } as unknown as AiSession;
  const ac = new AbortController();
  const agent = new RealtimeAgent(ep, session, link, { maxDurationMs: 15_000 });
  await agent.start(ac.signal);
  let ended = false;
  socketOf().on('message', (data, isBinary) => {
    if (ended || !endsOn(data, isBinary)) return;
    ended = true;
    ac.abort();
  });
  expect(await bounded(agent.done, 5000, 'the session ends')).to.deep.equal({ kind: 'aborted' });
  return { ended, spoken, turns };
}

describe('ai: a speech-to-speech session ending with messages still in its link (Deepgram)', function () {
  this.timeout(20_000);
  let dg: DeepgramAgentServer;
  let ep: Endpoint;
  usePcmuLeg((e) => (ep = e));
  before(async () => {
    dg = await startDeepgramAgentServer(KEY, { greeting: { say: GREETING, ms: 400 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null });
    // the greeting's words come at once, its audio never within the test: they stay held for it
    dg.latencyMs = 60_000;
  });
  after(async () => {
    await dg.close();
  });

  it('the words that arrived just before the end are recorded (cut: none of their audio played)', async () => {
    const link = new DeepgramAgentLink({ model: 'gpt-4o-mini', baseUrl: dg.url, apiKey: KEY, voice: '', language: 'en-US', egress, greeting: GREETING });
    // the session ends as the greeting's words arrive
    const { ended, spoken, turns } = await endedOnMessage(
      ep,
      link,
      () => (link as unknown as { ws: WebSocket }).ws,
      (data, isBinary) => {
        if (isBinary) return false;
        const m = JSON.parse(String(data)) as { type?: string; role?: string };
        return m.type === 'ConversationText' && m.role === 'assistant';
      },
    );
    expect(ended, 'the words came').to.equal(true);
    expect(spoken).to.deep.equal([{ role: 'assistant', text: GREETING }]);
    expect(turns).to.have.length(1);
    expect(turns[0]).to.include({ first_rtp_ms: null, interrupted: true });
  });
});

describe('ai: a speech-to-speech session ending while its link gathers words (Gemini Live)', function () {
  this.timeout(20_000);
  let gm: GeminiLiveServer;
  let ep: Endpoint;
  usePcmuLeg((e) => (ep = e));
  const SAY = 'Hello there from Acme Bikes, what can we do for you today?';
  before(async () => {
    // 4 s of greeting sent over about 1 s, its words transcribed in step with the audio
    gm = await startGeminiLiveServer(KEY, { greeting: { say: SAY, ms: 4000 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null });
  });
  after(async () => {
    await gm.close();
  });

  it("the model's words of a turn the end cut are recorded (cut)", async () => {
    const link = new GeminiLiveLink({ model: 'gemini-2.5-flash', baseUrl: gm.url, apiKey: KEY, voice: '', language: 'en-US', egress });
    // the session ends as the greeting's first words arrive
    let first = '';
    const { spoken, turns } = await endedOnMessage(
      ep,
      link,
      () => (link as unknown as { ws: WebSocket }).ws,
      (data) => {
        const m = JSON.parse(String(data)) as { serverContent?: { outputTranscription?: { text?: string } } };
        first = m.serverContent?.outputTranscription?.text ?? '';
        return first !== '';
      },
    );
    expect(first, 'words came').to.not.equal('');
    expect(SAY.startsWith(first)).to.equal(true);
    expect(spoken).to.deep.equal([{ role: 'assistant', text: first }]);
    expect(turns).to.have.length(1);
    expect(turns[0]).to.include({ interrupted: true });
  });
});

describe('ai: a speech-to-speech session ending as a transcript arrives (OpenAI Realtime)', function () {
  this.timeout(20_000);
  let rt: RealtimeServer;
  let ep: Endpoint;
  usePcmuLeg((e) => (ep = e));
  const SAY = 'Hello, how can I help?';
  before(async () => {
    rt = await startRealtimeServer(KEY, { greeting: { say: SAY, ms: 400 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null });
  });
  after(async () => {
    await rt.close();
  });

  it("the model's transcript that came with the end is recorded", async () => {
    const link = new OpenAiRealtimeLink({ model: 'gpt-realtime', baseUrl: rt.url, apiKey: KEY, voice: '', language: 'en-US', egress, ca: fs.readFileSync(rt.cert.certPath) });
    // the SDK's socket: the session ends as the greeting's transcript arrives
    const { ended, spoken } = await endedOnMessage(
      ep,
      link,
      () => (link as unknown as { rt: { socket: WebSocket } }).rt.socket,
      (data) => (JSON.parse(String(data)) as { type?: string }).type === 'response.output_audio_transcript.done',
    );
    expect(ended, 'the transcript came').to.equal(true);
    expect(spoken).to.deep.equal([{ role: 'assistant', text: SAY }]);
  });
});
