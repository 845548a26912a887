// What the TwiML compiler suites check of a document: the actions it compiles to (type and option
// only: ids are random) and a refusal (TwimlError with code 12200 whose message names the fault).
import { expect } from 'chai';
import type { Action } from '../../core/flow';
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
