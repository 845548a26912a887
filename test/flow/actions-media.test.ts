import { expect } from 'chai';
import { events, executed, first, id, media, sim } from './helpers';

describe('flow actions on a virtual call: media', () => {
  it('answer moves a ringing call to progressing and records the command', async () => {
    const r = await sim([
      { type: 'answer' },
      { type: 'condition_call_status', option: { status: 'progressing', false_target_id: id(9) } },
      { type: 'stop' },
      { id: id(9), type: 'hangup', option: { reason: 'failed' } },
    ]);
    expect(media(r)[0]!.command).to.equal('answer');
    expect(executed(r)).to.deep.equal(['answer', 'condition_call_status', 'stop']);
    expect(first(r).variables['svc.call.status']).to.equal('progressing');
    // The flow ended without hanging up: the runner hangs up the call.
    expect(media(r).at(-1)).to.include({ command: 'hangup', reason: 'normal' });
  });

  it('talk waits for the prompt; play waits for each URL; beep; sleep — on the virtual clock', async () => {
    const r = await sim(
      [
        { type: 'talk', option: { text: 'Hello ${name}', language: 'en-GB' } },
        { type: 'play', option: { stream_urls: ['http://m/a.wav', 'http://m/b.wav'] } },
        { type: 'beep' },
        { type: 'sleep', option: { duration: 1234 } },
        { type: 'stop' },
      ],
      { variables: { name: 'Ann' }, media: { talk_ms_per_char: 100, durations: { 'http://m/a.wav': 3000 }, play_ms: 1000, beep_ms: 400 } },
    );
    const m = media(r);
    expect(m[0]).to.include({ command: 'talk', text: 'Hello Ann', language: 'en-GB', duration_ms: 900, t: 0 });
    expect(m[1]).to.include({ command: 'play', url: 'http://m/a.wav', t: 900 });
    expect(m[2]).to.include({ command: 'play', url: 'http://m/b.wav', t: 3900 });
    expect(m[3]).to.include({ command: 'beep', t: 4900 });
    const stop = r.timeline.find((e) => e.event === 'action' && e.type === 'stop')!;
    expect(stop.t).to.equal(4900 + 400 + 1234);
    const ex = first(r).executed_actions;
    expect(ex.map((a) => a.type)).to.deep.equal(['talk', 'play', 'beep', 'sleep', 'stop']);
    expect(ex[1]!.tm_execute).to.equal('2026-01-05T09:00:00.900000Z');
    expect(ex[0]!.option).to.deep.equal({ text: 'Hello Ann', language: 'en-GB' });
  });

  it('talk with digits_handle next ends on a key, which digits_receive then carries over', async () => {
    const r = await sim([{ type: 'talk', option: { text: 'x'.repeat(100), digits_handle: 'next' } }, { type: 'digits_receive', option: { duration: 3000, length: 2 } }, { type: 'stop' }], {
      events: [
        { at: 1000, dtmf: '4' },
        { at: 1500, dtmf: '2' },
      ],
    });
    expect(events(r, 'media_stopped')[0]).to.include({ command: 'talk', after_ms: 1000 });
    expect(first(r).variables['svc.call.digits']).to.equal('42');
    expect(events(r, 'digits_received')[0]).to.include({ t: 1500, reason: 'length' });
  });

  it('talk async does not wait', async () => {
    const r = await sim([{ type: 'talk', option: { text: 'long prompt here', async: true } }, { type: 'stop' }]);
    expect(r.timeline.find((e) => e.type === 'stop')!.t).to.equal(0);
  });

  it('digits_receive: length, key (kept), timeout, and append to held digits', async () => {
    const r = await sim(
      [
        { type: 'digits_receive', option: { duration: 5000, key: '#' } },
        { type: 'variable_set', option: { key: 'first', value: '${svc.call.digits}' } },
        { type: 'digits_receive', option: { duration: 2000, length: 6 } },
        { type: 'stop' },
      ],
      {
        events: [
          { at: 100, dtmf: '12#', interval: 200 },
          { at: 1000, dtmf: '9' },
        ],
      },
    );
    const got = events(r, 'digits_received');
    expect(got[0]).to.include({ digits: '12#', reason: 'key', t: 500 });
    expect(first(r).variables.first).to.equal('12#');
    expect(got[1]).to.include({ digits: '12#9', reason: 'timeout', t: 2500 });
  });

  it('digits_receive completes at once when held digits already satisfy it', async () => {
    const r = await sim([{ type: 'sleep', option: { duration: 1000 } }, { type: 'digits_receive', option: { duration: 5000, length: 1 } }, { type: 'stop' }], {
      events: [{ at: 300, dtmf: '7' }],
    });
    expect(events(r, 'digits_received')[0]).to.include({ digits: '7', t: 1000 });
  });

  it('digits_send lasts duration·n + interval·(n-1)', async () => {
    const r = await sim([{ type: 'digits_send', option: { digits: '123', duration: 200, interval: 50 } }, { type: 'stop' }]);
    expect(media(r)[0]).to.include({ command: 'send_digits', digits: '123', duration_ms: 700 });
    expect(r.timeline.find((e) => e.type === 'stop')!.t).to.equal(700);
  });

  it('echo and stream_echo run for duration (<= 0 means 180 s)', async () => {
    const r = await sim([{ type: 'echo', option: { duration: 1000 } }, { type: 'stream_echo', option: { duration: 0 } }, { type: 'stop' }]);
    expect(
      media(r)
        .slice(0, 2)
        .map((m) => [m.command, m.duration_ms]),
    ).to.deep.equal([
      ['echo', 1000],
      ['stream_echo', 180000],
    ]);
    expect(r.timeline.find((e) => e.type === 'stop')!.t).to.equal(181000);
  });

  it('recording_start sets svc.recording.id and continues; recording_stop ends it', async () => {
    const r = await sim([
      { type: 'recording_start', option: { format: 'wav', beep_start: true } },
      { type: 'sleep', option: { duration: 4000 } },
      { type: 'recording_stop' },
      { type: 'talk', option: { text: 'recording ${svc.recording.id}' } },
      { type: 'stop' },
    ]);
    const rec = media(r).find((m) => m.command === 'recording_start')!;
    // beep_start: the beep is played first, the recording starts once it has ended
    expect(
      media(r)
        .slice(0, 2)
        .map((m) => [m.command, m.t]),
    ).to.deep.equal([
      ['beep', 0],
      ['recording_start', 250],
    ]);
    expect(first(r).variables['svc.recording.id']).to.equal(rec.recording_id);
    expect(media(r).find((m) => m.command === 'recording_stop')).to.include({ cause: 'stop', duration_ms: 4000 });
    expect(media(r).find((m) => m.command === 'talk')!.text).to.equal(`recording ${rec.recording_id}`);
  });

  it('recording ends on end_of_silence after the caller stops speaking, and runs on_end_flow_id', async () => {
    const r = await sim([{ type: 'recording_start', option: { end_of_silence: 2, on_end_flow_id: id(50) } }, { type: 'sleep', option: { duration: 20000 } }, { type: 'stop' }], {
      speech: [
        { at: 500, duration: 3000 },
        { at: 4000, duration: 1000 },
      ],
      flows: [{ id: id(50), actions: [{ type: 'variable_set', option: { key: 'post', value: '${svc.activeflow.reference_id}' } }] }],
    });
    const stop = media(r).find((m) => m.command === 'recording_stop')!;
    expect(stop).to.include({ cause: 'silence', t: 7000 });
    expect(r.activeflows).to.have.length(2);
    expect(r.activeflows[1]).to.include({ reference_type: 'recording', reference_id: stop.recording_id, reference_activeflow_id: first(r).id });
    expect(r.activeflows[1]!.variables.post).to.equal(stop.recording_id);
  });

  it('amd sync: machine + hangup hangs up with reason amd; human continues', async () => {
    const machine = await sim([{ type: 'answer' }, { type: 'amd', option: { machine_handle: 'hangup' } }, { type: 'talk', option: { text: 'hi' } }], { amd: { result: 'machine', after_ms: 1800 } });
    expect(executed(machine)).to.deep.equal(['answer', 'amd']);
    expect(media(machine).at(-1)).to.include({ command: 'hangup', reason: 'amd', t: 1800 });
    expect(first(machine).variables['svc.call.amd_result']).to.equal('machine');
    expect(first(machine).end_reason).to.equal('call_hangup');
    const human = await sim(
      [
        { type: 'amd', option: { machine_handle: 'hangup' } },
        { type: 'talk', option: { text: 'hi' } },
      ],
      { speech: [{ at: 200, duration: 800 }] },
    );
    expect(executed(human)).to.deep.equal(['amd', 'talk']);
    expect(first(human).variables['svc.call.amd_result']).to.equal('human');
  });

  it('amd async goes on at once and hangs up when the machine is detected', async () => {
    const r = await sim(
      [
        { type: 'amd', option: { machine_handle: 'hangup', async: true } },
        { type: 'play', option: { stream_urls: ['http://m/u.wav'] } },
        { type: 'sleep', option: { duration: 60000 } },
      ],
      {
        amd: { result: 'machine', after_ms: 2500 },
      },
    );
    expect(media(r).find((m) => m.command === 'play')!.t).to.equal(0);
    expect(media(r).find((m) => m.command === 'hangup')).to.include({ reason: 'amd', t: 2500 });
    expect(first(r).end_reason).to.equal('call_hangup');
  });

  it('hangup uses reason, or copies the reason of reference_id', async () => {
    const a = await sim([
      { type: 'hangup', option: { reason: 'busy' } },
      { type: 'talk', option: { text: 'never' } },
    ]);
    expect(executed(a)).to.deep.equal(['hangup']);
    expect(media(a)[0]).to.include({ command: 'hangup', reason: 'busy' });
    const other = id(77);
    const b = await sim([{ type: 'hangup', option: { reason: 'normal', reference_id: '${peer}' } }], { variables: { peer: other }, hangup_reasons: { [other]: 'noanswer' } });
    expect(media(b)[0]).to.include({ reason: 'noanswer' });
  });

  it('mute sends a mute command', async () => {
    const r = await sim([{ type: 'mute', option: { direction: 'in' } }, { type: 'mute' }, { type: 'stop' }]);
    expect(
      media(r)
        .slice(0, 2)
        .map((m) => m.direction),
    ).to.deep.equal(['in', 'both']);
  });

  it('connect waits for the bridge to end; relay_reason hangs up with the far end reason', async () => {
    const r = await sim([{ type: 'connect', option: { destinations: [{ type: 'tel', target: '+15550001' }] } }, { type: 'talk', option: { text: 'back' } }, { type: 'stop' }], {
      connect: { answer: true, answer_after_ms: 1000, duration_ms: 5000 },
    });
    expect(media(r).find((m) => m.command === 'talk')!.t).to.equal(6000);
    const relay = await sim(
      [
        { type: 'connect', option: { destinations: [{ type: 'tel', target: '+1' }], relay_reason: true } },
        { type: 'talk', option: { text: 'x' } },
      ],
      {
        connect: { answer: true, duration_ms: 1000, hangup_reason: 'busy' },
      },
    );
    expect(executed(relay)).to.deep.equal(['connect']);
    expect(media(relay).at(-1)).to.include({ command: 'hangup', reason: 'busy' });
    const unanswered = await sim([{ type: 'connect', option: { destinations: [{ type: 'tel', target: '+1' }] } }, { type: 'stop' }], { connect: { answer: false, answer_after_ms: 3000 } });
    expect(executed(unanswered)).to.deep.equal(['connect', 'stop']);
    expect(events(unanswered, 'connect_ended')[0]).to.include({ answered: false, hangup_reason: 'noanswer' });
  });

  it('call starts independent calls without waiting; chained ones hang up with the master', async () => {
    const r = await sim([
      {
        type: 'call',
        option: {
          destinations: [
            { type: 'tel', target: '+1' },
            { type: 'tel', target: '+2' },
          ],
          chained: true,
          early_execution: true,
          actions: [{ type: 'talk', option: { text: '${svc.call.id}' } }],
        },
      },
      { type: 'sleep', option: { duration: 100 } },
      { type: 'hangup' },
    ]);
    const o = media(r).find((m) => m.command === 'originate')!;
    expect(o).to.include({ chained: true, early_execution: true, actions: 1, t: 0 });
    expect(o.call_ids).to.have.length(2);
    expect(o.master_call_id).to.equal(r.call_id);
    expect(media(r).find((m) => m.command === 'hangup_chained')!.call_ids).to.deep.equal(o.call_ids);
  });

  it('media actions are skipped when the activeflow has no call', async () => {
    const r = await sim(
      [
        { type: 'talk', option: { text: 'x' } },
        { type: 'variable_set', option: { key: 'k', value: 'v' } },
        { type: 'call', option: { destinations: [{ type: 'tel', target: '+1' }] } },
      ],
      { reference_type: 'api' },
    );
    expect(events(r, 'action_skipped').map((e) => e.type)).to.deep.equal(['talk']);
    expect(first(r).variables.k).to.equal('v');
    expect(media(r).map((m) => m.command)).to.deep.equal(['originate']);
    expect(first(r)).to.include({ reference_type: 'api', end_reason: 'finished' });
  });
});
