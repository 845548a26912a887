/**
 * The agent workspace beside the routes: the agent WebSocket and the webchat widgets' direct-hash
 * resolver for POST /auth/boot (with the widget's public display configuration).
 */
import type { Attachment } from '../attachments';
import { registerDirectResolver } from '../auth/direct-registry';
import { webchatDirectResolver } from '../../core/webchat/resolver';
import { attachAgentSocket, type AgentSocketOptions } from './socket';

export function workspaceAttachment(opts: AgentSocketOptions = {}): Attachment {
  return {
    name: 'agent-workspace',
    async start(server, ctx) {
      const unregister = registerDirectResolver(webchatDirectResolver(ctx.db));
      const socket = await attachAgentSocket(server, ctx, opts);
      return {
        async close() {
          unregister();
          await socket.close();
        },
      };
    },
  };
}

export const attachment = workspaceAttachment();
