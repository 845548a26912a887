// The application arguments as mod_dptools reads them and the teletone scripts the engine plays: pure.
import { expect } from 'chai';
import { collectArgs, multisetPairs, playbackItems, playbackTerminators, recordArgs, recordSessionArgs, setMuteArgs, setPair, splitArgs } from '../../esl/apps/args';
import { parseTerminators } from '../../esl/apps/collect';
import { speakArgs } from '../../esl/apps/speak';
import { parseTeletone } from '../../media-engine/dsp/teletone';

describe('esl apps: arguments as mod_dptools reads them', () => {
  it("splits on spaces, keeping a '…' group whole", () => {
    expect(splitArgs("1  2 'a b' c")).to.deep.equal(['1', '2', 'a b', 'c']);
  });

  it('play_and_get_digits: fsmrf’s argument order; max at least min, timeout at least 1000 ms, # by default, digit timeout = timeout when 0', () => {
    expect(collectArgs('1 4 2 5000 # /p.wav silence_stream://250 myDigits \\d+ 3000')).to.deep.equal({
      min: 1,
      max: 4,
      tries: 2,
      timeoutMs: 5000,
      digitTimeoutMs: 3000,
      terminators: '#',
      file: '/p.wav',
      invalidFile: 'silence_stream://250',
      varName: 'myDigits',
      regexp: '\\d+',
    });
    expect(collectArgs('3 1 1 200')).to.include({ min: 3, max: 3, timeoutMs: 1000, digitTimeoutMs: 1000, terminators: '#' });
    expect(collectArgs('')).to.equal(null);
  });

  it('terminators: = makes one required, + keeps it in the digits', () => {
    expect(parseTerminators('#')).to.deep.equal({ digits: '#', kept: '', required: false });
    expect(parseTerminators('=+#*')).to.deep.equal({ digits: '#*', kept: '#', required: true });
  });

  it('playback: the delimiter splits files, @@N is a seek in samples', () => {
    expect(playbackItems('/a.wav@@8000!silence_stream://100', '!')).to.deep.equal([
      { file: '/a.wav', seek: 8000 },
      { file: 'silence_stream://100', seek: 0 },
    ]);
    expect(playbackItems('/a.wav!b', undefined)).to.deep.equal([{ file: '/a.wav!b', seek: 0 }]);
    expect(playbackTerminators(undefined)).to.equal('*');
    expect(playbackTerminators('any')).to.equal('1234567890*#');
    expect(playbackTerminators('none')).to.equal('');
  });

  it('record: limit (+ allowed), silence threshold and hits (3 s when a threshold is given alone); record_session +limit', () => {
    expect(recordArgs('/r.wav +20 200 5')).to.deep.equal({ path: '/r.wav', limitSecs: 20, silenceThresh: 200, silenceSecs: 5 });
    expect(recordArgs('/r.wav 0 100')).to.deep.equal({ path: '/r.wav', limitSecs: 0, silenceThresh: 100, silenceSecs: 3 });
    expect(recordArgs('/r.wav')).to.deep.equal({ path: '/r.wav', limitSecs: 0, silenceThresh: 0, silenceSecs: 0 });
    expect(recordSessionArgs('/s.wav +30 {a=b}')).to.deep.equal({ path: '/s.wav', limitSecs: 30 });
    expect(recordSessionArgs('/s.wav {a=b}')).to.deep.equal({ path: '/s.wav', limitSecs: 0 });
  });

  it('speak: engine|voice|text, voice|text or the text; the text keeps its own |', () => {
    expect(speakArgs('espeak-ng|en-us|a|b')).to.deep.equal({ engine: 'espeak-ng', voice: 'en-us', text: 'a|b' });
    expect(speakArgs('male|hello')).to.deep.equal({ engine: '', voice: 'male', text: 'hello' });
    expect(speakArgs('hello')).to.deep.equal({ engine: '', voice: '', text: 'hello' });
  });

  it('set_mute, set and multiset', () => {
    expect(setMuteArgs('read true')).to.deep.equal({ direction: 'in', on: true });
    expect(setMuteArgs('write 0')).to.deep.equal({ direction: 'out', on: false });
    expect(setMuteArgs('read')).to.equal(null);
    expect(setPair('a=b=c')).to.deep.equal(['a', 'b=c']);
    expect(setPair('a=')).to.deep.equal(['a', null]);
    expect(multisetPairs('^^^a=1^b=2')).to.deep.equal(['a=1', 'b=2']);
    expect(multisetPairs('a=1 b=2')).to.deep.equal(['a=1', 'b=2']);
  });
});

describe('media-engine: teletone scripts (tone_stream://)', () => {
  it('%(on,off,freqs…) tones, loops=N passes, -1 forever', () => {
    expect(parseTeletone('%(100,50,440,480);loops=3')).to.deep.equal({
      segments: [
        { freqs: [440, 480], ms: 100 },
        { freqs: [], ms: 50 },
      ],
      repeat: 3,
    });
    expect(parseTeletone('%(1000,0,350);L=-1').repeat).to.equal(true);
  });

  it('refuses what it does not play instead of guessing', () => {
    expect(() => parseTeletone('v=-7;%(100,0,440)')).to.throw(/not a %\(on,off,freq…\) tone/);
    expect(() => parseTeletone('%(100)')).to.throw(/on and off/);
    expect(() => parseTeletone('%(100,0,5000)')).to.throw(/under 4000 Hz/);
  });
});
