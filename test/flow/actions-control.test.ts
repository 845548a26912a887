import { expect } from 'chai';
import { ACTION_SPECS, ACTION_TYPES } from '../../core/flow';
import { events, executed, first, id, media, sim } from './helpers';

describe('flow actions on a virtual call: control', () => {
  it('sets svc. system variables and custom ones; substitutes them in options', async () => {
    const r = await sim(
      [
        { type: 'variable_set', option: { key: 'greeting', value: 'hi ${who} from ${svc.call.source.target}' } },
        { type: 'talk', option: { text: '${greeting} (${svc.call.direction}, ${svc.activeflow.id})' } },
        { type: 'stop' },
      ],
      { variables: { who: 'Bo', 'svc.call.id': 'forged' }, call: { source: { type: 'tel', target: '+4420' } } },
    );
    const a = first(r);
    expect(a.variables.greeting).to.equal('hi Bo from +4420');
    expect(media(r)[0]!.text).to.equal(`hi Bo from +4420 (incoming, ${a.id})`);
    expect(a.variables['svc.call.id']).to.equal(r.call_id);
    expect(a.variables['svc.activeflow.reference_id']).to.equal(r.call_id);
    expect(a.reference_type).to.equal('call');
  });

  it('branch jumps on the digits (default variable), resets it, falls to default_target_id', async () => {
    const flow = [
      { type: 'digits_receive', option: { duration: 2000, length: 1 } },
      { type: 'branch', option: { target_ids: { '1': id(1), '2': id(2) }, default_target_id: id(3) } },
      { id: id(1), type: 'variable_set', option: { key: 'picked', value: 'one' } },
      { type: 'stop' },
      { id: id(2), type: 'variable_set', option: { key: 'picked', value: 'two' } },
      { type: 'stop' },
      { id: id(3), type: 'variable_set', option: { key: 'picked', value: 'other' } },
    ];
    const two = await sim(flow, { events: [{ at: 100, dtmf: '2' }] });
    expect(first(two).variables.picked).to.equal('two');
    expect(first(two).variables['svc.call.digits']).to.equal('');
    const none = await sim(flow);
    expect(first(none).variables.picked).to.equal('other');
    const named = await sim([{ type: 'branch', option: { variable: 'lang', target_ids: { fr: id(1) } } }, { type: 'stop' }, { id: id(1), type: 'variable_set', option: { key: 'x', value: 'fr' } }], {
      variables: { lang: 'fr' },
    });
    expect(first(named).variables.x).to.equal('fr');
  });

  it('goto loops loop_count times, then falls through', async () => {
    const r = await sim([{ id: id(1), type: 'variable_set', option: { key: 'n', value: '${n}x' } }, { type: 'goto', option: { target_id: id(1), loop_count: 3 } }, { type: 'stop' }]);
    expect(first(r).variables.n).to.equal('xxxx');
    expect(executed(r).filter((t) => t === 'goto')).to.have.length(4);
  });

  it('condition_variable compares strings, numbers and lengths', async () => {
    const check = async (option: Record<string, unknown>, variables: Record<string, string>) => {
      const r = await sim(
        [
          { type: 'condition_variable', option: { ...option, false_target_id: id(9) } },
          { type: 'variable_set', option: { key: 'm', value: 'yes' } },
          { type: 'stop' },
          { id: id(9), type: 'variable_set', option: { key: 'm', value: 'no' } },
        ],
        { variables },
      );
      return first(r).variables.m;
    };
    expect(await check({ condition: '==', variable: 'v', value_type: 'string', value_string: 'abc' }, { v: 'abc' })).to.equal('yes');
    expect(await check({ condition: '!=', variable: '${v}', value_string: 'abc' }, { v: 'abc' })).to.equal('no');
    expect(await check({ condition: '>=', variable: 'v', value_type: 'number', value_number: 10 }, { v: '10.5' })).to.equal('yes');
    expect(await check({ condition: '<', variable: 'v', value_type: 'number', value_number: 10 }, { v: '9' })).to.equal('yes');
    expect(await check({ condition: '<', variable: 'v', value_type: 'number', value_number: 10 }, { v: 'abc' })).to.equal('no');
    expect(await check({ condition: '>', variable: 'v', value_type: 'length', value_length: 3 }, { v: '1234' })).to.equal('yes');
    expect(await check({ condition: '==', variable: 'v', value_type: 'length', value_length: 0 }, {})).to.equal('yes');
  });

  it('condition_datetime compares the UTC time field by field, with wildcards and weekdays', async () => {
    const run = async (option: Record<string, unknown>, start: string) => {
      const r = await sim(
        [
          { type: 'condition_datetime', option: { ...option, false_target_id: id(9) } },
          { type: 'variable_set', option: { key: 'm', value: 'yes' } },
          { type: 'stop' },
          { id: id(9), type: 'variable_set', option: { key: 'm', value: 'no' } },
        ],
        { start_time: start },
      );
      return first(r).variables.m;
    };
    // 2026-01-05 is a Monday (weekday 1).
    expect(await run({ condition: '>=', hour: 9, minute: -1 }, '2026-01-05T09:30:00Z')).to.equal('yes');
    expect(await run({ condition: '>=', hour: 9, minute: -1 }, '2026-01-05T08:59:00Z')).to.equal('no');
    expect(await run({ condition: '<', hour: 17, minute: -1, weekdays: [1, 2, 3, 4, 5] }, '2026-01-05T16:00:00Z')).to.equal('yes');
    expect(await run({ condition: '<', hour: 17, minute: -1, weekdays: [1, 2, 3, 4, 5] }, '2026-01-04T16:00:00Z')).to.equal('no');
    expect(await run({ condition: '==', month: 12, day: 25, hour: -1, minute: -1 }, '2026-12-25T03:00:00+05:00')).to.equal('no'); // 24th in UTC
    expect(await run({ condition: '==', month: 12, day: 25, hour: -1, minute: -1 }, '2026-12-25T03:00:00Z')).to.equal('yes');
  });

  it('deprecated condition_call_digits maps onto a length or key check', async () => {
    const flow = (opt: Record<string, unknown>) => [
      { type: 'digits_receive', option: { duration: 1000, key: '#' } },
      { type: 'condition_call_digits', option: { ...opt, false_target_id: id(9) } },
      { type: 'variable_set', option: { key: 'm', value: 'yes' } },
      { type: 'stop' },
      { id: id(9), type: 'variable_set', option: { key: 'm', value: 'no' } },
    ];
    expect(first(await sim(flow({ length: 3 }), { events: [{ at: 0, dtmf: '12#' }] })).variables.m).to.equal('yes');
    expect(first(await sim(flow({ length: 4 }), { events: [{ at: 0, dtmf: '12#' }] })).variables.m).to.equal('no');
    expect(first(await sim(flow({ key: '#' }), { events: [{ at: 0, dtmf: '1#' }] })).variables.m).to.equal('yes');
  });

  it('next_id overrides the next array element', async () => {
    const r = await sim([
      { type: 'variable_set', option: { key: 'a', value: '1' }, next_id: id(3) },
      { type: 'variable_set', option: { key: 'b', value: '1' } },
      { id: id(3), type: 'stop' },
    ]);
    expect(executed(r)).to.deep.equal(['variable_set', 'stop']);
    expect(first(r).variables.b).to.equal(undefined);
  });

  it('stop ends the flow; block waits for the continue request', async () => {
    const r = await sim([{ type: 'block' }, { type: 'variable_set', option: { key: 'after', value: 'y' } }, { type: 'stop' }, { type: 'talk', option: { text: 'never' } }], {
      events: [{ at: 4000, continue: true }],
    });
    expect(events(r, 'continue_requested')[0]).to.include({ t: 4000, released: true });
    expect(r.timeline.find((e) => e.type === 'variable_set')!.t).to.equal(4000);
    expect(executed(r)).to.deep.equal(['block', 'variable_set', 'stop']);
    expect(first(r).end_reason).to.equal('stop_action');
    const stuck = await sim([{ type: 'block' }, { type: 'stop' }]);
    expect(stuck.outcome).to.equal('stalled');
    expect(first(stuck)).to.include({ status: 'ended', end_reason: 'stopped' });
  });

  it('fetch_flow runs another flow then resumes; unknown flow ends with an error', async () => {
    const r = await sim(
      [
        { type: 'fetch_flow', option: { flow_id: id(40) } },
        { type: 'variable_set', option: { key: 'back', value: 'y' } },
      ],
      {
        flows: [{ id: id(40), actions: [{ type: 'variable_set', option: { key: 'inner', value: 'y' } }] }],
      },
    );
    expect(executed(r)).to.deep.equal(['fetch_flow', 'variable_set', 'variable_set']);
    expect(first(r).variables).to.include({ inner: 'y', back: 'y' });
    const missing = await sim([{ type: 'fetch_flow', option: { flow_id: id(41) } }]);
    expect(first(missing)).to.include({ end_reason: 'error' });
    expect(first(missing).error).to.contain('not found');
  });

  it('on_complete_flow_id starts the next flow on the same call, bounded in depth', async () => {
    const r = await sim(
      [{ type: 'variable_set', option: { key: 'k', value: 'first' } }],
      {
        flows: [{ id: id(60), on_complete_flow_id: id(60), actions: [{ type: 'variable_set', option: { key: 'k', value: '${k}+' } }] }],
      },
      { on_complete_flow_id: id(60) },
    );
    expect(r.activeflows).to.have.length(6); // the first plus maxCompleteChain (5) hops
    expect(r.activeflows.map((a) => a.complete_count)).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(r.activeflows[1]!.reference_activeflow_id).to.equal(r.activeflows[0]!.id);
    expect(r.activeflows[5]!.variables.k).to.equal('first+++++');
    expect(events(r, 'complete_chain_limit')).to.have.length(1);
    expect(media(r).filter((m) => m.command === 'hangup')).to.have.length(1);
  });

  it('actions of later subsystems end the activeflow with an error naming the subsystem', async () => {
    const later = ACTION_TYPES.filter((t) => ACTION_SPECS[t].subsystem);
    expect(later).to.have.length(24);
    const samples: Record<string, Record<string, unknown>> = {
      conference_join: { conference_id: id(1) },
      confbridge_join: { confbridge_id: id(1) },
      queue_join: { queue_id: id(1) },
      queue_dequeue: { queue_id: id(1) },
      message_send: { destinations: [{ type: 'tel', target: '+1' }], text: 'x' },
      email_send: { destinations: [{ type: 'email', target: 'a@b' }] },
      conversation_send: { conversation_id: id(1), text: 'x' },
      twiml: { url: 'https://twiml.example.com/voice' },
      twiml_recording: { source: 'RecordVerb', status_callback: 'https://twiml.example.com/rec' },
      voicemail: { box_id: id(1) },
      sip_refer: { refer_to: 'sip:alice@pbx.example.com' },
      conversation_relay: { url: 'wss://relay.example.com/app' },
    };
    for (const t of later) {
      const r = await sim([{ type: 'answer' }, { type: t, option: samples[t] ?? {} }, { type: 'talk', option: { text: 'never' } }]);
      const a = first(r);
      expect(a.end_reason, t).to.equal('error');
      expect(a.error, t).to.contain(`action ${t} needs the ${ACTION_SPECS[t].subsystem} subsystem`);
      expect(executed(r), t).to.deep.equal(['answer', t]);
    }
  });
});
