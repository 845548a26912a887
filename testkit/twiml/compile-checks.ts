// What the TwiML compiler suites check of a document: the actions it compiles to (type and option
// only: ids are random) and a refusal (TwimlError with code 12200 whose message names the fault).
import { expect } from 'chai';
import { validateActions, type Action } from '../../core/flow';
import { compileTwiml, TwimlError } from '../../core/twiml/compile';

export const shape = (as: Action[]) => as.map((a) => ({ type: a.type, option: a.option }));

/** The document is refused with 12200 and a message matching `words`. */
export function refused(doc: string, words: RegExp): void {
  let err: unknown;
  try {
    compileTwiml(doc);
  } catch (e) {
    err = e;
  }
  expect(err, `refused: ${doc}`).to.be.instanceOf(TwimlError);
  expect((err as TwimlError).code).to.equal(12200);
  expect((err as TwimlError).message).to.match(words);
}

/** Where the suites' documents come from: relative URLs in them resolve against it. */
export const DOC = 'https://app.example.com/voice/start';

/** The TwimlError a document fetched from DOC (POST) is refused with; throws when it compiles. */
export function refusal(doc: string): TwimlError {
  try {
    compileTwiml(doc, { documentUrl: DOC, method: 'POST' });
  } catch (e) {
    if (e instanceof TwimlError) return e;
    throw e;
  }
  throw new Error(`compiled: ${doc}`);
}

/** Each action is refused by the flow validator with its first problem on `field` (under actions[0].option) and a message matching the words. */
export function optionsRefused(bad: [unknown, string, RegExp][]): void {
  for (const [action, field, words] of bad) {
    const v = validateActions([action]);
    expect(v.ok, field).to.equal(false);
    if (v.ok) continue;
    expect(v.problems[0]!.field, field).to.equal(`actions[0].option.${field}`);
    expect(v.problems[0]!.message, field).to.match(words);
  }
}
