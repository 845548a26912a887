// The channel applications fsmrf's Endpoint runs, through its public API against our switch: play
// (files, silence, teletone scripts, seek offsets), playCollect with digits a far end sends as RFC 4733
// events, record and recordSession. The far end is a second media-engine endpoint on the channel's SDP
// (real RTP on loopback); a raw inbound client reads the events fsmrf does not subscribe to.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { readWav } from '../../testkit/media-engine/support';
import { toneShare } from '../../testkit/media-engine/far-end';
import { plainHeaders } from '../../testkit/esl/client';
import { useFsmrfRig, type FsmrfRig } from '../../testkit/esl/switch-rig';

describe('esl: channel applications through fsmrf on the media engine', () => {
  const fx = useFsmrfRig();
  let rig: FsmrfRig;
  let dir: string;
  let wav: string;

  before(() => {
    ({ rig, dir } = fx);
    wav = path.join(dir, 'tone440.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'synth', '1', 'sine', '440']);
  });
  const call = () => fx.call();
  const subscriber = (events: string) => fx.subscriber(events);

  it('play a WAV: the playback_* values FreeSWITCH reports, PLAYBACK_START/STOP, and the far end hears it', async () => {
    const { ep, peer } = await call();
    const heard = path.join(dir, 'heard.wav');
    const rec = await peer.startRecord(heard);
    const events: string[] = [];
    ep.on('playback-start', (e: { file: string }) => events.push(`start ${e.file}`));
    ep.on('playback-stop', (e: { file: string }) => events.push(`stop ${e.file}`));
    const r = await ep.play(wav);
    expect(r).to.deep.equal({ playbackSeconds: '1', playbackMilliseconds: '1000', playbackLastOffsetPos: '8000' });
    expect(events).to.deep.equal([`start ${wav}`, `stop ${wav}`]);
    await peer.stopRecord(heard);
    await rec.done;
    expect(toneShare(readWav(heard).samples, 440, 8000)).to.be.above(0.5);
  });

  it('silence_stream, a teletone script, a seek offset and a list: counted as FreeSWITCH counts them', async () => {
    const { ep } = await call();
    expect(await ep.play('silence_stream://500')).to.deep.equal({ playbackSeconds: '0', playbackMilliseconds: '500', playbackLastOffsetPos: '4000' });
    expect((await ep.play('tone_stream://%(100,100,440);loops=2')).playbackMilliseconds).to.equal('400');
    // file@@4000: half of the one-second file is left; the offset is where the file stopped
    expect(await ep.play({ file: wav, seekOffset: 4000 })).to.deep.equal({ playbackSeconds: '0', playbackMilliseconds: '500', playbackLastOffsetPos: '8000' });
    // a list (playback_delimiter=!): the values are the last file's
    expect((await ep.play(['silence_stream://200', 'silence_stream://300'])).playbackMilliseconds).to.equal('300');
  });

  it('a missing file: play rejects with File Not Found and no PLAYBACK_START; the channel stays up', async () => {
    const { ep } = await call();
    let started = false;
    ep.on('playback-start', () => (started = true));
    const err = await ep.play(path.join(dir, 'nope.wav')).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('File Not Found');
    expect(started).to.equal(false);
    expect((await ep.play('silence_stream://100')).playbackMilliseconds).to.equal('100');
  });

  it("the engine's own tone names (beep, ringback, dtmf:) are not FreeSWITCH's: File Not Found, as a missing file; a teletone script plays", async () => {
    const { ep } = await call();
    for (const name of ['tone_stream://beep', 'tone_stream://ringback', 'tone_stream://dtmf:12']) {
      const err = await ep.play(name).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message, name).to.equal('File Not Found');
    }
    // the beep media-app plays (media-app/kit/tones.ts): 250 ms, played in 20 ms frames, the last one padded
    expect((await ep.play('tone_stream://%(250,0,1000)')).playbackMilliseconds).to.equal('260');
  });

  it('playCollect: RFC 4733 digits stop the prompt and end at the terminator; each digit is a DTMF event', async () => {
    const { ep, peer } = await call();
    const c = await subscriber('DTMF');
    const digits: string[] = [];
    ep.on('dtmf', (e: { dtmf: string }) => digits.push(e.dtmf));
    ep.once('playback-start', () => void peer.sendDtmf('12#', 100));
    const r = await ep.playCollect({ file: 'silence_stream://5000', min: 1, max: 4, timeout: 3000, digitTimeout: 3000 });
    expect(r.digits).to.equal('12');
    expect(r.terminatorUsed).to.equal('#');
    expect(Number(r.playbackMilliseconds)).to.be.below(4000);
    expect(digits).to.deep.equal(['1', '2', '#']);
    const first = plainHeaders((await c.next()).body);
    expect(first).to.include({ 'Event-Name': 'DTMF', 'Unique-ID': ep.uuid, 'DTMF-Digit': '1', 'DTMF-Source': 'RTP' });
    expect(Number(first['DTMF-Duration'])).to.be.at.least(600); // samples at 8 kHz: 100 ms sent
  });

  it('playCollect: digits the regexp refuses are <var>_invalid, the invalid file plays, the last try times out', async () => {
    const { ep, peer } = await call();
    const files: string[] = [];
    ep.on('playback-start', (e: { file: string }) => files.push(e.file));
    ep.once('playback-start', () => void peer.sendDtmf('55#', 80));
    const r = await ep.playCollect({ file: 'silence_stream://300', min: 1, max: 4, tries: 2, timeout: 1000, regexp: '^9', invalidFile: 'silence_stream://100', digitTimeout: 1000 });
    expect(r.digits).to.equal(null);
    expect(r.invalidDigits).to.equal('55');
    // try 1 (refused), the invalid file, try 2 (timed out), the invalid file again (as switch_play_and_get_digits does)
    expect(files).to.deep.equal(['silence_stream://300', 'silence_stream://100', 'silence_stream://300', 'silence_stream://100']);
  });

  it('record: a WAV of what the far end sends, ended by the * terminator, with the record_* values and RECORD_START/STOP', async () => {
    const { ep, peer } = await call();
    const c = await subscriber('RECORD_START RECORD_STOP');
    const file = path.join(dir, 'record.wav');
    const done = ep.record(file, { timeLimitSecs: 5 });
    expect(plainHeaders((await c.next()).body)).to.include({ 'Event-Name': 'RECORD_START', 'Record-File-Path': file, 'Unique-ID': ep.uuid });
    await peer.play(wav);
    await peer.sendDtmf('*', 100);
    const r = await done;
    expect(r.terminatorUsed).to.equal('*');
    expect(Number(r.recordMilliseconds)).to.be.within(1000, 2500);
    expect(Number(r.recordSamples)).to.equal(Number(r.recordMilliseconds) * 8);
    expect(r.recordSeconds).to.equal(String(Math.floor(Number(r.recordMilliseconds) / 1000)));
    expect(plainHeaders((await c.next()).body)).to.include({ 'Event-Name': 'RECORD_STOP', 'Record-File-Path': file });
    const got = readWav(file);
    expect(got.rate).to.equal(8000);
    expect(toneShare(got.samples, 440, 8000)).to.be.above(0.5);
  });

  it('record: the time limit ends it when nothing else does', async () => {
    const { ep } = await call();
    const r = await ep.record(path.join(dir, 'limit.wav'), { timeLimitSecs: 1 });
    expect(r).to.include({ recordSeconds: '1', recordMilliseconds: '1000', recordSamples: '8000' });
    expect(r.terminatorUsed).to.equal(null);
  });

  it('record to a path the switch cannot write (relative, not .wav): the channel hangs up, as FreeSWITCH does', async () => {
    const { ep } = await call();
    const gone = new Promise<void>((resolve) => ep.once('destroy', () => resolve()));
    void ep.record('relative.mp3').catch(() => undefined);
    await gone;
    expect(rig.esl.channels.has(ep.uuid)).to.equal(false);
  });

  it('speak through espeak-ng: the far end hears speech; an engine the switch does not have hangs the channel up', async () => {
    const { ep, peer } = await call();
    const heard = path.join(dir, 'spoken.wav');
    const rec = await peer.startRecord(heard);
    await ep.speak({ ttsEngine: 'espeak-ng', voice: 'en-us', text: 'one two three' });
    await peer.stopRecord(heard);
    await rec.done;
    const loud = readWav(heard).samples.filter((v) => Math.abs(v) > 1000).length;
    expect(loud).to.be.above(800); // over 0.1 s of voiced audio
    const gone = new Promise<void>((resolve) => ep.once('destroy', () => resolve()));
    void ep.speak({ ttsEngine: 'no-such-tts', voice: 'x', text: 'hello' }).catch(() => undefined);
    await gone;
  });

  it('recordSession returns at once; the file holds the call until stop_record_session', async () => {
    const { ep, peer } = await call();
    const c = await subscriber('RECORD_START RECORD_STOP');
    const file = path.join(dir, 'session.wav');
    await ep.recordSession(file);
    expect(plainHeaders((await c.next()).body)).to.include({ 'Event-Name': 'RECORD_START', 'Record-File-Path': file });
    await peer.play(wav);
    await ep.execute('stop_record_session', file);
    const stop = plainHeaders((await c.next()).body);
    expect(stop).to.include({ 'Event-Name': 'RECORD_STOP', 'Record-File-Path': file });
    expect(Number(stop['variable_record_ms'])).to.be.within(1000, 2500);
    expect(toneShare(readWav(file).samples, 440, 8000)).to.be.above(0.5);
  });

  it('playback: the * terminator (playback_terminators) and timeoutSecs (playback_timeout_sec) stop it', async () => {
    const { ep, peer } = await call();
    ep.once('playback-start', () => void peer.sendDtmf('*', 80));
    const stopped = await ep.play('silence_stream://5000');
    expect(Number(stopped.playbackMilliseconds)).to.be.below(4000);
    const timed = await ep.play({ file: 'silence_stream://5000', timeoutSecs: 2 });
    expect(Number(timed.playbackMilliseconds)).to.be.within(1900, 2500);
  });

  it('destroy while a file plays: the play settles (its completion comes before the hang-up), the channel is gone', async () => {
    const { ep } = await call();
    const channelCall = rig.esl.channels.get(ep.uuid)!;
    const playing = ep.play('silence_stream://10000').then(
      () => 'settled',
      () => 'settled',
    );
    await new Promise<void>((resolve) => ep.once('playback-start', () => resolve()));
    const hungUp = once(rig.esl, 'disconnected');
    const engineGone = once(channelCall.channel.endpoint, 'destroy');
    const t0 = Date.now();
    await ep.destroy();
    expect(await playing).to.equal('settled');
    await hungUp;
    await engineGone;
    // the hangup did not wait for the 10 s file (FreeSWITCH runs it inside the playback)
    expect(Date.now() - t0).to.be.below(5000);
    expect(rig.esl.channels.size).to.equal(0);
  });

  it('mute / unmute (set_mute read): what the far end says is silence in a recording while muted', async () => {
    const { ep, peer } = await call();
    const file = path.join(dir, 'muted.wav');
    await ep.mute();
    await ep.recordSession(file);
    await peer.play(wav);
    await ep.execute('stop_record_session', file);
    expect(readWav(file).samples.some((v) => Math.abs(v) > 100)).to.equal(false);
    await ep.unmute();
    await ep.recordSession(file);
    await peer.play(wav);
    await ep.execute('stop_record_session', file);
    expect(toneShare(readWav(file).samples, 440, 8000)).to.be.above(0.5);
  });
});
