// A speech-to-speech session keeps the model's events in order (messages, then tool calls), and the
// reply's latency is attached once its first audio went out. Review finding: the latency was awaited
// inside the ordered chain, so a reply whose audio never played (every chunk empty, or its play failed)
// held back every later message and tool call, a hang-up tool included, until the session ended.
// A real endpoint on our engine; the link is a stand-in that hands the agent the events a vendor would.
import { expect } from 'chai';
import type { Endpoint } from '../../media-engine';
import { RealtimeAgent } from '../../media-app/ai/realtime';
import type { AiSession } from '../../core/ai/session';
import type { LinkHost, ModelLink } from '../../media-app/ai/s2s/link';
import { usePcmuLeg } from '../../testkit/media-engine/support';
import { until } from '../../testkit/media-app/harness';

/** The link's side: what a vendor's socket would deliver, handed to the agent's host by the test. */
function standInLink(): { link: ModelLink; host: () => LinkHost; results: unknown[] } {
  let host: LinkHost | null = null;
  const results: unknown[] = [];
  const link: ModelLink = {
    vendor: 'stand-in',
    legRate: false,
    connect: async (_rate, _setup, h) => {
      host = h;
    },
    sendAudio: () => undefined,
    greet: () => undefined,
    truncate: () => undefined,
    toolResults: (r) => results.push(r),
    close: () => undefined,
  };
  return { link, host: () => host!, results };
}

describe('ai: a speech-to-speech reply whose audio never plays holds back nothing after it', function () {
  this.timeout(20_000);
  let ep: Endpoint;
  usePcmuLeg((e) => (ep = e));

  it('a reply with only empty audio, then a tool call: the tool runs at once', async () => {
    const tools: string[] = [];
    const spoken: string[] = [];
    const session = {
      currentAi: { id: 'ai-1' },
      endRequest: null,
      realtimeSetup: () => ({ instructions: 'You take orders.', tools: [] }),
      recordSpoken: async (_role: string, text: string) => (spoken.push(text), { id: `m${spoken.length}` }),
      recordTurn: async () => undefined,
      callTool: async (c: { function: { name: string } }) => (tools.push(c.function.name), 'ok'),
    } as unknown as AiSession;
    const s = standInLink();
    const agent = new RealtimeAgent(ep, session, s.link, { maxDurationMs: 15_000 });
    await agent.start(new AbortController().signal);
    const host = s.host();
    host.audio('item-1', new Int16Array(0), 8000);
    host.said('One moment.', 'item-1');
    host.toolCalls([{ callId: 'c1', name: 'lookup_order', args: '{}' }]);
    await until(() => (tools.length ? true : null), 3000, 'the tool call run');
    expect(spoken).to.deep.equal(['One moment.']);
    expect(tools).to.deep.equal(['lookup_order']);
    expect(s.results).to.have.length(1);
    await ep.destroy();
    expect(await agent.done).to.deep.equal({ kind: 'hangup' });
  });
});
