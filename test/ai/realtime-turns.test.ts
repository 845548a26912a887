// A speech-to-speech reply's latency (media-app/ai/realtime-turns.ts, docs/ai.md "Speech-to-speech"):
// the openings, the model's audio and its playing given with explicit times.
import { expect } from 'chai';
import { RealtimeTurns } from '../../media-app/ai/realtime-turns';

describe('ai_talk speech-to-speech: each reply timed from the caller speech end (or the greeting ask)', () => {
  it('the greeting from its ask; an answer from the speech end through the end of turn, the model audio and its playing', async () => {
    const t = new RealtimeTurns();
    t.asked(1000);
    t.modelAudio('g', 1300);
    t.played('g', 1320);
    expect(await t.latencyOf('g', false)).to.deep.equal({ end_of_turn_wait_ms: null, model_first_audio_ms: 300, first_rtp_ms: 320, interrupted: false });
    t.callerEnded(5000, 5600);
    t.modelAudio('a', 5900);
    // later audio of the same item changes nothing
    t.modelAudio('a', 6000);
    t.played('a', 6100);
    t.played('a', 6200);
    expect(await t.latencyOf('a', false)).to.deep.equal({ end_of_turn_wait_ms: 600, model_first_audio_ms: 900, first_rtp_ms: 1100, interrupted: false });
  });

  it('words wait for the first audio to play; a reply cut before it played has no first_rtp_ms', async () => {
    const t = new RealtimeTurns();
    t.callerEnded(0, 500);
    t.modelAudio('a', 700);
    let done = false;
    const latency = t.latencyOf('a', true).then((j) => ((done = true), j));
    await new Promise((r) => setImmediate(r));
    expect(done).to.equal(false);
    t.played('a', null);
    expect(await latency).to.deep.equal({ end_of_turn_wait_ms: 500, model_first_audio_ms: 700, first_rtp_ms: null, interrupted: true });
  });

  it('the session ending releases a reply still waiting for its audio', async () => {
    const t = new RealtimeTurns();
    t.asked(0);
    t.modelAudio('g', 100);
    const latency = t.latencyOf('g', false);
    t.close();
    expect((await latency)!.first_rtp_ms).to.equal(null);
  });

  it('a link naming no item: the last audio item; audio after no opening is not measured (a vendor that reports no turn end)', async () => {
    const t = new RealtimeTurns();
    t.asked(0);
    t.modelAudio('g', 200);
    t.played('g', 250);
    expect((await t.latencyOf(undefined, false))!.first_rtp_ms).to.equal(250);
    t.modelAudio('next', 9000);
    t.played('next', 9010);
    expect(await t.latencyOf(undefined, false)).to.equal(null);
  });

  it('a vendor that places the speech end but not its decision (Gemini, Deepgram): no end_of_turn_wait_ms, the rest from the speech end', async () => {
    const t = new RealtimeTurns();
    t.callerEndedUndecided(2000, 2700);
    t.modelAudio('a', 2700);
    t.played('a', 2750);
    expect(await t.latencyOf('a', false)).to.deep.equal({ end_of_turn_wait_ms: null, model_first_audio_ms: 700, first_rtp_ms: 750, interrupted: false });
  });

  it('words with no audio answer the opening still waiting', async () => {
    const t = new RealtimeTurns();
    t.callerEnded(100, 600);
    expect(await t.latencyOf('x', false)).to.deep.equal({ end_of_turn_wait_ms: 500, model_first_audio_ms: null, first_rtp_ms: null, interrupted: false });
    expect(await t.latencyOf('y', false)).to.equal(null);
  });
});
