// `say` (mod_say_en's files, spoken as words through the engine's TTS) and `start_dtmf`: the sound
// files FreeSWITCH's English module would play for each say type and method, then fsmrf's
// Endpoint.say against our switch with the far end hearing speech, and an in-band digit after
// start_dtmf arriving as a DTMF event.
import { expect } from 'chai';
import path from 'node:path';
import { sayClock } from '../../esl/apps/say';
import { sayFiles, sayMethod, sayType, wordsOf } from '../../esl/apps/say-en';
import { readWav } from '../../testkit/media-engine/support';
import { useFsmrfRig, type FsmrfRig } from '../../testkit/esl/switch-rig';

/** 2023-11-14 22:13:20 UTC, a Tuesday */
const T = 1_700_000_000;
const utc = (now = T * 1000) => sayClock('UTC', now);
const words = (text: string, type: string, method: string, clock = utc()) => {
  const files = sayFiles(text, sayType(type), sayMethod(method), clock);
  return files && wordsOf(files);
};

describe('esl: mod_say_en, as the files FreeSWITCH plays and the words spoken', () => {
  it('numbers: pronounced, counted (with its teen quirk), iterated; more than 9 digits or a non-digit is refused', () => {
    expect(sayFiles('1234', 'NUMBER', 'PRONOUNCED', utc())).to.deep.equal(['digits/1', 'digits/thousand', 'digits/2', 'digits/hundred', 'digits/30', 'digits/4']);
    expect(words('1234', 'NUMBER', 'pronounced')).to.equal('one thousand two hundred thirty four');
    expect(words('1,000,001', 'ITEMS', 'pronounced')).to.equal('one million one');
    expect(words('115', 'NUMBER', 'pronounced')).to.equal('one hundred fifteen');
    expect(words('0', 'NUMBER', 'pronounced')).to.equal('zero');
    expect(words('21', 'NUMBER', 'counted')).to.equal('twenty first');
    expect(words('30', 'NUMBER', 'counted')).to.equal('thirtieth');
    // play_group says 10-19 from digits/1X even when counted
    expect(words('12', 'NUMBER', 'counted')).to.equal('twelve');
    expect(words('1,234', 'NUMBER', 'iterated')).to.equal('one two three four');
    expect(sayFiles('12a', 'NUMBER', 'ITERATED', utc())).to.equal(null);
    expect(sayFiles('1234567890', 'NUMBER', 'PRONOUNCED', utc())).to.equal(null);
  });

  it('currency, IP address, telephone number, spelled and phonetic names', () => {
    expect(words('$1.05', 'CURRENCY', 'pronounced')).to.equal('one dollar and five cents');
    expect(words('-12.5', 'CURRENCY', 'pronounced')).to.equal('negative twelve dollars and five cents');
    expect(words('192.168.0.1', 'IP_ADDRESS', 'pronounced')).to.equal('one hundred ninety two dot one hundred sixty eight dot zero dot one');
    expect(words('192.168', 'IP_ADDRESS', 'pronounced')).to.equal(null);
    expect(words('+1 (555) 010-9999', 'TELEPHONE_NUMBER', 'pronounced')).to.equal('plus one, five five five, zero one zero, nine nine nine nine');
    expect(words('Bob', 'NAME_SPELLED', 'pronounced')).to.equal('B O B');
    expect(words('ab1', 'NAME_PHONETIC', 'pronounced')).to.equal('alpha bravo one');
  });

  it('time measurement, dates and times in the channel time zone (military with iterated), today for a short date', () => {
    expect(words('3725', 'TIME_MEASUREMENT', 'pronounced')).to.equal('one hour two minutes five seconds');
    expect(words('0:00:07', 'TIME_MEASUREMENT', 'pronounced')).to.equal('zero hours zero minutes seven seconds');
    expect(words(String(T), 'CURRENT_DATE_TIME', 'pronounced')).to.equal('Tuesday November fourteen two thousand twenty three at ten thirteen P M');
    expect(words(String(T), 'CURRENT_TIME', 'iterated')).to.equal('twenty two thirteen hours');
    expect(words(String(T), 'SHORT_DATE_TIME', 'pronounced', utc((T + 3600) * 1000))).to.equal('today at ten thirteen P M');
    expect(words(String(T), 'CURRENT_DATE', 'pronounced', sayClock('Asia/Tokyo'))).to.equal('Wednesday November fifteen two thousand twenty three');
  });

  it('the types mod_say_en has no callback for, and an unknown type, play nothing', () => {
    for (const type of ['URL', 'EMAIL_ADDRESS', 'ACCOUNT_NUMBER', 'NO_SUCH_TYPE']) expect(sayFiles('123', sayType(type), 'PRONOUNCED', utc()), type).to.equal(null);
  });
});

describe('esl: say and start_dtmf through fsmrf on the media engine', () => {
  const fx = useFsmrfRig();
  let rig: FsmrfRig;
  let dir: string;
  before(() => ({ rig, dir } = fx));
  const call = () => fx.call();

  it('Endpoint.say a number: the far end hears the words; playback_ms is what was spoken', async () => {
    const { ep, peer } = await call();
    const heard = path.join(dir, 'said.wav');
    const rec = await peer.startRecord(heard);
    const r = await ep.say('1234', { sayType: 'NUMBER', sayMethod: 'pronounced' });
    await peer.stopRecord(heard);
    await rec.done;
    // "one thousand two hundred thirty four" takes well over a second
    expect(Number(r.playbackMilliseconds)).to.be.above(1000);
    expect(r.playbackSeconds).to.equal(String(Math.floor(Number(r.playbackMilliseconds) / 1000)));
    const loud = readWav(heard).samples.filter((v) => Math.abs(v) > 1000).length;
    expect(loud).to.be.above(4000); // over half a second of voiced audio
  });

  it('say with a type mod_say_en does not speak completes with nothing said; the channel stays up', async () => {
    const { ep } = await call();
    const r = await ep.say('http://x', { sayType: 'URL', sayMethod: 'pronounced' });
    expect(r.playbackMilliseconds).to.equal(null);
    expect(rig.esl.channels.has(ep.uuid)).to.equal(true);
  });

  it('start_dtmf: an in-band digit the far end plays is a DTMF event (DTMF-Source INBAND_AUDIO)', async () => {
    const { ep, peer } = await call();
    const evt = (await ep.execute('start_dtmf')) as { getHeader(n: string): string | null };
    expect(evt.getHeader('Event-Name')).to.equal('CHANNEL_EXECUTE_COMPLETE');
    expect(rig.esl.channels.has(ep.uuid)).to.equal(true);
    const got = new Promise<{ dtmf: string; source: string }>((resolve) => ep.once('dtmf', resolve));
    await peer.sendDtmf('5', 120, 'inband');
    expect(await got).to.include({ dtmf: '5', source: 'INBAND_AUDIO' });
  });
});
