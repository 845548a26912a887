/**
 * The storage subsystem of a media-app node: offloads finished recordings to object storage when
 * S3 is configured (offload.ts); with local disk it only idles.
 */
import type { Subsystem } from '../subsystem';
import { storageBackend } from '../../core/storage/backend';
import { RecordingOffload } from './offload';

export const subsystem: Subsystem = {
  name: 'storage',
  async start(ctx) {
    // a partial S3_* configuration stops the node here, naming what is missing
    const backend = storageBackend(ctx.deps.config);
    ctx.logger.info({ storage: backend.kind }, 'storage backend');
    const offload = new RecordingOffload({ db: ctx.deps.db, config: ctx.deps.config, logger: ctx.logger });
    offload.start();
    return { stop: () => offload.stop() };
  },
};
