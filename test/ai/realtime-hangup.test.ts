// A speech-to-speech session whose caller hangs up while the link is still connecting (issue 52: a
// soak under load ended media-app). The session listened for the endpoint's end only once connected,
// so a hang-up during the connect was never seen: the session stayed up, and the model's greeting then
// opened an 'out' fork on the destroyed endpoint, a rejection nobody caught, which ends the process.
// Now the session ends as a hang-up once connected, says nothing, and no rejection goes unhandled.
// A real endpoint, the real OpenAI link against its loopback stand-in; the connect is held at a gate
// so the hang-up lands inside it every time.
import fs from 'node:fs';
import { expect } from 'chai';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import type { Endpoint } from '../../media-engine';
import { RealtimeAgent } from '../../media-app/ai/realtime';
import type { AiSession } from '../../core/ai/session';
import type { LinkHost, LinkRate, LinkSetup, ModelLink } from '../../media-app/ai/s2s/link';
import { OpenAiRealtimeLink } from '../../media-app/ai/s2s/openai';
import { startRealtimeServer, type RealtimeServer } from '../../testkit/ai/realtime-server';
import { usePcmuLeg } from '../../testkit/media-engine/support';

const KEY = 'sk-hangup-key-0123456789';

/** The real link, its connect held until `open()`; `entered` resolves once the agent called it. */
function gatedLink(inner: ModelLink) {
  let entered: () => void = () => undefined;
  let open: () => void = () => undefined;
  const enteredP = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (open = r));
  const link: ModelLink = Object.assign(Object.create(inner) as ModelLink, {
    connect: async (rate: LinkRate, setup: LinkSetup, host: LinkHost, signal: AbortSignal) => {
      entered();
      await gate;
      return inner.connect(rate, setup, host, signal);
    },
  });
  return { link, entered: enteredP, open };
}

describe('ai: a speech-to-speech session whose caller hangs up while it connects', function () {
  this.timeout(20_000);
  let rt: RealtimeServer;
  let ep: Endpoint;
  usePcmuLeg((e) => (ep = e));
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  before(async () => {
    rt = await startRealtimeServer(KEY, { greeting: { say: 'Hello, how can I help?', ms: 400 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null });
    process.on('unhandledRejection', onUnhandled);
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await rt.close();
  });

  it('ends as a hang-up once connected, never greets, and leaves no rejection unhandled', async () => {
    const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
    const inner = new OpenAiRealtimeLink({ model: 'gpt-realtime', baseUrl: rt.url, apiKey: KEY, voice: '', language: 'en-US', egress, ca: fs.readFileSync(rt.cert.certPath) });
    const g = gatedLink(inner);
    // what RealtimeAgent reads of its session before the caller says anything
    const session = { currentAi: { id: 'ai-1' }, realtimeSetup: () => ({ instructions: 'You take orders.', tools: [] }), recordSpoken: async () => undefined } as unknown as AiSession;
    const agent = new RealtimeAgent(ep, session, g.link, { maxDurationMs: 15_000 });
    const started = agent.start(new AbortController().signal);
    await g.entered;
    await ep.destroy(); // the caller hung up
    g.open();
    await started;
    let timer: NodeJS.Timeout | undefined;
    try {
      const end = await Promise.race([agent.done, new Promise((r) => (timer = setTimeout(() => r('still running'), 3000)))]);
      expect(end).to.deep.equal({ kind: 'hangup' });
    } finally {
      clearTimeout(timer);
    }
    // the session's end closed the link: all it sent has arrived once the stand-in sees the close
    await rt.whenClosed(1);
    expect(
      rt.received.filter((e) => e.type === 'response.create'),
      'no greeting asked',
    ).to.have.length(0);
    expect(unhandled).to.deep.equal([]);
  });
});
