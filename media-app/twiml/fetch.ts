/**
 * Fetching a TwiML document on a call's behalf: through the flow's HTTP client (the egress policy),
 * GET with the parameters in the query or POST as a form, signed with X-Twilio-Signature keyed by the
 * customer's AuthToken. Failures are TwimlError 11200 (never carrying the remote answer).
 */
import { TwimlError } from '../../core/twiml/compile';
import { signedWebhook } from '../../core/twilio/signature';
import { FlowHttpError, type FlowHttp } from '../kit/http';

export interface TwimlFetch {
  url: string;
  method: 'GET' | 'POST';
  params: Record<string, string>;
  authToken: string;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
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
  if (res.status !== 200) throw new TwimlError(11200, `the document URL answered HTTP ${res.status}`);
  return { text: res.body, url: f.url };
}
