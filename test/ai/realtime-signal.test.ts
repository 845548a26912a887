// A speech-to-speech link lets go of the flow's signal once connected (issue 52's soak: media-app's heap
// grew ~55 KB an AI call). ai_talk's signal is the activeflow's per-action AbortSignal.any(); Node keeps
// such a composite signal alive (a strong set, `gcPersistentSignals`) while it has an abort listener and
// has not aborted, and an action's signal never aborts when the action ends normally. A listener left on
// it holds whatever it closes over for the life of the process: the OpenAI link's held the link, its
// socket and through them the whole call. Each link against its loopback stand-in.
import { getEventListeners } from 'node:events';
import fs from 'node:fs';
import { expect } from 'chai';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { startDeepgramAgentServer } from '../../testkit/ai/deepgram-agent-server';
import { startGeminiLiveServer } from '../../testkit/ai/gemini-live-server';
import { SILENT_SCRIPT, startRealtimeServer } from '../../testkit/ai/realtime-server';
import { DeepgramAgentLink } from '../../media-app/ai/s2s/deepgram';
import { GeminiLiveLink } from '../../media-app/ai/s2s/gemini';
import type { LinkHost, LinkOptions, ModelLink } from '../../media-app/ai/s2s/link';
import { OpenAiRealtimeLink } from '../../media-app/ai/s2s/openai';

const KEY = 'sk-signal-key-0123456789';
const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
const host: LinkHost = {
  audio: () => undefined,
  callerSpeaking: () => undefined,
  callerStopped: () => undefined,
  callerSpeechEnded: () => undefined,
  heard: () => undefined,
  said: () => undefined,
  toolCalls: () => undefined,
  fail: () => undefined,
  warn: () => undefined,
};
const options = (baseUrl: string, model: string, ca?: Buffer): LinkOptions => ({ model, baseUrl, apiKey: KEY, voice: '', language: 'en-US', egress, ca });

const vendors: { name: string; start: () => Promise<{ link: ModelLink; close: () => Promise<void> }> }[] = [
  {
    name: 'openai-realtime',
    start: async () => {
      const rt = await startRealtimeServer(KEY, SILENT_SCRIPT);
      const link = new OpenAiRealtimeLink(options(rt.url, 'gpt-realtime', fs.readFileSync(rt.cert.certPath)));
      return { link, close: () => rt.close() };
    },
  },
  {
    name: 'gemini-live',
    start: async () => {
      const gm = await startGeminiLiveServer(KEY, SILENT_SCRIPT);
      return { link: new GeminiLiveLink(options(gm.url, 'gemini-2.5-flash-native-audio-preview')), close: () => gm.close() };
    },
  },
  {
    name: 'deepgram-agent',
    start: async () => {
      const dg = await startDeepgramAgentServer(KEY, SILENT_SCRIPT);
      return { link: new DeepgramAgentLink(options(dg.url, 'nova-3')), close: () => dg.close() };
    },
  },
];

describe('speech-to-speech links and the flow action signal', function () {
  this.timeout(20_000);
  for (const v of vendors) {
    it(`${v.name}: no abort listener is left on the action signal once connected`, async () => {
      const { link, close } = await v.start();
      // the activeflow's action signal: the flow's signal and the action's own controller
      const flow = new AbortController();
      const signal = AbortSignal.any([flow.signal, new AbortController().signal]);
      try {
        await link.connect(8000, { instructions: 'You take orders.', tools: [] }, host, signal);
        expect(getEventListeners(signal, 'abort'), 'abort listeners on the action signal').to.have.length(0);
      } finally {
        link.close();
        await close();
      }
    });
  }
});
