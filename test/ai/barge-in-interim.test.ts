// Barge-in on the first evidence (docs/ai.md "Turn-taking", "Interruptions"): sipp calls a number
// whose flow runs ai_talk with Deepgram (its phrase stand-in: interims as the words are recognised,
// 100 ms latency; finals after `endpointing` = the AI's min_endpointing_delay_ms, 400 ms); the
// caller asks for a story and, over the agent's reply, says "Stop." (cut), "Okay." (a backchannel:
// the agent goes on) and "Wait." (cut). A stop word in an interim cuts the agent at once: its last
// audio reaches the phone within 200 ms of the end of the word, where waiting for the final took
// the endpointing and the latency on top (≥ 500 ms).
import { expect } from 'chai';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { turnCall, useDeepgramTurnStack, type TurnCall } from '../../testkit/ai/turn-calls';

const KEY = 'dg-barge-key';
const STORY = 'Here is a story for you. This is the first sentence of it. This is the second sentence of it. And this is the last sentence of the story.';
const OTHER = { speed: 150, pitch: 70 };

describe('ai_talk: a stop word in an interim transcript cuts the agent at once', function () {
  this.timeout(200_000);
  let p: Platform;
  let llm: LlmServer;
  let call: TurnCall;

  useDeepgramTurnStack(
    KEY,
    ['tell me a story', 'okay', 'stop', 'wait'],
    { respond: (req) => ({ text: lastUser(req).includes('story') ? STORY : '' }), firstChunkDelayMs: 150 },
    (x) => ({ p, llm } = x),
  );
  /** The call of the suite: placed once before it, and again by a retry of the timed test (whose figures it measures). */
  const place = () =>
    turnCall(p, {
      llmUrl: llm.url,
      numberPrefix: '89917',
      seconds: 32,
      parameter: { stt_phrases: ['tell me a story', 'okay', 'stop', 'wait'], min_endpointing_delay_ms: 400 },
      script: [
        { text: 'Tell me a story.', atMs: 1000 },
        { text: 'Stop.', atMs: 5500, voice: OTHER },
        { text: 'Tell me a story.', atMs: 9000 },
        { text: 'Okay.', atMs: 13_500, voice: OTHER },
        { text: 'Tell me a story.', atMs: 20_500 },
        { text: 'Wait.', atMs: 25_000, voice: OTHER },
      ],
    });
  before(async () => {
    call = await place();
  });

  /** The end of the interjection `i` → the agent's last voiced packet before the next question. */
  const cutDelay = (i: number): number => {
    const end = call.said[i]!.endedAt!;
    const next = call.said[i + 1]?.startedAt ?? Infinity;
    const last = call.voiced.filter((v) => v > end - 3000 && v < next).at(-1)!;
    return last - end;
  };
  const replies = () => call.messages.filter((m) => m.role === 'assistant' && m.content.startsWith('Here is'));

  // a wall-clock bound of real-time media: the test run keeps this file in its real-time lane (the times
  // table's "realtime" list), alone after the pool, where no other mocha process shares the machine
  it('"Stop." and "Wait." over the reply: the agent\'s audio ends within 200 ms of the word', () => {
    const stop = cutDelay(1);
    const wait = cutDelay(5);
    expect(stop, `stop → last agent audio, ${JSON.stringify(call.messages.map((m) => [m.role, m.content, m.metadata.latency?.interrupted]))}`).to.be.below(200);
    expect(wait, 'wait → last agent audio').to.be.below(200);
  });

  it('the cut replies are recorded as interrupted and the stop words are the next turns', () => {
    const r = replies();
    expect(r.length, JSON.stringify(call.messages)).to.equal(3);
    expect(r.map((m) => m.metadata.latency?.interrupted)).to.deep.equal([true, false, true]);
    const users = call.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users).to.deep.equal(['tell me a story', 'stop', 'tell me a story', 'tell me a story', 'wait']);
  });

  it('"Okay." over the reply is a backchannel: the agent speaks on, the whole story', () => {
    const okEnd = call.said[3]!.endedAt!;
    const after = call.voiced.filter((v) => v > okEnd && v < call.said[4]!.startedAt!);
    // the rest of the reply (several seconds of it) after the backchannel
    expect(after.length * 20, 'ms of agent audio after "okay"').to.be.above(1500);
  });
});
