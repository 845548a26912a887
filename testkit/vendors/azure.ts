// Azure AI Speech stand-in (their REST reference): POST /cognitiveservices/v1, `Ocp-Apim-Subscription-Key`,
// SSML body, `X-Microsoft-OutputFormat: raw-8khz-8bit-mono-mulaw`; answers raw µ-law 8 kHz. The SSML must
// be well formed: markup inside the spoken text (an unescaped '<' or '&') is a 400, as Azure answers.
import { httpStandIn, MARKER_HZ, toneMs, toneUlaw, type StandIn, type StandInOptions } from './marker';

/** The text of `<speak><voice>text</voice></speak>`, unescaped; null when it is not that shape or carries markup. */
export function ssmlText(ssml: string): string | null {
  const m = /^<speak\b[^>]*><voice\b[^>]*>([^<]*)<\/voice><\/speak>$/.exec(ssml.trim());
  if (!m || /&(?!(amp|lt|gt|quot|apos);)/.test(m[1]!)) return null;
  return m[1]!
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

export function startAzureSpeech(options: StandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/cognitiveservices/v1',
    (req) => req.headers['ocp-apim-subscription-key'] === (options.apiKey ?? 'az-test-key'),
    (body, _q, req) => {
      if (req.headers['x-microsoft-outputformat'] !== 'raw-8khz-8bit-mono-mulaw') return 'this stand-in models raw-8khz-8bit-mono-mulaw only';
      if (!String(req.headers['content-type']).startsWith('application/ssml+xml')) return 'SSML expected';
      const text = typeof body === 'string' ? ssmlText(body) : null;
      if (!text) return 'malformed SSML';
      return { contentType: 'audio/basic', bytes: toneUlaw(MARKER_HZ.azure, toneMs(text)), chunk: 160 };
    },
  );
}
