/**
 * The media streams subsystem of a media-app node: the relay server control-api reaches for
 * GET .../media_stream (advertised in Redis, refreshed while the node lives) and the external
 * media service the flow actions use.
 *
 * Environment: MEDIA_STREAM_RELAY_HOST (bind address, default 127.0.0.1), MEDIA_STREAM_RELAY_PORT
 * (default 0: any free port), MEDIA_STREAM_RELAY_ADVERTISE (host control-api should dial, default
 * the bind address). Nodes on other machines than control-api bind a reachable address.
 */
import type { Subsystem } from '../subsystem';
import { relayAdKey, RELAY_AD_TTL_SEC, type RelayAdvert } from '../../core/streams/relay';
import { RelayServer } from './relay-server';
import { ExternalMediaService } from './external-media';

export const subsystem: Subsystem = {
  name: 'media-streams',
  async start(ctx) {
    const env = process.env;
    const host = env.MEDIA_STREAM_RELAY_HOST || '127.0.0.1';
    const relay = new RelayServer(ctx.deps, ctx.logger, { host, port: Number(env.MEDIA_STREAM_RELAY_PORT || 0) });
    const bound = await relay.listen();
    const adHost = env.MEDIA_STREAM_RELAY_ADVERTISE || (host === '0.0.0.0' ? '127.0.0.1' : host);
    const ad: RelayAdvert = { url: `ws://${adHost.includes(':') ? `[${adHost}]` : adHost}:${bound.port}`, secret: relay.secret };
    const key = ctx.deps.config.redisKeyPrefix + relayAdKey(ctx.nodeId);
    const advertise = () => ctx.deps.redis.set(key, JSON.stringify(ad), 'EX', RELAY_AD_TTL_SEC).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'stream relay advert failed'));
    await advertise();
    const timer = setInterval(() => void advertise(), (RELAY_AD_TTL_SEC * 1000) / 3);
    timer.unref();
    const external = new ExternalMediaService(ctx.deps, ctx.logger);
    ctx.services.externalMedia = external;
    ctx.logger.info({ relay: ad.url }, 'media stream relay listening');
    return {
      async stop() {
        clearInterval(timer);
        await ctx.deps.redis.del(key).catch(() => undefined);
        await external.stopAll();
        await relay.close();
      },
    };
  },
};
