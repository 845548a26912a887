/**
 * `npx tsx core/db/migrate-cli.ts [latest|status|rollback-all]` — runs the knex migrations against
 * DATABASE_URL (scripts/setup.sh calls `latest`). Exit 1 with the reason on failure.
 */
import { loadConfig, ConfigError } from '../config';
import fs from 'node:fs';
import path from 'node:path';
import { createDb, migrate, rollbackAll, MIGRATIONS_DIR } from './knex';
import { useKeySecret } from '../secrets/keys';

async function main(): Promise<void> {
  const cmd = process.argv[2] ?? 'latest';
  const config = loadConfig(process.env, { persistSecret: false });
  // the platform secret that seals the AI vendor keys (migration 0958), when there is one already;
  // never a new random one, under which stored keys could not be opened again
  if (process.env.JWT_SECRET || fs.existsSync(path.join(config.dataDir, 'jwt-secret'))) useKeySecret(loadConfig(process.env).jwtSecret);
  const db = createDb(config.databaseUrl, { poolMax: 2 });
  try {
    if (cmd === 'latest') {
      const ran = await migrate(db);
      process.stdout.write(ran.length ? `migrations applied: ${ran.join(', ')}\n` : 'database schema is up to date\n');
    } else if (cmd === 'status') {
      const [done, pending] = (await db.migrate.list({ directory: MIGRATIONS_DIR, loadExtensions: ['.ts', '.js'] })) as [{ name: string }[], { file: string }[]];
      process.stdout.write(`applied: ${done.length}, pending: ${pending.map((p) => p.file).join(', ') || 'none'}\n`);
    } else if (cmd === 'rollback-all') {
      await rollbackAll(db);
      process.stdout.write('all migrations rolled back\n');
    } else {
      throw new Error(`unknown command ${cmd} (latest, status, rollback-all)`);
    }
  } finally {
    await db.destroy();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`migrate: ${e instanceof ConfigError ? e.message : e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
