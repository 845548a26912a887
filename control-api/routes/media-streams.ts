/**
 * GET /calls/{id}/media_stream and /conferences/{id}/media_stream as plain HTTP. The endpoints are
 * WebSocket upgrades (control-api/media-streams/, reached through the server's `upgrade` event, never
 * through Express); a request without `Upgrade: websocket` lands here and gets a clear 400 in the
 * envelope instead of 404 ROUTE_NOT_FOUND. The declaration also documents the endpoints' parameters.
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { invalidArgument } from '../../core/errors';
import { ENCAPSULATIONS } from '../../core/streams/encapsulation';

const query = z.object({
  encapsulation: z
    .string()
    .optional()
    .describe(`one of ${ENCAPSULATIONS.join(', ')}; for a call also twilio (our extension: Twilio Media Streams JSON messages both ways, docs/media-streams.md)`),
  token: z.string().optional().describe('credential, for clients that cannot set a header on an upgrade'),
});

function plainRequest(group: 'calls' | 'conferences', what: string) {
  return defineRoute({
    method: 'get',
    path: `/${group}/:id/media_stream`,
    tag: group === 'calls' ? 'Calls' : 'Conferences',
    summary: `Media stream of a ${what} (WebSocket upgrade)`,
    description: `Answers 101 to a WebSocket upgrade while the ${what} is progressing; without an Upgrade header, 400 INVALID_ARGUMENT.`,
    permission: 'manager',
    params: idParams,
    query,
    response: z.object({}),
    handler: () => {
      throw invalidArgument('this endpoint is a WebSocket: send the request with Connection: Upgrade and Upgrade: websocket');
    },
  });
}

export const routes = [plainRequest('calls', 'call'), plainRequest('conferences', 'conference')];
