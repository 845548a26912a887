// The pub/sub copy of a say (core/speech/fast-say.ts): what a node accepts from the channel. Its end
// to end effect (each text spoken once though it arrives twice) is in speaking.test.ts.
import { expect } from 'chai';
import { fastSayChannel, parseFastSay } from '../../core/speech/fast-say';

describe('fast say messages', () => {
  it('parses a say and refuses anything else', () => {
    expect(parseFastSay(JSON.stringify({ speakingId: 'a', seq: 3, text: 'hi' }))).to.deep.equal({ speakingId: 'a', seq: 3, text: 'hi' });
    for (const bad of [
      '',
      'not json',
      'null',
      '[]',
      JSON.stringify({ speakingId: 'a', seq: 0, text: 'x' }),
      JSON.stringify({ speakingId: 'a', seq: 1.5, text: 'x' }),
      JSON.stringify({ speakingId: 1, seq: 1, text: 'x' }),
      JSON.stringify({ speakingId: 'a', seq: 1 }),
    ]) {
      expect(parseFastSay(bad), bad).to.equal(null);
    }
    expect(fastSayChannel('p:', 'node-1')).to.equal('p:speech-say:node-1');
  });
});
