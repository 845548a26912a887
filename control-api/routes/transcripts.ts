/** /transcripts: the segments of one transcribe, newest first like every list (docs/speech.md). */
import { z } from 'zod';
import { defineRoute, uuid } from '../route';
import { notFound } from '../../core/errors';
import { transcribesRepo } from '../../core/repos/transcribes';
import { transcriptJson, transcriptsRepo } from '../../core/repos/transcripts';
import { legacyTime, listOf, uuidOut } from './schemas';

const transcriptSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  transcribe_id: uuidOut(),
  direction: z.enum(['in', 'out']),
  message: z.string(),
  offset_ms: z.number(),
  tm_transcript: legacyTime(),
  tm_create: legacyTime(),
});

export const routes = [
  defineRoute({
    method: 'get',
    path: '/transcripts',
    tag: 'Transcribe',
    summary: 'List the transcript segments of a transcribe',
    permission: 'manager',
    paginated: true,
    query: z.object({ transcribe_id: uuid(), page_size: z.string().optional(), page_token: z.string().optional() }),
    response: listOf(transcriptSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const t = await transcribesRepo(ctx.db).get(auth.customerId, query.transcribe_id);
      if (!t) throw notFound('RESOURCE_NOT_FOUND', 'transcribe not found');
      const p = await transcriptsRepo(ctx.db).list(auth.customerId, t.id, page);
      return { result: p.result.map(transcriptJson), next_page_token: p.next_page_token };
    },
  }),
];
