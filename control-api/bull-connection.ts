/**
 * The connection options BullMQ takes, read from the platform's Redis URL (REDIS_URL): host, port,
 * database number, credentials and TLS for rediss:. `maxRetriesPerRequest: null` is what BullMQ
 * requires of a worker's connection. The webhook queue and the lifecycle scheduler both use it.
 */
export function bullConnection(redisUrl: string) {
  const url = new URL(redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    username: url.username || undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}
