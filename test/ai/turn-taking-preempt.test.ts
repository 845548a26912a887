// Preemptive generation (docs/ai.md "Turn-taking"): sipp calls a number whose flow runs ai_talk
// with Deepgram (its phrase stand-in: interims as the words are recognised, finals after
// `endpointing` = the AI's min_endpointing_delay_ms, 600 ms, 100 ms latency) and an LLM stand-in
// 400 ms to its first token. When the caller pauses after a finished sentence the LLM is asked
// before the end of the turn; the reply takes that answer when the final has the same words (its
// first token is then already there), and aborts it and asks again when the words went on.
import { expect } from 'chai';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { speechSamples } from '../../testkit/ai/echo-phone';
import { turnCall, useDeepgramTurnStack } from '../../testkit/ai/turn-calls';

const KEY = 'dg-preempt-key';
const PHRASES = ['tell me a story', 'tell me a story please'];
const STORY = 'Here is a story for you. It is a short one.';
const PLEASE = 'Since you asked so nicely, here is a story. It is a short one.';
const LLM_FIRST_TOKEN_MS = 400;

describe('ai_talk: the reply is asked for when the caller pauses after a finished sentence', function () {
  this.timeout(200_000);
  let p: Platform;
  let llm: LlmServer;

  useDeepgramTurnStack(
    KEY,
    PHRASES,
    {
      respond: (req) => {
        const u = lastUser(req);
        return { text: u.includes('please') ? PLEASE : u.includes('story') ? STORY : '' };
      },
      firstChunkDelayMs: LLM_FIRST_TOKEN_MS,
      chunkDelayMs: 100,
    },
    (x) => ({ p, llm } = x),
  );

  const parameter = { stt_phrases: PHRASES, min_endpointing_delay_ms: 600 };

  it('"Tell me a story." and silence: the answer asked during the pause is the one said and stored, once', async () => {
    const before = llm.requests.length;
    const call = await turnCall(p, { llmUrl: llm.url, numberPrefix: '89918', seconds: 9, parameter, script: [{ text: 'Tell me a story.', atMs: 1000 }] });
    const asked = llm.requests.slice(before).filter((r) => lastUser(r));
    expect(
      call.messages.map((m) => [m.role, m.content]),
      'one user turn, one reply',
    ).to.deep.equal([
      ['user', 'tell me a story'],
      ['assistant', STORY],
    ]);
    const latency = call.messages[1]!.metadata.latency!;
    // asked during the pause: its first token was there when the turn ended (before: the full 400 ms after it)
    expect(latency.preempted, JSON.stringify(latency)).to.equal(true);
    expect(latency.llm_first_token_ms, JSON.stringify(latency)).to.be.below(LLM_FIRST_TOKEN_MS / 2);
    // one request for the caller's words: taken, not asked again
    expect(asked.length).to.equal(1);
    expect(llm.aborted.filter((r) => lastUser(r))).to.have.length(0);
  });

  it('"Tell me a story" + a pause + "please": the early answer is aborted unsaid, and the whole turn asked again', async () => {
    const before = llm.requests.length;
    const abortedBefore = llm.aborted.length;
    const q = speechSamples('Tell me a story.').length / 8;
    const call = await turnCall(p, {
      llmUrl: llm.url,
      numberPrefix: '89919',
      seconds: 12,
      parameter,
      // a 350 ms pause: past the VAD's 200 ms pause, short of Deepgram's 600 ms endpointing
      script: [
        { text: 'Tell me a story.', atMs: 1000 },
        { text: 'Please.', atMs: 1000 + q + 350 },
      ],
    });
    const asked = llm.requests.slice(before).map(lastUser).filter(Boolean);
    expect(call.messages.map((m) => [m.role, m.content])).to.deep.equal([
      ['user', 'tell me a story please'],
      ['assistant', PLEASE],
    ]);
    expect(asked, 'asked ahead for the words so far, then for the whole turn').to.deep.equal(['tell me a story', 'tell me a story please']);
    // the stand-in saw the early request closed before its answer ended
    expect(llm.aborted.slice(abortedBefore).map(lastUser)).to.deep.equal(['tell me a story']);
    // (the second request may itself be asked ahead, in the pause after "please": either way it is the whole turn's)
  });
});
