/**
 * TwiML failures with Twilio's error codes (the debugger's): 12100 the document does not parse,
 * 12200 it parses but breaks the schema (unknown verb or attribute, bad value), 12300 the answer is
 * not TwiML (wrong Content-Type), 11200 the document could not be fetched. Messages name the verb and
 * attribute, never the document's text.
 */
export const TWIML_ERROR_CODES = { parse: 12100, schema: 12200, contentType: 12300, retrieval: 11200 } as const;
export type TwimlErrorCode = (typeof TWIML_ERROR_CODES)[keyof typeof TWIML_ERROR_CODES];

export class TwimlError extends Error {
  constructor(
    readonly code: TwimlErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TwimlError';
  }
}

export const schemaError = (message: string): TwimlError => new TwimlError(12200, message);
