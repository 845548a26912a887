/**
 * Fetching a TwiML document on a call's behalf: through the flow's HTTP client (the egress policy),
 * GET with the parameters in the query or POST as a form, signed with X-Twilio-Signature keyed by the
 * customer's AuthToken. Failures are TwimlError 11200, or 12300 for an answer that is not TwiML by its
 * Content-Type (never carrying the remote answer).
 */
import { TwimlError } from '../../core/twiml/compile';
import { signedWebhook } from '../../core/twilio/signature';
import { FlowHttpError, type FlowHttp } from '../kit/http';

/**
 * Content-Types taken as a TwiML document: XML, and text/html and text/plain (what many frameworks label a
 * string they return). Any other (JSON, audio: we play no audio answer) is Twilio's 12300; none at all is
 * read as the document (Twilio: a 502 in its debugger), as before.
 */
const TWIML_TYPES = /^(?:text\/xml|application\/xml|[a-z]+\/[a-z0-9.+-]*\+xml|text\/html|text\/plain)$/;

export interface TwimlFetch {
  url: string;
  method: 'GET' | 'POST';
  params: Record<string, string>;
  authToken: string;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
  /** Told the answer's headers whenever the app answered, whatever its status (an alert's response_headers). */
  onAnswer?: (headers: [string, string][]) => void;
}

/** The document's text and the URL it is known by (relative URLs in it resolve against it). */
export async function fetchTwiml(http: FlowHttp, f: TwimlFetch): Promise<{ text: string; url: string }> {
  const { url, body, signature } = signedWebhook(f.authToken, f.method, f.url, f.params);
  const headers: Record<string, string> = { accept: 'text/xml, application/xml', 'user-agent': 'openvoice-twiml/1.0', 'x-twilio-signature': signature };
  if (f.method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
  let res;
  try {
    res = await http.request({ method: f.method, url, headers, body, timeoutMs: f.timeoutMs, maxBytes: f.maxBytes, signal: f.signal });
  } catch (e) {
    if (e instanceof FlowHttpError) throw new TwimlError(11200, `the document could not be fetched: ${e.message}`);
    throw e;
  }
  f.onAnswer?.(res.headers ?? []);
  if (res.status !== 200) throw new TwimlError(11200, `the document URL answered HTTP ${res.status}`);
  const type = (res.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type && !TWIML_TYPES.test(type)) throw new TwimlError(12300, `the document URL answered Content-Type ${type.slice(0, 64)}, not TwiML`);
  return { text: res.body, url: f.url };
}
