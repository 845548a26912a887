// The agent silenced while the caller talks over it (docs/ai.md "Turn-taking", "Interruptions"):
// sipp calls a number whose flow runs ai_talk (Silero VAD, the Deepgram phrase stand-in, 400 ms
// endpointing, 100 ms latency) with `min_interruption_duration_ms` 300; over the agent's long reply
// the caller says "Okay, yeah, right." (about a second of backchannels). Past 300 ms of it the
// agent goes silent at the phone (within a second of their start) and stays silent while they go on;
// once the final says backchannel the agent is heard again, its
// reply not cut. With 0 (never) the agent talks on through it.
import { expect } from 'chai';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { turnCall, useDeepgramTurnStack, type TurnCall } from '../../testkit/ai/turn-calls';

const KEY = 'dg-duck-key';
const PHRASES = ['tell me a story', 'okay yeah right'];
const STORY =
  'Here is a long story for you. This is the first sentence of it and it goes on for a while. This is the second sentence of it and it also goes on. And this is the last sentence of the story.';

describe('ai_talk: sustained caller speech over the agent silences it until the words decide', function () {
  this.timeout(200_000);
  let p: Platform;
  let llm: LlmServer;

  useDeepgramTurnStack(KEY, PHRASES, { respond: (req) => ({ text: lastUser(req).includes('story') ? STORY : '' }) }, (x) => ({ p, llm } = x));

  const backchannelCall = (minInterruptionMs: number, before: Record<string, unknown>[] = []): Promise<TurnCall> =>
    turnCall(p, {
      llmUrl: llm.url,
      numberPrefix: before.length ? '89922' : minInterruptionMs ? '89920' : '89921',
      before,
      seconds: 16,
      parameter: { stt_phrases: PHRASES, min_endpointing_delay_ms: 400, min_interruption_duration_ms: minInterruptionMs },
      script: [
        { text: 'Tell me a story.', atMs: 1000 },
        { text: 'Okay, yeah, right.', atMs: 5000, voice: { speed: 150, pitch: 70 } },
      ],
    });
  /** ms of the agent's voiced audio at the phone in [from, to) */
  const voicedMs = (c: TurnCall, from: number, to: number) => c.voiced.filter((v) => v >= from && v < to).length * 20;

  it('past 300 ms of "Okay, yeah, right." the agent is silent; after the final it is heard again, not cut', async () => {
    const c = await backchannelCall(300);
    const b = c.said[1]!;
    expect(b.endedAt! - b.startedAt!, 'the backchannels last long enough').to.be.above(800);
    // silent once 300 ms of the words were heard (+ the VAD's window and the mute's way to the phone), to
    // their end: the agent's last audio while they went on. How soon is the benchmark's to measure
    // (scripts/bench/ai/turn-taking.ts, docs/benchmarks.md); here within a second, on a loaded machine too
    const during = c.voiced.filter((v) => v >= b.startedAt! && v < b.endedAt!);
    const silentFrom = Math.max(b.startedAt! + 300, ...during.map((v) => v + 20)) - b.startedAt!;
    const info = JSON.stringify({
      words: b.endedAt! - b.startedAt!,
      agent: during.map((v) => Math.round(v - b.startedAt!)),
      messages: c.messages.map((m) => [m.role, m.content.slice(0, 30), m.metadata.latency?.interrupted]),
    });
    expect(silentFrom, `the agent's last audio while the caller went on, ms after the words began: ${info}`).to.be.below(1000);
    expect(b.endedAt! - b.startedAt! - silentFrom, `silent for the rest of the words: ${info}`).to.be.at.least(300);
    // heard again after the final (400 ms endpointing + 100 ms latency)
    const after = JSON.stringify({
      wordsEnded: Math.round(b.endedAt!),
      voiced: c.voiced.filter((v) => v >= b.startedAt!).map(Math.round),
      messages: c.messages.map((m) => [m.role, m.content.slice(0, 30), m.metadata.latency?.interrupted]),
    });
    expect(voicedMs(c, b.endedAt! + 600, b.endedAt! + 3000), `agent audio after the final: ${after}`).to.be.above(800);
    const reply = c.messages.find((m) => m.role === 'assistant' && m.content === STORY);
    expect(reply?.metadata.latency?.interrupted, JSON.stringify(c.messages)).to.equal(false);
    expect(c.messages.filter((m) => m.role === 'user').map((m) => m.content)).to.deep.equal(['tell me a story']);
  });

  it('with min_interruption_duration_ms 0 the agent talks on through the backchannels', async () => {
    const c = await backchannelCall(0);
    const b = c.said[1]!;
    const info = JSON.stringify({
      said: c.said.map((u) => [u.startedAt, u.endedAt]),
      voiced: c.voiced.filter((_, i) => i % 10 === 0).map(Math.round),
      messages: c.messages.map((m) => [m.role, m.content.slice(0, 20)]),
    });
    expect(voicedMs(c, b.startedAt! + 500, b.endedAt!), `agent audio while the caller went on ${info}`).to.be.above(200);
  });

  it("a call muted 'out' by its flow stays silent: the agent's silencing ends without undoing the flow's mute", async () => {
    const c = await backchannelCall(300, [{ type: 'mute', option: { direction: 'out' } }]);
    const b = c.said[1]!;
    expect(b.endedAt, 'the backchannels were said').to.not.equal(null);
    expect(
      c.messages.find((m) => m.role === 'assistant' && m.content === STORY),
      'the agent replied',
    ).to.not.equal(undefined);
    expect(voicedMs(c, 0, Number.MAX_VALUE), 'agent audio at a phone muted out').to.equal(0);
  });
});
