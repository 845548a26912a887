/** The AI subsystem of a media-app node: fills services.ai for ai_talk, ai_task and ai_summary. */
import fs from 'node:fs';
import type { Subsystem } from '../subsystem';
import type { CallEndpoint } from '../media-server/endpoint';
import type { AiService } from './service';
import { EgressPolicy } from '../../core/net';
import { aiTalk } from './talk';
import { aiTask } from './task';

export type { AiService } from './service';

export const subsystem: Subsystem = {
  name: 'ai',
  async start(ctx) {
    const service: AiService = {
      // the engine URL is customer input: LLM and RAG requests go through the egress policy
      deps: { db: ctx.deps.db, events: ctx.deps.events, egress: new EgressPolicy(ctx.deps.config.egress) },
      dataDir: ctx.deps.config.dataDir,
      logger: ctx.logger,
      voices: ctx.deps.config.voices,
      speechToSpeech: ctx.deps.config.speechToSpeech,
      realtimeCa: ctx.deps.config.openaiRealtimeCaFile ? fs.readFileSync(ctx.deps.config.openaiRealtimeCaFile) : null,
      endpointOf(callId: string): CallEndpoint | null {
        const call = ctx.deps.calls.get(callId) as { endpoint?: CallEndpoint | null; isEnded?: boolean } | undefined;
        return call && !call.isEnded ? (call.endpoint ?? null) : null;
      },
      talk: (call, option, signal, flow) => aiTalk(service, call, option, signal, flow),
      task: (flow, option) => aiTask(service, flow, option),
    };
    ctx.services.ai = service;
    return {
      async stop() {
        if (ctx.services.ai === service) delete ctx.services.ai;
      },
    };
  },
};
