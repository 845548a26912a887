/**
 * Amazon Polly through AWS's own SDK (@aws-sdk/client-polly): SynthesizeSpeech, engine `neural`,
 * OutputFormat `pcm` (16-bit little-endian mono, the rate asked: 8000, or 16000 for a wideband leg,
 * so nothing is resampled), signed with SigV4 by the SDK. Its HTTP goes through a NodeHttpHandler
 * whose agent connects only to the address the egress policy checked (the `lookup` it pins); the
 * credentials are the key's two parts, never the SDK's default chain (which would read files and
 * the instance metadata address), and one attempt only (the fallback path decides what follows).
 * The audio is read as Polly streams it.
 */
import http from 'node:http';
import https from 'node:https';
import { PollyClient, SynthesizeSpeechCommand, type VoiceId } from '@aws-sdk/client-polly';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { netError } from './http-stream';
import { PcmToRate } from './pcm';
import { keyPair, statusError, VoiceError, type VendorVoice, type VoiceRequest } from './vendor';

/** The HTTP status of an SDK error (a service exception carries it in $metadata), or 0. */
function statusOf(e: unknown): number {
  const m = (e as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata;
  return typeof m?.httpStatusCode === 'number' ? m.httpStatusCode : 0;
}

export const aws: VendorVoice = {
  name: 'aws',
  pcmRate: 16_000,
  async *stream(req: VoiceRequest) {
    const { id, secret } = keyPair('aws', req.apiKey, '<access key id>:<secret access key>');
    const rate = req.rate ?? 8000;
    let checked;
    try {
      checked = await req.egress.checkDestination(new URL(req.baseUrl).hostname);
    } catch (e) {
      throw netError('aws', e);
    }
    const agentOptions = { lookup: checked.lookup, keepAlive: false };
    const client = new PollyClient({
      endpoint: req.baseUrl,
      region: req.region || 'us-east-1',
      credentials: { accessKeyId: id, secretAccessKey: secret },
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent(agentOptions), httpsAgent: new https.Agent(agentOptions), connectionTimeout: 10_000, requestTimeout: 60_000 }),
    });
    const pcm = new PcmToRate(rate, rate);
    try {
      let out;
      try {
        out = await client.send(
          new SynthesizeSpeechCommand({ Engine: 'neural', OutputFormat: 'pcm', SampleRate: String(rate), Text: req.text, TextType: 'text', VoiceId: (req.voice || 'Joanna') as VoiceId }),
          { abortSignal: req.signal },
        );
      } catch (e) {
        const status = statusOf(e);
        if (status) throw statusError('aws', status);
        if (req.signal.aborted) throw new VoiceError('aws', 'timeout', 'cancelled');
        throw netError('aws', e);
      }
      const audio = out.AudioStream as AsyncIterable<Uint8Array> | undefined;
      if (!audio) throw new VoiceError('aws', 'failed', 'Polly answered without audio');
      try {
        for await (const bytes of audio) {
          const samples = pcm.push(bytes);
          if (samples.length) yield samples;
        }
      } catch (e) {
        throw netError('aws', e);
      }
    } finally {
      pcm.close();
      client.destroy();
    }
  },
};
