// The uuid_* API commands fsmrf's Endpoint sends, through its public API against our switch: bridge and
// unbridge (uuid_bridge, uuid_transfer -both park inline) with real audio both ways between two far ends,
// getChannelVariables (uuid_set_media_stats, uuid_dump) with FreeSWITCH's variable names, uuid_setvar;
// and, by a raw inbound client, FreeSWITCH's answers to bad input (unknown uuid, missing arguments)
// on a connection that stays up, uuid_kill, uuid_break, uuid_audio (a mute applied while a file plays) and
// uuid_record (a recording started and stopped while a file plays).
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Endpoint } from '../../media-engine';
import { readWav } from '../../testkit/media-engine/support';
import { toneShare } from '../../testkit/media-engine/far-end';
import { PASSWORD, plainHeaders, RawClient } from '../../testkit/esl/client';
import { useFsmrfRig, type FsmrfRig } from '../../testkit/esl/switch-rig';

describe('esl: uuid API commands through fsmrf on the media engine', () => {
  const fx = useFsmrfRig();
  let rig: FsmrfRig;
  let dir: string;
  const wavs: Record<number, string> = {};
  const clients: RawClient[] = [];

  before(() => {
    ({ rig, dir } = fx);
    for (const hz of [440, 1000]) {
      wavs[hz] = path.join(dir, `tone${hz}.wav`);
      execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', wavs[hz], 'synth', '1', 'sine', String(hz)]);
    }
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.socket.destroy();
  });
  const call = () => fx.call();

  async function client(events?: string): Promise<RawClient> {
    const c = await RawClient.authed(rig.port, PASSWORD);
    clients.push(c);
    if (events) expect((await c.command(`event plain ${events}`)).headers['Reply-Text']).to.equal('+OK event listener enabled plain');
    return c;
  }

  const api = async (c: RawClient, line: string) => {
    const r = await c.command(`api ${line}`);
    expect(r.headers['Content-Type']).to.equal('api/response');
    return r.body;
  };

  /** What `peer` hears while `other` plays `hz` for a second: the tone's share of a recording. */
  async function heard(peer: Endpoint, other: Endpoint, hz: number): Promise<number> {
    const file = path.join(dir, `heard-${hz}-${Date.now()}.wav`);
    const rec = await peer.startRecord(file);
    await other.play(wavs[hz]!);
    await peer.stopRecord(file);
    await rec.done;
    return toneShare(readWav(file).samples, hz, 8000);
  }

  it('bridge: each far end hears the other (audio both ways); unbridge parks both and they no longer do', async () => {
    const a = await call();
    const b = await call();
    const c = await client('CHANNEL_BRIDGE CHANNEL_UNBRIDGE');
    await a.ep.bridge(b.ep);
    const bridged = plainHeaders((await c.next()).body);
    expect(bridged).to.include({ 'Event-Name': 'CHANNEL_BRIDGE', 'Bridge-A-Unique-ID': a.ep.uuid, 'Bridge-B-Unique-ID': b.ep.uuid, variable_bridge_to: b.ep.uuid });
    expect(await heard(b.peer, a.peer, 440), 'b hears a').to.be.above(0.5);
    expect(await heard(a.peer, b.peer, 1000), 'a hears b').to.be.above(0.5);
    const vars = await b.ep.getChannelVariables();
    expect(vars).to.include({ variable_bridge_uuid: a.ep.uuid, variable_signal_bond: a.ep.uuid, variable_bridge_to: a.ep.uuid });

    await a.ep.unbridge();
    const unbridged = plainHeaders((await c.next()).body);
    expect(unbridged).to.include({ 'Event-Name': 'CHANNEL_UNBRIDGE', 'Bridge-A-Unique-ID': a.ep.uuid, 'Bridge-B-Unique-ID': b.ep.uuid });
    expect(await heard(b.peer, a.peer, 440), 'b no longer hears a').to.be.below(0.1);
    const after = await b.ep.getChannelVariables();
    expect(after).to.not.have.property('variable_bridge_to');
    expect(after).to.include({ variable_last_bridge_to: a.ep.uuid });
    // both channels are still up and driven by their outbound sockets
    expect((await a.ep.play('silence_stream://100')).playbackMilliseconds).to.equal('100');
  });

  it('bridge to a uuid no channel has: fsmrf rejects with -ERR Invalid uuid; a hang-up of one leg ends the bridge, the other stays', async () => {
    const a = await call();
    const err = await a.ep.bridge('no-such-uuid').then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('-ERR Invalid uuid\n');
    const b = await call();
    await a.ep.bridge(b.ep);
    const c = await client('CHANNEL_UNBRIDGE CHANNEL_HANGUP');
    await b.ep.destroy();
    expect(plainHeaders((await c.next()).body)).to.include({ 'Event-Name': 'CHANNEL_UNBRIDGE', 'Bridge-B-Unique-ID': b.ep.uuid });
    expect(plainHeaders((await c.next()).body)).to.include({ 'Event-Name': 'CHANNEL_HANGUP', 'Unique-ID': b.ep.uuid });
    expect(rig.esl.channels.has(a.ep.uuid)).to.equal(true);
    expect((await a.ep.play('silence_stream://100')).playbackMilliseconds).to.equal('100');
  });

  it('two uuid_bridge of a shared channel at once (bgapi): one after the other, the relation stays whole', async () => {
    const a = await call();
    const b = await call();
    const d = await call();
    const c = await client('BACKGROUND_JOB CHANNEL_HANGUP');
    // both jobs run on their own (bgapi), the second while the first awaits the engine
    c.send(`bgapi uuid_bridge ${a.ep.uuid} ${b.ep.uuid}\n\nbgapi uuid_bridge ${a.ep.uuid} ${d.ep.uuid}\n\n`);
    const outputs: string[] = [];
    while (outputs.length < 2) {
      const f = await c.next();
      if (f.headers['Content-Type'] === 'text/event-plain') outputs.push(f.body.slice(f.body.indexOf('\n\n') + 2));
    }
    expect(outputs.sort()).to.deep.equal([`+OK ${b.ep.uuid}\n`, `+OK ${d.ep.uuid}\n`].sort());
    // whichever ran last holds a; the other channel is in no bridge
    const bridges = rig.esl.bridges;
    const partner = bridges.partnerOf(a.ep.uuid)?.channel.uuid;
    const [held, left] = partner === b.ep.uuid ? [b, d] : [d, b];
    expect(partner, 'a is bridged').to.equal(held.ep.uuid);
    expect(bridges.partnerOf(held.ep.uuid)?.channel.uuid).to.equal(a.ep.uuid);
    expect(bridges.partnerOf(left.ep.uuid), 'the other is in no bridge').to.equal(undefined);
    // the hang-up of the channel left out does not end a's bridge
    await left.ep.destroy();
    expect(plainHeaders((await c.next()).body)).to.include({ 'Event-Name': 'CHANNEL_HANGUP', 'Unique-ID': left.ep.uuid });
    expect(bridges.partnerOf(a.ep.uuid)?.channel.uuid).to.equal(held.ep.uuid);
    expect(await heard(held.peer, a.peer, 440), 'still hears a').to.be.above(0.5);
  });

  it("getChannelVariables(true): FreeSWITCH's codec strings and the rtp_audio_* counters; uuid_setvar sets one", async () => {
    const { ep } = await call();
    await ep.play('silence_stream://200');
    await ep.api('uuid_setvar', [ep.uuid, 'my_var', 'two words']);
    const v = await ep.getChannelVariables(true);
    expect(v).to.include({
      'Event-Name': 'CHANNEL_DATA',
      'Unique-ID': ep.uuid,
      variable_read_codec: 'PCMU',
      variable_write_codec: 'PCMU',
      variable_read_rate: '8000',
      variable_original_read_codec: 'PCMU',
      variable_rtp_use_codec_name: 'PCMU',
      variable_rtp_use_codec_ptime: '20',
      variable_rtp_last_audio_codec_string: 'PCMU@8000h@20i@1c',
      variable_my_var: 'two words',
    });
    // fsmrf parses variable_rtp_audio_* as numbers: 200 ms of silence went out as at least 10 packets of 20 ms
    expect(v.variable_rtp_audio_out_packet_count).to.be.a('number').and.at.least(10);
    expect(v.variable_rtp_audio_out_raw_bytes).to.equal((v.variable_rtp_audio_out_media_bytes as number) + 12 * (v.variable_rtp_audio_out_packet_count as number));
  });

  it("bad input gets FreeSWITCH's answers and the connection stays up", async () => {
    const c = await client();
    expect(await api(c, 'uuid_dump nope')).to.equal('-ERR No such channel!\n');
    expect(await api(c, 'uuid_dump')).to.equal('-USAGE: <uuid> [format]\n');
    expect(await api(c, 'uuid_bridge onlyone')).to.equal('-USAGE: <uuid> <other_uuid>\n');
    expect(await api(c, 'uuid_bridge a b')).to.equal('-ERR Invalid uuid\n');
    expect(await api(c, 'uuid_transfer nope -both park inline')).to.equal('-ERR No such channel!\n');
    expect(await api(c, 'uuid_transfer nope')).to.equal('-USAGE: <uuid> [-bleg|-both] <dest-exten> [<dialplan>] [<context>]\n');
    expect(await api(c, 'uuid_setvar nope x y')).to.equal('-ERR No such channel!\n');
    expect(await api(c, 'uuid_setvar nope')).to.equal('-USAGE: <uuid> <var> [value]\n');
    expect(await api(c, 'uuid_set_media_stats nope')).to.equal('-ERR No such channel nope!\n');
    expect(await api(c, 'uuid_kill nope')).to.equal('-ERR No such channel!\n');
    expect(await api(c, 'uuid_kill')).to.equal('-USAGE: <uuid> [cause]\n');
    expect(await api(c, 'uuid_break nope')).to.equal('-ERR No such channel!\n');
    expect(await api(c, 'uuid_getvar nope x')).to.equal('-ERR No such channel!\n');
    expect(await api(c, 'uuid_exists nope')).to.equal('false');
    const { ep } = await call();
    expect(await api(c, `uuid_exists ${ep.uuid}`)).to.equal('true');
    expect(await api(c, `uuid_transfer ${ep.uuid} 1000 XML default`)).to.equal('-ERR\n');
    expect(await api(c, `uuid_getvar ${ep.uuid} nothing_here`)).to.equal('_undef_');
    expect(await api(c, `uuid_dump ${ep.uuid} xml`)).to.equal('-ERR xml is not supported\n');
    expect(JSON.parse(await api(c, `uuid_dump ${ep.uuid} json`))).to.include({ 'Unique-ID': ep.uuid, variable_read_codec: 'PCMU' });
    expect(rig.esl.channels.has(ep.uuid)).to.equal(true);
  });

  it('uuid_kill hangs the channel up with the cause given (a BYE); uuid_break stops what it plays', async () => {
    const a = await call();
    const c = await client('CHANNEL_HANGUP');
    const playing = a.ep.play('silence_stream://10000');
    await new Promise<void>((resolve) => a.ep.once('playback-start', () => resolve()));
    expect(await api(c, `uuid_break ${a.ep.uuid}`)).to.equal('+OK\n');
    expect(Number((await playing).playbackMilliseconds)).to.be.below(5000);
    const gone = new Promise<void>((resolve) => a.ep.once('destroy', () => resolve()));
    // the hang-up's events go out as it happens, before the command's answer
    c.send(`api uuid_kill ${a.ep.uuid} user_busy\n\n`);
    const hangup = plainHeaders((await c.next()).body);
    expect(hangup).to.include({ 'Event-Name': 'CHANNEL_HANGUP', 'Unique-ID': a.ep.uuid, 'Hangup-Cause': 'USER_BUSY' });
    const answer = await c.next();
    expect(answer.headers['Content-Type']).to.equal('api/response');
    expect(answer.body).to.equal('+OK\n');
    await gone;
    expect(rig.esl.channels.has(a.ep.uuid)).to.equal(false);
  });

  it("uuid_audio mutes a side at once while a file plays (set_mute would wait behind it), 0 and stop unmute; FreeSWITCH's answers to bad input", async () => {
    const c = await client();
    expect(await api(c, 'uuid_audio nope start read mute 1')).to.equal('-ERR No such channel!\n');
    expect(await api(c, 'uuid_audio nope')).to.equal('-USAGE: <uuid> [start [read|write] [mute|level <level>]|stop]\n');
    const a = await call();
    const usage = '-USAGE: <uuid> [start [read|write] [mute|level <level>]|stop]\n';
    expect(await api(c, `uuid_audio ${a.ep.uuid} start both mute 1`)).to.equal(usage);
    expect(await api(c, `uuid_audio ${a.ep.uuid} start read mute`)).to.equal(usage);
    expect(await api(c, `uuid_audio ${a.ep.uuid} start read loud 1`)).to.equal(usage);
    expect(await api(c, `uuid_audio ${a.ep.uuid} start write level 2`)).to.equal('-ERR level is not supported\n');
    const far = await call();
    expect(await api(c, `uuid_bridge ${far.ep.uuid} ${a.ep.uuid}`)).to.match(/^\+OK/);
    // the channel plays a 10 s file meanwhile (after the bridge, which breaks what plays): a set_mute
    // sendmsg'd now would run only after it
    const playing = a.ep.play('silence_stream://10000');
    await new Promise<void>((resolve) => a.ep.once('playback-start', () => resolve()));
    // what `a`'s far end says reaches the other far end, until `a`'s read side is muted
    expect(await heard(far.peer, a.peer, 440), 'heard before the mute').to.be.above(0.5);
    expect(await api(c, `uuid_audio ${a.ep.uuid} start read mute 1`)).to.equal('+OK\n');
    expect(await heard(far.peer, a.peer, 440), 'not heard once muted').to.be.below(0.1);
    expect(await api(c, `uuid_audio ${a.ep.uuid} start read mute 0`)).to.equal('+OK\n');
    expect(await heard(far.peer, a.peer, 440), 'heard once unmuted').to.be.above(0.5);
    expect(await api(c, `uuid_audio ${a.ep.uuid} start read mute -4`)).to.equal('+OK\n');
    expect(await heard(far.peer, a.peer, 440), 'a negative level mutes too (switch_ivr_session_audio: any level but 0)').to.be.below(0.1);
    expect(await api(c, `uuid_audio ${a.ep.uuid} stop`)).to.equal('+OK\n');
    expect(await heard(far.peer, a.peer, 440), 'heard once the audio bug is stopped').to.be.above(0.5);
    expect(await api(c, `uuid_break ${a.ep.uuid}`)).to.equal('+OK\n');
    expect(Number((await playing).playbackMilliseconds), 'all of it while the file played').to.be.below(10_000);
  });

  it("uuid_record starts and stops a session recording at once while a file plays (stop_record_session would wait); FreeSWITCH's answers", async () => {
    const c = await client();
    const usage = '-USAGE: <uuid> [start|stop|mask|unmask] <path> [<limit>] [<recording_vars>]\n';
    expect(await api(c, 'uuid_record nope stop all')).to.equal('-ERR Cannot locate session!\n');
    expect(await api(c, 'uuid_record nope stop')).to.equal(usage);
    const a = await call();
    const file = path.join(dir, 'uuid-record.wav');
    expect(await api(c, `uuid_record ${a.ep.uuid} pause ${file}`)).to.equal(usage);
    expect(await api(c, `uuid_record ${a.ep.uuid} mask ${file}`)).to.equal('-ERR mask is not supported\n');
    expect(await api(c, `uuid_record ${a.ep.uuid} stop all`), 'nothing records yet').to.equal('-ERR Cannot stop record session!\n');
    expect(await api(c, `uuid_record ${a.ep.uuid} start relative.mp3`)).to.equal('-ERR Cannot record session!\n');
    const events = await client('RECORD_START RECORD_STOP');
    // the channel plays a 10 s file: a sendmsg'd record_session or stop_record_session would run only after it
    const playing = a.ep.play('silence_stream://10000');
    await new Promise<void>((resolve) => a.ep.once('playback-start', () => resolve()));
    expect(await api(c, `uuid_record ${a.ep.uuid} start ${file}`)).to.equal('+OK Success\n');
    expect(plainHeaders((await events.next()).body)).to.include({ 'Event-Name': 'RECORD_START', 'Record-File-Path': file, 'Unique-ID': a.ep.uuid });
    await a.peer.play(wavs[440]!);
    expect(await api(c, `uuid_record ${a.ep.uuid} stop ${file}.other`), 'another path: not recorded').to.equal('-ERR Cannot stop record session!\n');
    expect(await api(c, `uuid_record ${a.ep.uuid} stop ${file}`)).to.equal('+OK Success\n');
    const stop = plainHeaders((await events.next()).body);
    expect(stop).to.include({ 'Event-Name': 'RECORD_STOP', 'Record-File-Path': file });
    expect(Number(stop['variable_record_ms'])).to.be.within(900, 3000);
    expect(toneShare(readWav(file).samples, 440, 8000), 'the recording holds what the far end said').to.be.above(0.4);
    expect(await api(c, `uuid_record ${a.ep.uuid} stop all`), 'stopped already').to.equal('-ERR Cannot stop record session!\n');
    expect(await api(c, `uuid_break ${a.ep.uuid}`)).to.equal('+OK\n');
    expect(Number((await playing).playbackMilliseconds), 'all of it while the file played').to.be.below(10_000);
  });
});
