/**
 * TwiML text → a tree of elements. fast-xml-parser is not a validating parser, so the text is first
 * checked for well-formedness; a DOCTYPE is refused outright (no internal or external entities, so
 * no entity expansion of any kind: only the five XML entities and character references are decoded).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { TwimlError } from './errors';

export interface TwimlElement {
  name: string;
  attrs: Record<string, string>;
  children: TwimlNode[];
}
export type TwimlNode = TwimlElement | { text: string };

/** Documents larger than this are refused (Twilio's limit is 64 kB). */
export const MAX_TWIML_BYTES = 64 * 1024;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  allowBooleanAttributes: false,
  processEntities: true,
  htmlEntities: true,
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  commentPropName: false,
});

type Raw = Record<string, unknown>;

export const isElement = (n: TwimlNode): n is TwimlElement => 'name' in n;

/** The `<Response>` element of a document; TwimlError 12100 when it does not parse or is not one. */
export function parseTwiml(text: string): TwimlElement {
  if (Buffer.byteLength(text, 'utf8') > MAX_TWIML_BYTES) throw new TwimlError(12100, `document larger than ${MAX_TWIML_BYTES} bytes`);
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new TwimlError(12100, 'a DOCTYPE or entity declaration is not allowed');
  const v = XMLValidator.validate(text);
  if (v !== true) throw new TwimlError(12100, `document does not parse: ${v.err.msg} (line ${v.err.line})`);
  const roots = (parser.parse(text) as Raw[]).map(toNode).filter(isElement);
  if (roots.length !== 1 || roots[0]!.name !== 'Response') throw new TwimlError(12100, 'the root element must be <Response>');
  return roots[0]!;
}

function toNode(raw: Raw): TwimlNode {
  if ('#text' in raw) return { text: String(raw['#text']) };
  const name = Object.keys(raw).find((k) => k !== ':@')!;
  const attrsRaw = (raw[':@'] ?? {}) as Record<string, unknown>;
  const attrs: Record<string, string> = {};
  for (const [k, val] of Object.entries(attrsRaw)) attrs[k] = String(val);
  const kids = (raw[name] ?? []) as Raw[];
  return { name, attrs, children: kids.map(toNode) };
}

/** The element's text content (child texts joined, trimmed). */
export function textOf(el: TwimlElement): string {
  return el.children
    .map((c) => (isElement(c) ? '' : c.text))
    .join('')
    .trim();
}

export const childElements = (el: TwimlElement): TwimlElement[] => el.children.filter(isElement);
