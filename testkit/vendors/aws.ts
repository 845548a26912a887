// Amazon Polly stand-in (the SynthesizeSpeech API reference and AWS's Signature Version 4 spec):
// POST /v1/speech, restJson1 body { Engine, OutputFormat, SampleRate, Text, TextType, VoiceId }; 'pcm'
// answers 16-bit little-endian mono at SampleRate (8000 or 16000). Every request's SigV4 signature is
// recomputed here from the request as received (canonical request, string to sign, the derived key)
// and compared: an unknown access key is 403 UnrecognizedClientException, a wrong signature 403
// InvalidSignatureException, a date more than 5 minutes off 403 too, as Polly answers.
import crypto from 'node:crypto';
import type http from 'node:http';
import { httpStandIn, MARKER_HZ, toneMs, toneS16le, type Refusal, type StandIn, type StandInOptions } from './marker';

export const AWS_TEST_KEY_ID = 'AKIDSTANDIN0000TEST';
export const AWS_TEST_SECRET = 'standin/secret+access/key0000000000000000';

const sha256 = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');
const hmac = (k: Buffer | string, s: string) => crypto.createHmac('sha256', k).update(s).digest();
/** RFC 3986 encoding, as SigV4 wants it (A-Z a-z 0-9 - _ . ~ kept). */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function awsError(type: string, message: string): Refusal {
  return { status: 403, headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.coral.service/` }, body: JSON.stringify({ message }) };
}

/**
 * Checks a request's SigV4 Authorization header against `secrets` (access key id → secret); true, or
 * Polly's refusal. `service` is the signing name (polly), the region is taken from the scope and must be `region`.
 */
export function verifySigV4(req: http.IncomingMessage, body: Buffer, secrets: Readonly<Record<string, string>>, region: string, service = 'polly'): true | Refusal {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(String(req.headers.authorization ?? ''));
  if (!m) return awsError('MissingAuthenticationTokenException', 'Missing Authentication Token');
  const [, keyId, day, scopeRegion, scopeService, signed, signature] = m as unknown as [string, string, string, string, string, string, string];
  const secret = secrets[keyId];
  if (secret === undefined) return awsError('UnrecognizedClientException', 'The security token included in the request is invalid.');
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const t = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!t || !amzDate.startsWith(day)) return awsError('InvalidSignatureException', 'Date in Credential scope does not match the X-Amz-Date header.');
  const when = Date.UTC(+t[1]!, +t[2]! - 1, +t[3]!, +t[4]!, +t[5]!, +t[6]!);
  if (Math.abs(Date.now() - when) > 5 * 60_000) return awsError('InvalidSignatureException', 'Signature expired.');
  if (scopeRegion !== region || scopeService !== service) return awsError('InvalidSignatureException', `Credential should be scoped to a valid region (${region}) and service (${service}).`);
  const names = signed.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return awsError('InvalidSignatureException', 'host and x-amz-date must be signed.');
  const u = new URL(req.url ?? '/', 'http://x');
  // the path as sent, each segment encoded once more (SigV4 for services other than S3)
  const canonicalUri = u.pathname
    .split('/')
    .map((seg) => enc(decodeURIComponent(seg)))
    .map((seg) => enc(seg))
    .join('/');
  const canonicalQuery = [...u.searchParams]
    .map(([k, v]) => [enc(k), enc(v)] as const)
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const headerValue = (n: string) => {
    const v = req.headers[n];
    return (Array.isArray(v) ? v.join(',') : String(v ?? '')).trim().replace(/\s+/g, ' ');
  };
  const canonicalHeaders = names.map((n) => `${n}:${headerValue(n)}\n`).join('');
  const canonical = [req.method ?? '', canonicalUri, canonicalQuery, canonicalHeaders, signed, sha256(body)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
  const expected = crypto.createHmac('sha256', key).update(toSign).digest('hex');
  if (!crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(signature)))
    return awsError('InvalidSignatureException', 'The request signature we calculated does not match the signature you provided.');
  return true;
}

export interface PollyStandInOptions extends StandInOptions {
  /** the region requests must be signed for (default us-east-1) */
  region?: string;
  /** access key id → secret accepted (default AWS_TEST_KEY_ID → AWS_TEST_SECRET) */
  secrets?: Record<string, string>;
}

export function startPolly(options: PollyStandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/v1/speech',
    (req, raw) => verifySigV4(req, raw, options.secrets ?? { [AWS_TEST_KEY_ID]: AWS_TEST_SECRET }, options.region ?? 'us-east-1'),
    (body) => {
      const b = body as { Text?: unknown; VoiceId?: unknown; OutputFormat?: unknown; SampleRate?: unknown; Engine?: unknown } | null;
      if (typeof b?.Text !== 'string' || !b.Text || typeof b.VoiceId !== 'string') return 'Text and VoiceId are required';
      if (!['neural', 'generative', 'standard', 'long-form'].includes(String(b.Engine ?? 'standard'))) return 'unknown Engine';
      if (b.OutputFormat !== 'pcm' || (b.SampleRate !== '8000' && b.SampleRate !== '16000')) return 'this stand-in models OutputFormat pcm at 8000 or 16000 only';
      return { contentType: 'audio/pcm', bytes: toneS16le(MARKER_HZ.aws, toneMs(b.Text), Number(b.SampleRate), b.SampleRate === '16000' ? options.extraHz : undefined), chunk: 641 };
    },
  );
}
