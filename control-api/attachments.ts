/**
 * What control-api runs beside its routes, started after the server listens and closed before the
 * database: WebSocket upgrade handlers of their own paths (media streams, the service-agent socket)
 * and background jobs (campaign dialling...). One line each in ATTACHMENTS; the module that defines
 * one exports it as `attachment`. An upgrade handler must ignore paths that are not its own.
 */
import type http from 'node:http';
import type { AppContext } from './context';
import { attachment as agentWorkspace } from './service-agents/attachment';
import { attachment as mediaStreams } from './media-streams/attachment';
import { attachment as campaignRunner } from './campaigns/runner';
import { attachment as nodeSweeper } from './node-sweeper';
import { attachment as storage } from './storage-backend';

export interface Attachment {
  readonly name: string;
  start(server: http.Server, ctx: AppContext): Promise<{ close(): Promise<void> }>;
}

export const ATTACHMENTS: readonly Attachment[] = [campaignRunner, agentWorkspace, mediaStreams, nodeSweeper, storage];

/** Starts every attachment; close() closes them last-first. */
export async function startAttachments(server: http.Server, ctx: AppContext, list: readonly Attachment[] = ATTACHMENTS): Promise<{ close(): Promise<void> }> {
  const started: { name: string; close(): Promise<void> }[] = [];
  for (const a of list) started.push({ name: a.name, ...(await a.start(server, ctx)) });
  return {
    async close() {
      for (const s of started.reverse()) {
        await s.close().catch((err: unknown) => ctx.logger.warn({ err: String(err), attachment: s.name }, 'attachment close failed'));
      }
    },
  };
}
