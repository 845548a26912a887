// Public surface of the SIP message model.
export { Headers, COMPACT_FORMS, LIST_HEADERS, canonicalName, splitList } from './headers';
export type { HeaderEntry } from './headers';
export { parseParams, formatParams, quote, unquote, isToken } from './params';
export type { Params } from './params';
export { SipUri, OtherUri, UriError, parseUri, parseSipUri, isValidHost } from './uri';
export type { Uri } from './uri';
export { NameAddr, Via, FieldError, parseNameAddr, parseVia, parseCSeq } from './fields';
export type { CSeq } from './fields';
export { SipMessage, SipRequest, SipResponse, MAGIC_COOKIE, isRequest, newBranch, randomToken, reasonPhrase } from './message';
export type { SourceInfo, TransportName } from './message';
export { parseMessage, SipParseError, DEFAULT_LIMITS } from './parser';
export type { ParseLimits, ParseOptions } from './parser';
export { StreamFramer } from './framer';
export type { FrameEvent } from './framer';
