/**
 * `npx tsx core/db/migrate-cli.ts [latest|status|rollback-all]` — runs the knex migrations against
 * DATABASE_URL (scripts/setup.sh calls `latest`). Exit 1 with the reason on failure.
 */
import { loadConfig, ConfigError } from '../config';
import { createDb, migrate, rollbackAll, MIGRATIONS_DIR } from './knex';

async function main(): Promise<void> {
  const cmd = process.argv[2] ?? 'latest';
  const config = loadConfig(process.env, { persistSecret: false });
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
