import { expect } from 'chai';
import { ACTION_SPECS, ACTION_TYPES, checkClientVariables, parseActions, substitute, substituteDeep, substituteOption, validateActions } from '../../core/flow';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { ApiError } from '../../core/errors';
import { id } from './helpers';

function problems(actions: unknown) {
  const r = validateActions(actions);
  if (r.ok) throw new Error('expected the flow to be rejected');
  return r.problems;
}

describe('flow validation', () => {
  it('registers every action type of the spec, and our extensions park, twiml and voicemail, with a schema', () => {
    expect(ACTION_TYPES).to.have.length(52);
    expect(ACTION_TYPES).to.include.members(['park', 'twiml', 'voicemail', 'voicemail_main', 'speech_gather']);
    for (const t of ACTION_TYPES) expect(ACTION_SPECS[t].schema, t).to.not.equal(undefined);
  });

  it('gives actions without an id a fresh one and keeps given ids', () => {
    const out = parseActions([{ type: 'answer' }, { id: id(1), type: 'hangup' }, { id: '', type: 'stop' }]);
    expect(out[0]!.id).to.match(/^[0-9a-f-]{36}$/);
    expect(out[1]!.id).to.equal(id(1));
    expect(out[2]!.id).to.not.equal('');
    expect(new Set(out.map((a) => a.id)).size).to.equal(3);
    expect(out[0]!.next_id).to.equal('00000000-0000-0000-0000-000000000000');
  });

  it('names the action index and field of a bad option', () => {
    const p = problems([{ type: 'answer' }, { type: 'sleep', option: { duration: 'long' } }]);
    expect(p).to.have.length(1);
    expect(p[0]).to.include({ index: 1, field: 'actions[1].option.duration' });
  });

  it('reports a missing required option field as required', () => {
    const p = problems([{ type: 'talk', option: {} }]);
    expect(p[0]).to.deep.equal({ index: 0, field: 'actions[0].option.text', message: 'is required' });
  });

  it('rejects unknown and retired types with a hint', () => {
    const p = problems([{ type: 'agent_call' }, { type: 'dance' }, {}]);
    expect(p.map((x) => x.field)).to.deep.equal(['actions[0].type', 'actions[1].type', 'actions[2].type']);
    expect(p[0]!.message).to.contain('use connect');
    expect(p[2]!.message).to.equal('is required');
  });

  it('requires targets to exist in the same flow', () => {
    const p = problems([
      { id: id(1), type: 'answer' },
      { type: 'goto', option: { target_id: id(9) } },
      { type: 'branch', option: { target_ids: { '1': id(1), '2': id(8) }, default_target_id: id(7) } },
      { type: 'condition_variable', option: { condition: '==', variable: 'x', false_target_id: id(6) } },
      { type: 'answer', next_id: id(5) },
    ]);
    expect(p.map((x) => `${x.index}:${x.field}`)).to.deep.equal([
      '1:actions[1].option.target_id',
      '2:actions[2].option.default_target_id',
      '2:actions[2].option.target_ids.2',
      '3:actions[3].option.false_target_id',
      '4:actions[4].next_id',
    ]);
  });

  it('rejects duplicate and malformed ids, and non-arrays', () => {
    const p = problems([
      { id: id(1), type: 'answer' },
      { id: id(1), type: 'answer' },
      { id: 'nope', type: 'answer' },
    ]);
    expect(p.map((x) => x.field)).to.deep.equal(['actions[1].id', 'actions[2].id']);
    expect(problems({}).map((x) => x.field)).to.deep.equal(['actions']);
  });

  it('checks nested call actions with their own ids', () => {
    const p = problems([{ type: 'call', option: { destinations: [{ type: 'tel', target: '+1' }], actions: [{ type: 'goto', option: { target_id: id(3) } }] } }]);
    expect(p[0]).to.include({ index: 0, field: 'actions[0].option.actions[0].option.target_id' });
    expect(problems([{ type: 'call', option: { destinations: [] } }])[0]!.field).to.equal('actions[0].option.destinations');
  });

  it('accepts the deprecated condition types', () => {
    const out = parseActions([
      { id: id(1), type: 'answer' },
      { type: 'condition_call_digits', option: { length: 2, false_target_id: id(1) } },
      { type: 'condition_call_status', option: { status: 'progressing', false_target_id: id(1) } },
      { type: 'ai_talk', option: { ai_id: id(4) } },
    ]);
    expect(out.map((a) => a.type)).to.deep.equal(['answer', 'condition_call_digits', 'condition_call_status', 'ai_talk']);
    expect(ACTION_SPECS.condition_call_digits.deprecated).to.equal(true);
  });

  it('checks option ranges: digits_send, condition_datetime, variable_set keys', () => {
    expect(problems([{ type: 'digits_send', option: { digits: '12x' } }])[0]!.field).to.equal('actions[0].option.digits');
    expect(problems([{ type: 'digits_send', option: { digits: '1', duration: 50 } }])[0]!.field).to.equal('actions[0].option.duration');
    expect(problems([{ type: 'condition_datetime', option: { condition: '>=', hour: 24 } }])[0]!.field).to.equal('actions[0].option.hour');
    expect(problems([{ type: 'variable_set', option: { key: 'svc.call.id', value: 'x' } }])[0]!.field).to.equal('actions[0].option.key');
    expect(problems([{ type: 'variable_set', option: { key: 'has space' } }])[0]!.field).to.equal('actions[0].option.key');
    expect(problems([{ type: 'webhook_send', option: { uri: 'ftp://x' } }])[0]!.field).to.equal('actions[0].option.uri');
    // play reads only http(s): a path would read the server's disk (other customers' recordings)
    for (const url of ['/etc/passwd', 'file:///etc/passwd', '../recordings/x.wav', 'tone_stream://beep']) {
      expect(problems([{ type: 'play', option: { stream_urls: ['https://ok.example/a.wav', url] } }])[0]!.field, url).to.equal('actions[0].option.stream_urls[1]');
    }
    expect(validateActions([{ type: 'play', option: { stream_urls: ['https://m.example/a.wav', '${prompt_url}'] } }]).ok).to.equal(true);
  });

  it("connect's hold_music: 'default', 'none' or {url} (http(s), through the egress policy), anything else refused", () => {
    const egress = new EgressPolicy(egressSettingsFromEnv({}));
    const connect = (hold_music: unknown) => [{ type: 'connect', option: { destinations: [{ type: 'extension', target: '2001' }], hold_music } }];
    const issues = (hold_music: unknown) => {
      const r = validateActions(connect(hold_music), { egress });
      return r.ok ? [] : r.problems.map((p) => `${p.field}: ${p.message}`);
    };
    for (const ok of ['default', 'none', { url: 'https://music.example/hold.mp3' }, { url: 'https://music.example/${tune}.wav' }]) expect(issues(ok), JSON.stringify(ok)).to.deep.equal([]);
    expect(issues('loud')).to.deep.equal(['actions[0].option.hold_music: must be "default", "none" or {"url": "<an http or https URL of WAV or MP3 audio>"}']);
    expect(issues({ url: 'file:///etc/passwd' })).to.deep.equal(['actions[0].option.hold_music.url: must be an http or https URL']);
    expect(issues({ url: 'https://music.example/a.wav', loop: true })[0]).to.match(/^actions\[0\]\.option\.hold_music: Unrecognized key/);
    // a literal URL the egress policy forbids is refused when the flow is saved, as play's are
    expect(issues({ url: 'http://169.254.169.254/latest/meta-data' })[0]).to.match(/^actions\[0\]\.option\.hold_music\.url: /);
    // a variable lands in the URL percent-encoded (it cannot add a path or a query)
    const option = substituteOption('connect', { hold_music: { url: 'https://music.example/${tune}.wav' } }, () => 'a/b?c');
    expect(option.hold_music).to.deep.equal({ url: 'https://music.example/a%2Fb%3Fc.wav' });
  });

  it('throws INVALID_ARGUMENT with one detail per problem', () => {
    try {
      parseActions([
        { type: 'sleep', option: { duration: -1 } },
        { type: 'play', option: { stream_urls: [] } },
      ]);
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(ApiError);
      const err = e as ApiError;
      expect(err.reason).to.equal('INVALID_ARGUMENT');
      expect(err.details!.map((d) => d.field)).to.deep.equal(['actions[0].option.duration', 'actions[1].option.stream_urls']);
    }
  });
});

describe('flow variables', () => {
  const vars = new Map([
    ['name', 'Ann'],
    ['svc.call.digits', '12'],
    ['evil', '${name}'],
  ]);
  const lookup = (k: string) => vars.get(k);

  it('substitutes ${var}, unknown as empty, in one pass', () => {
    expect(substitute('hi ${name}, you pressed ${svc.call.digits}${nope}!', lookup)).to.equal('hi Ann, you pressed 12!');
    expect(substitute('${evil}', lookup)).to.equal('${name}');
    expect(substitute('no vars', lookup)).to.equal('no vars');
  });

  it('substitutes every string inside an option', () => {
    const out = substituteDeep({ a: '${name}', b: ['x${name}', 3], c: { d: '${svc.call.digits}' }, e: true }, lookup);
    expect(out).to.deep.equal({ a: 'Ann', b: ['xAnn', 3], c: { d: '12' }, e: true });
  });

  it('checks client variables: strings only, limits, svc. dropped', () => {
    const ok = checkClientVariables({ a: '1', 'svc.call.id': 'x' });
    expect(ok.problems).to.deep.equal([]);
    expect(ok.variables).to.deep.equal({ a: '1' });
    expect(checkClientVariables({ a: 1 }).problems[0]!.field).to.equal('variables.a');
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v']));
    expect(checkClientVariables(many).problems[0]!.message).to.contain('100');
    expect(checkClientVariables({ big: 'x'.repeat(33 * 1024) }).problems[0]!.message).to.contain('32 KB');
  });
});
