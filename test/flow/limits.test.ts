import { expect } from 'chai';
import { ActiveflowManager } from '../../media-app/flow/manager';
import { ListEmitter } from '../../media-app/flow/events';
import { egressPolicyFor } from '../../core/net';
import { PolicyHttp } from '../../media-app/kit/http';
import { DEFAULT_LIMITS } from '../../media-app/flow/limits';
import { realClock } from '../../media-app/kit/clock';
import { InMemoryActiveflowStore, InMemoryFlowStore } from '../../media-app/flow/stores';
import { parseActions } from '../../core/flow';
import { events, executed, first, id, media, sim } from './helpers';

describe('flow limits and stopping', () => {
  it('a goto loop is stopped by its loop_count cap (maxLoopCount)', async () => {
    const r = await sim([{ id: id(1), type: 'variable_set', option: { key: 'n', value: '${n}x' } }, { type: 'goto', option: { target_id: id(1), loop_count: 1_000_000 } }, { type: 'stop' }], {
      limits: { maxLoopCount: 7, maxExecutedActions: 5000 },
    });
    expect(first(r).variables.n).to.equal('x'.repeat(8));
    expect(first(r).end_reason).to.equal('stop_action');
  });

  it('a loop without end (next_id cycle) is stopped by the executed-action cap', async () => {
    const r = await sim([
      { id: id(1), type: 'variable_set', option: { key: 'k', value: 'v' }, next_id: id(2) },
      { id: id(2), type: 'branch', option: { variable: 'none', default_target_id: id(1) } },
    ]);
    const a = first(r);
    expect(a.executed_actions).to.have.length(DEFAULT_LIMITS.maxExecutedActions);
    expect(a).to.include({ status: 'ended', end_reason: 'limit' });
    expect(a.error).to.contain('executed action limit');
  });

  it('stop in the middle of a long sleep ends it at once, idempotently', async () => {
    const r = await sim(
      [
        { type: 'talk', option: { text: 'hi' } },
        { type: 'sleep', option: { duration: 600_000 } },
        { type: 'talk', option: { text: 'never' } },
      ],
      {
        events: [
          { at: 5000, stop: true },
          { at: 5001, stop: true },
        ],
      },
    );
    const a = first(r);
    expect(a).to.include({ status: 'ended', end_reason: 'stopped' });
    expect(executed(r)).to.deep.equal(['talk', 'sleep']);
    expect(events(r, 'activeflow_ended')[0]!.t).to.equal(5000);
    expect(events(r, 'activeflow_ended')).to.have.length(1);
    expect(r.duration_ms).to.be.lessThan(6000);
  });

  it('stop in the middle of a talk cancels the prompt', async () => {
    const r = await sim(
      [
        { type: 'talk', option: { text: 'x'.repeat(1000) } },
        { type: 'talk', option: { text: 'never' } },
      ],
      { events: [{ at: 2500, stop: true }] },
    );
    expect(events(r, 'media_stopped')[0]).to.include({ command: 'talk', after_ms: 2500 });
    expect(media(r).filter((m) => m.command === 'talk')).to.have.length(1);
    expect(first(r).end_reason).to.equal('stopped');
  });

  it('a caller hangup during digits_receive ends the activeflow', async () => {
    const r = await sim(
      [
        { type: 'digits_receive', option: { duration: 60_000, length: 4 } },
        { type: 'talk', option: { text: 'never' } },
      ],
      {
        events: [
          { at: 100, dtmf: '12' },
          { at: 3000, hangup: true, reason: 'normal' },
        ],
      },
    );
    expect(first(r)).to.include({ end_reason: 'call_hangup' });
    expect(first(r).variables['svc.call.hangup_reason']).to.equal('normal');
    expect(executed(r)).to.deep.equal(['digits_receive']);
  });

  it('on wall-clock time: stop() during a real sleep resolves promptly and is idempotent', async () => {
    const flows = new InMemoryFlowStore();
    const store = new InMemoryActiveflowStore();
    const emitter = new ListEmitter();
    const m = new ActiveflowManager({ store, emitter, flows, clock: realClock, http: new PolicyHttp(egressPolicyFor({})), limits: DEFAULT_LIMITS });
    const s = await m.start({ customer_id: id(0), reference_type: 'api', actions: parseActions([{ type: 'sleep', option: { duration: 60_000 } }, { type: 'stop' }]) });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    const [a, b] = await Promise.all([m.stop(s.id), m.stop(s.id)]);
    expect(Date.now() - t0).to.be.lessThan(1000);
    expect(a!.status).to.equal('ended');
    expect(b!.end_reason).to.equal('stopped');
    await m.settled();
    expect((await m.stop(s.id))!.end_reason).to.equal('stopped'); // after the end: the stored record
    expect(emitter.events.map((e) => e.type)).to.include.members(['activeflow_created', 'activeflow_updated']);
    expect((await store.list({ limit: 10 })).map((x) => x.id)).to.deep.equal([s.id]);
  });

  it('a redirect that lands while an action is being recorded, before it runs, ends that action at once (issue 54)', async () => {
    // the record of the first action (activeflow_updated) is held: the redirect lands between the
    // runner's check for one and the action's start, as a Twilio redirect right after the answer can
    let release: () => void = () => undefined;
    let held: () => void = () => undefined;
    const recording = new Promise<void>((r) => (held = r));
    class HeldStore extends InMemoryActiveflowStore {
      private first = true;
      override async update(record: Parameters<InMemoryActiveflowStore['update']>[0]): Promise<void> {
        if (this.first && record.current_action?.type === 'sleep') {
          this.first = false;
          held();
          await new Promise<void>((r) => (release = r));
        }
        return super.update(record);
      }
    }
    const m = new ActiveflowManager({
      store: new HeldStore(),
      emitter: new ListEmitter(),
      flows: new InMemoryFlowStore(),
      clock: realClock,
      http: new PolicyHttp(egressPolicyFor({})),
      limits: DEFAULT_LIMITS,
    });
    const s = await m.start({ customer_id: id(0), reference_type: 'api', actions: parseActions([{ type: 'sleep', option: { duration: 60_000 } }, { type: 'stop' }]) });
    await recording;
    expect(s.redirect(parseActions([{ type: 'variable_set', option: { key: 'redirected', value: 'yes' } }]))).to.equal(true);
    const t0 = Date.now();
    release();
    const end = await Promise.race([s.done, new Promise<null>((r) => setTimeout(() => r(null), 5_000).unref())]);
    expect(end, 'the 60 s sleep ran on after the redirect').to.not.equal(null);
    expect(Date.now() - t0).to.be.lessThan(1000);
    expect(end!.variables.redirected).to.equal('yes');
    await m.stop(s.id);
    await m.settled();
  });
});

describe('an IVR on the simulator', () => {
  const ivr = [
    { type: 'answer' },
    { id: id(1), type: 'talk', option: { text: 'Press 1 for sales, 2 to leave a message', language: 'en-US' } },
    { type: 'digits_receive', option: { duration: 5000, length: 1 } },
    { type: 'branch', option: { target_ids: { '1': id(10), '2': id(20) }, default_target_id: id(30) } },
    { id: id(10), type: 'play', option: { stream_urls: ['https://media.example/sales.wav'] } },
    { type: 'hangup' },
    { id: id(20), type: 'play', option: { stream_urls: ['https://media.example/beep-after.wav'] } },
    { type: 'recording_start', option: { end_of_key: '#', duration: 60 } },
    { type: 'digits_receive', option: { duration: 30000, key: '#' } },
    { type: 'recording_stop' },
    { type: 'talk', option: { text: 'Saved as ${svc.recording.id}' } },
    { type: 'hangup' },
    { id: id(30), type: 'goto', option: { target_id: id(1), loop_count: 2 } },
    { type: 'hangup', option: { reason: 'noanswer' } },
  ];

  it('talk → digits → branch on 2 → play → record until # → hangup', async () => {
    // The caller presses 2 while the prompt still plays: it is carried into digits_receive.
    const r = await sim(ivr, {
      events: [
        { at: 1000, dtmf: '2' },
        { at: 12_000, dtmf: '#' },
      ],
      media: { play_ms: 1500 },
    });
    expect(executed(r)).to.deep.equal(['answer', 'talk', 'digits_receive', 'branch', 'play', 'recording_start', 'digits_receive', 'recording_stop', 'talk', 'hangup']);
    const m = media(r);
    const talk = m.find((x) => x.command === 'talk')!;
    const rec = m.find((x) => x.command === 'recording_start')!;
    expect(m.find((x) => x.command === 'play')).to.include({ url: 'https://media.example/beep-after.wav', t: talk.duration_ms });
    expect(rec.t).to.equal((talk.duration_ms as number) + 1500);
    expect(m.find((x) => x.command === 'recording_stop')).to.include({ cause: 'key', t: 12_000 });
    expect(m.filter((x) => x.command === 'talk')[1]!.text).to.equal(`Saved as ${rec.recording_id}`);
    expect(m.at(-1)).to.include({ command: 'hangup', reason: 'normal' });
    const a = first(r);
    expect(a.variables['svc.recording.id']).to.equal(rec.recording_id);
    expect(a.executed_actions.map((x) => x.tm_execute)).to.satisfy((ts: string[]) => ts.every((t, i) => i === 0 || t >= ts[i - 1]!));
  });

  it('no key: re-prompts twice, then hangs up with noanswer', async () => {
    const r = await sim(ivr);
    expect(executed(r).filter((t) => t === 'talk')).to.have.length(3);
    expect(media(r).at(-1)).to.include({ command: 'hangup', reason: 'noanswer' });
  });

  it('1 goes to sales', async () => {
    const r = await sim(ivr, { events: [{ at: 4000, dtmf: '1' }] });
    expect(media(r).find((x) => x.command === 'play')!.url).to.equal('https://media.example/sales.wav');
  });
});
