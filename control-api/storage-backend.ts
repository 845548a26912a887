/**
 * Checks the storage configuration when control-api starts (a partial S3_* set stops start-up with
 * the names that are missing, instead of failing the first download) and says which backend serves.
 */
import type { Attachment } from './attachments';
import { storageBackend } from '../core/storage/backend';

export const attachment: Attachment = {
  name: 'storage',
  async start(_server, ctx) {
    const b = storageBackend(ctx.config);
    ctx.logger.info({ storage: b.kind, ...(b.s3 ? { endpoint: b.s3.settings.endpoint, bucket: b.s3.settings.bucket } : {}) }, 'storage backend');
    return { close: async () => undefined };
  },
};
