// The caller's voice (issue 56: "caller: language, voice, persona"; core/evals/schema.ts EVAL_CALLER_VOICES):
// every voice the API accepts is one this machine's espeak-ng says (the real one), each sounds unlike the
// language's own voice, and a scripted caller's lines (evals/call.ts scriptSpeech) are said in its voice.
import { expect } from 'chai';
import { EVAL_CALLER_VOICES, evalCallerSchema } from '../../core/evals/schema';
import { scriptSpeech } from '../../evals/call';
import { speak } from '../../evals/speech';

const LINE = 'What are your opening hours?';
const same = (a: Int16Array, b: Int16Array) => a.length === b.length && a.every((v, i) => v === b[i]);

describe("evals caller's voice: an espeak-ng variant of its language", function () {
  this.timeout(60_000);

  it('every voice the API accepts is said by espeak-ng, and differs from the language’s own voice', async () => {
    const own = await speak(LINE, 'en-us', { memo: false });
    for (const voice of EVAL_CALLER_VOICES) {
      const said = await speak(LINE, 'en-us', { variant: voice, memo: false });
      expect(said.length, voice).to.be.above(8000 * 0.5);
      expect(same(said, own), `${voice} sounds like the language's own voice`).to.equal(false);
    }
  });

  it("a scripted caller's lines are said in its voice; without one, in the language's", async () => {
    const caller = evalCallerSchema.parse({ language: 'en-US', voice: 'f3', turns: [{ wait_ms: 500 }, { say: LINE }, { hangup: true }] });
    const lines = await scriptSpeech(caller);
    expect([...lines.keys()]).to.deep.equal([1]);
    expect(same(lines.get(1)!, await speak(LINE, 'en-US', { variant: 'f3' }))).to.equal(true);
    expect(same(lines.get(1)!, await speak(LINE, 'en-US'))).to.equal(false);
    const plain = await scriptSpeech(evalCallerSchema.parse({ language: 'en-US', turns: [{ say: LINE }] }));
    expect(same(plain.get(0)!, await speak(LINE, 'en-US'))).to.equal(true);
  });
});
