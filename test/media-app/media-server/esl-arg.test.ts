// What the fsmrf backend sends as an event-socket argument (media-app/media-server/fsmrf/esl-arg.ts): a
// CR/LF would end fsmrf's unescaped sendmsg frame and let the rest be read as a command of its own, a `|`
// would reshape speak's engine|voice|text; each is refused before anything reaches the switch (an
// endpoint whose fsmrf side has no methods but `on`, which the leg subscribes with: any other call to
// it would throw a TypeError instead).
import { expect } from 'chai';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { EslArgError, eslArg, eslText } from '../../../media-app/media-server/fsmrf/esl-arg';
import { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';

describe('fsmrf backend: event-socket arguments', () => {
  it('a line break or NUL is refused, a pipe only where it separates speak fields; plain values pass unchanged', () => {
    for (const bad of ['a\nb', 'a\rb', 'a\r\n\r\napi system id', 'a\0b']) expect(() => eslArg('f', bad)).to.throw(EslArgError, /line break or NUL/);
    expect(() => eslArg('voice', 'en|x', { pipe: true })).to.throw(EslArgError, /'\|'/);
    expect(eslArg('file', '/tmp/a b|c.wav')).to.equal('/tmp/a b|c.wav');
    expect(eslText('text', 'one\r\n\r\napi status\nthree')).to.equal('one api status three');
    expect(() => eslText('text', 'a\0b')).to.throw(EslArgError);
  });

  it("spoken text cannot open the switch's variable expansion: ${…} and $${…} reach it broken, the words kept", () => {
    // mod_conference's saymember and every application's argument go through switch_channel_expand_variables,
    // which runs `${api(args)}` as an API command: `${system(…)}` would be a shell command on the switch
    const said = eslText('text', 'Hello ${system(touch /tmp/x)} and $${x} ${ ok } $5 {a}');
    expect(said).to.not.match(/\$\{/);
    expect(said).to.equal('Hello $ {system(touch /tmp/x)} and $ $ {x} $ { ok } $5 {a}');
    expect(eslText('text', 'a $\r\n{b}')).to.equal('a $ {b}');
  });

  it('a file name or other argument with ${ or $${ is refused: the switch would expand it', () => {
    for (const bad of ['/tmp/${system(id)}.wav', 'http://x/$${v}', '${uuid}']) expect(() => eslArg('play file', bad)).to.throw(EslArgError, /expand/);
    expect(eslArg('play file', 'http://x/a$b{c}.wav')).to.equal('http://x/a$b{c}.wav');
  });

  it('each method refuses such a value before it reaches fsmrf', async () => {
    const ep = new FsmrfCallEndpoint({ uuid: 'u', on: () => undefined, local: { sdp: '' } } as unknown as FsEndpoint);
    const refused = async (p: () => Promise<unknown>) => {
      const e = await p().then(
        () => null,
        (x: Error) => x,
      );
      expect(e, 'refused').to.be.an.instanceOf(EslArgError);
    };
    await refused(() => ep.play('/tmp/a.wav\n\napi status'));
    await refused(() => ep.play(['ok.wav', 'b\r\nc']));
    await refused(() => ep.say('hello', { voice: 'en|evil' }));
    await refused(() => ep.say('hello', { provider: 'x\ny' }));
    await refused(() => ep.say('a\0b'));
    await refused(() => ep.playCollect({ file: 'a\nb' }));
    await refused(() => ep.playCollect({ file: 'a.wav', invalidFile: 'b\nc' }));
    await refused(() => ep.playCollect({ file: 'a.wav', terminators: '#\n' }));
    await refused(() => ep.record('/tmp/r.wav\r\napi status'));
    await refused(() => ep.record('/tmp/r.wav', { end_of_key: '#\n' }));
    await refused(() => ep.play('/tmp/${system(id)}.wav'));
    await refused(() => ep.record('/tmp/${x}.wav'));
  });
});
