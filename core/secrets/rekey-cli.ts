/**
 * `OLD_JWT_SECRET=<old> [JWT_SECRET=<new>] npx tsx core/secrets/rekey-cli.ts [--dry-run]` — seals the
 * stored AI vendor keys again under a new platform secret (docs/ai.md "Keys", rotation). The new
 * secret is JWT_SECRET, else the one kept in DATA_DIR/jwt-secret. Run it with the platform stopped,
 * then start it with the new secret. Exit 0 with the counts; 1 when a key cannot be opened under the
 * old secret (nothing changed; the rows are named, never a key); 2 on a usage error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, ConfigError } from '../config';
import { createDb } from '../db/knex';
import { deriveKey } from './keys';
import { rekeyStoredKeys } from './rekey';

class UsageError extends Error {}

function newSecret(): string {
  if (process.env.JWT_SECRET) return process.env.JWT_SECRET;
  const dataDir = loadConfig(process.env, { persistSecret: false }).dataDir;
  if (fs.existsSync(path.join(dataDir, 'jwt-secret'))) return loadConfig(process.env).jwtSecret;
  throw new UsageError('no new secret: set JWT_SECRET (or keep it in DATA_DIR/jwt-secret)');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--dry-run');
  if (unknown.length) throw new UsageError(`unknown argument ${unknown[0]} (only --dry-run)`);
  const old = process.env.OLD_JWT_SECRET;
  if (!old) throw new UsageError('OLD_JWT_SECRET must name the secret the keys are sealed under now');
  const dryRun = args.includes('--dry-run');
  const config = loadConfig(process.env, { persistSecret: false });
  const db = createDb(config.databaseUrl, { poolMax: 2 });
  try {
    const r = await rekeyStoredKeys(db, deriveKey(old), deriveKey(newSecret()), { dryRun });
    process.stdout.write(dryRun ? `dry run: ${r.keys} key(s) in ${r.rows} row(s) would be sealed again; nothing written\n` : `${r.keys} key(s) in ${r.rows} row(s) sealed under the new secret\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`rekey: ${e instanceof ConfigError || e instanceof Error ? e.message : String(e)}\n`);
  process.exit(e instanceof UsageError ? 2 : 1);
});
