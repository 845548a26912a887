// The voice agent's turn-taking as a move table (media-app/ai/voice-moves.ts, turn-judge.ts), driven
// on a virtual clock: the VAD's verdicts and the recogniser's words go in as events, the judge's
// states, the agent silenced (duck.ts, the real one) and the turns it hands on come out. No audio, no
// wall clock: each case runs in microseconds and always the same way.
import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import type { TranscriptEvent } from '../../media-engine';
import { TURN_DEFAULTS } from '../../core/ai/turns';
import { Ducking } from '../../media-app/ai/duck';
import { TurnJudge } from '../../media-app/ai/turn-judge';
import type { TurnTimes } from '../../media-app/ai/turn-latency';
import { canMoveVoice, VOICE_MOVES, VoiceMoveError, type VoiceState } from '../../media-app/ai/voice-moves';
import type { VoiceAgentEvents } from '../../media-app/ai/voice-types';
import { virtualTimers } from '../support/virtual-timers';

const START_MS = 200;

/** A judge on a virtual clock, with what it did recorded. */
function session(turns = TURN_DEFAULTS) {
  const clock = virtualTimers(1_000_000);
  const events = new EventEmitter<VoiceAgentEvents>();
  const states: VoiceState[] = [];
  const said: string[] = [];
  const ducked: boolean[] = [];
  const answers: { text: string; times: TurnTimes; at: number }[] = [];
  let cuts = 0;
  events.on('state', (to) => states.push(to));
  for (const e of ['turn_start', 'barge_in', 'turn_end'] as const) events.on(e, () => said.push(e));
  events.on('backchannel', (t) => said.push(`backchannel ${t}`));
  const duck = new Ducking(async (on) => void ducked.push(on), turns.minInterruptionMs, START_MS, clock);
  const judge = new TurnJudge(
    {
      events,
      duck,
      preempt: { paused: () => undefined, take: () => null, discard: () => undefined },
      cutReply: () => void cuts++,
      answer: (text, times) => void answers.push({ text, times, at: clock.now() }),
    },
    { turns, language: 'en-US', sttWaitMs: 4000 },
    clock,
  );
  const words = (text: string, final = true): TranscriptEvent => ({ text, final, offsetMs: 0, durationMs: 0, direction: 'inbound' });
  return { clock, judge, states, said, ducked, answers, words, cuts: () => cuts };
}

describe('voice agent: turn-taking as a move table on virtual time', () => {
  it('silence after a finished sentence: caller_turn → judging → the turn ends minDelayMs after the speech → thinking', () => {
    const s = session();
    s.judge.speechStarts();
    s.clock.advance(1500);
    s.judge.speechStops(null);
    expect(s.judge.state).to.equal('judging');
    s.judge.transcript(s.words('What are your opening hours?'), null);
    // the VAD dated the speech's end minDelayMs back: the turn ends at once after the words
    s.clock.advance(0);
    expect(s.answers.map((a) => a.text)).to.deep.equal(['What are your opening hours?']);
    expect(s.answers[0]!.times.rule).to.equal('complete');
    expect(s.judge.state).to.equal('listening');
    s.judge.agentIs('thinking', 'a reply is asked');
    expect(s.states).to.deep.equal(['caller_turn', 'judging', 'listening', 'thinking']);
    expect(s.said).to.deep.equal(['turn_start', 'turn_end']);
    expect(s.clock.pending()).to.equal(0);
  });

  it('a trailing word waits maxDelayMs; speech that resumes meanwhile cancels the judging state’s timer', () => {
    const s = session();
    s.judge.speechStarts();
    s.judge.transcript(s.words('I would like to book a table and'), null);
    s.judge.speechStops(s.clock.now());
    expect(s.clock.pending()).to.equal(1);
    s.clock.advance(1900);
    s.judge.speechStarts();
    // the end-of-turn wait was the judging state's: leaving it cancelled the timer
    expect(s.clock.pending()).to.equal(0);
    s.clock.advance(10_000);
    expect(s.answers).to.deep.equal([]);
    s.judge.transcript(s.words('for two'), null);
    s.judge.speechStops(s.clock.now());
    s.clock.advance(TURN_DEFAULTS.minDelayMs - 1);
    expect(s.answers).to.deep.equal([]);
    s.clock.advance(1);
    expect(s.answers.map((a) => a.text)).to.deep.equal(['I would like to book a table and for two']);
    expect(s.states).to.deep.equal(['caller_turn', 'judging', 'caller_turn', 'judging', 'listening']);
  });

  it('speech with no words: the turn ends empty sttWaitMs after the speech ended', () => {
    const s = session();
    s.judge.speechStarts();
    s.judge.speechStops(s.clock.now());
    s.clock.advance(3999);
    expect(s.answers).to.deep.equal([]);
    s.clock.advance(1);
    expect(s.answers.map((a) => [a.text, a.times.rule])).to.deep.equal([['', null]]);
  });

  it('the caller talks over the agent: overlap → the agent ducked after min_interruption → a stop word cuts it', () => {
    const s = session();
    s.judge.agentIs('thinking', 'a reply is asked');
    s.judge.agentIs('speaking', 'a sentence is said');
    s.judge.speechStarts();
    expect(s.judge.state).to.equal('overlap');
    // the VAD reports speech startMs after its onset: the mute comes min_interruption from the onset
    s.clock.advance(TURN_DEFAULTS.minInterruptionMs - START_MS - 1);
    expect(s.ducked).to.deep.equal([]);
    s.clock.advance(1);
    expect(s.ducked).to.deep.equal([true]);
    s.judge.transcript(s.words('stop', false), null);
    expect(s.cuts()).to.equal(1);
    expect(s.ducked).to.deep.equal([true, false]);
    s.judge.transcript(s.words('stop'), null);
    expect(s.judge.state).to.equal('caller_turn');
    s.judge.speechStops(s.clock.now());
    s.clock.advance(TURN_DEFAULTS.minDelayMs);
    expect(s.answers.map((a) => a.text)).to.deep.equal(['stop']);
    expect(s.states).to.deep.equal(['thinking', 'speaking', 'overlap', 'caller_turn', 'judging', 'listening']);
    expect(s.said).to.deep.equal(['turn_start', 'barge_in', 'turn_end']);
  });

  it('a backchannel over the agent: ducked, then heard again; the agent goes on and no turn is taken', () => {
    const s = session();
    s.judge.agentIs('thinking', 'a reply is asked');
    s.judge.agentIs('speaking', 'a sentence is said');
    s.judge.speechStarts();
    s.clock.advance(400);
    s.judge.speechStops(s.clock.now());
    expect(s.judge.state).to.equal('overlap_judging');
    // the words over the agent decide: no end-of-turn wait runs while it speaks
    expect(s.clock.pending()).to.equal(1);
    s.judge.transcript(s.words('mm-hm'), null);
    expect(s.ducked).to.deep.equal([true, false]);
    expect(s.judge.state).to.equal('speaking');
    expect(s.cuts()).to.equal(0);
    s.clock.advance(60_000);
    expect(s.answers).to.deep.equal([]);
    expect(s.said).to.deep.equal(['turn_start', 'backchannel mm-hm']);
    expect(s.clock.pending()).to.equal(0);
  });

  it('speech that stops before min_interruption ducks nothing; the caller going on while the agent thinks drops its answer', () => {
    const s = session();
    s.judge.agentIs('thinking', 'a reply is asked');
    s.judge.speechStarts();
    expect(s.cuts()).to.equal(1);
    expect(s.judge.state).to.equal('caller_turn');
    s.judge.speechStops(s.clock.now());
    s.judge.agentIs('thinking', 'a reply is asked');
    s.judge.agentIs('speaking', 'a sentence is said');
    s.clock.advance(10_000);
    s.judge.speechStarts();
    s.clock.advance(100);
    s.judge.speechStops(s.clock.now());
    s.clock.advance(10_000);
    expect(s.ducked).to.deep.equal([]);
  });

  it('a greeting that may not be cut: words over it wait for it to end, then are the next turn', () => {
    const s = session({ ...TURN_DEFAULTS, interruptibleGreeting: false });
    s.judge.greeting = true;
    s.judge.agentIs('thinking', 'a reply is asked');
    s.judge.agentIs('speaking', 'a sentence is said');
    s.judge.speechStarts();
    s.clock.advance(1000);
    s.judge.speechStops(s.clock.now());
    s.judge.transcript(s.words('Hello there.'), null);
    s.clock.advance(5000);
    expect([s.cuts(), s.ducked.length, s.answers.length]).to.deep.equal([0, 0, 0]);
    s.judge.agentIs('idle', 'the reply was said');
    s.judge.greetingDone();
    s.clock.advance(0);
    expect(s.answers.map((a) => a.text)).to.deep.equal(['Hello there.']);
  });

  it('illegal moves are refused; the end is reachable from every state and cancels every timer', () => {
    const s = session();
    expect(() => s.judge.move('speaking', 'test')).to.throw(VoiceMoveError, /listening → speaking refused/);
    expect(() => s.judge.move('overlap', 'test')).to.throw(VoiceMoveError);
    expect(s.judge.state).to.equal('listening');
    for (const st of Object.keys(VOICE_MOVES) as VoiceState[]) {
      if (st !== 'ended') expect(canMoveVoice(st, 'ended'), st).to.equal(true);
      expect(canMoveVoice('ended', st), st).to.equal(false);
    }
    s.judge.speechStarts();
    s.judge.speechStops(s.clock.now());
    expect(s.clock.pending()).to.equal(1);
    s.judge.end('hangup');
    expect(s.clock.pending()).to.equal(0);
    s.judge.speechStarts();
    s.judge.transcript(s.words('hello'), null);
    s.clock.advance(60_000);
    expect(s.judge.state).to.equal('ended');
    expect(s.answers).to.deep.equal([]);
    expect(() => s.judge.move('listening', 'test')).to.throw(VoiceMoveError);
  });
});
