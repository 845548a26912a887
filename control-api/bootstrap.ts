/**
 * First start: when there is no customer at all, create an admin customer with an admin agent
 * (random password) and an accesskey, in one transaction. The caller prints the result once and it
 * is written to $DATA_DIR/bootstrap.txt (mode 600).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { repos } from '../core/repos';
import { Permission } from '../core/permissions';
import type { Config } from '../core/config';

export interface BootstrapResult {
  customerId: string;
  username: string;
  password: string;
  accesskey: string;
  file: string;
}

export async function bootstrapAdmin(db: Knex, config: Readonly<Config>): Promise<BootstrapResult | null> {
  // Serialise concurrent first starts (several control-api copies) on an advisory lock.
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(727274)');
    const r = repos(trx);
    if ((await r.customers.count()) > 0) return null;
    const password = randomBytes(12).toString('base64url');
    const customer = await r.customers.create({
      name: 'admin',
      detail: 'created on first start',
      email: '',
      email_verified: true,
      status: 'active',
      identity_verification_status: 'verified',
    });
    await r.agents.create({
      customer_id: customer.id,
      username: config.bootstrapAdminUsername,
      password,
      name: 'admin',
      permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin,
    });
    await r.outboundConfigs.create({ customer_id: customer.id });
    const { token } = await r.accesskeys.create({ customer_id: customer.id, name: 'bootstrap', detail: 'created on first start' });
    const file = path.join(config.dataDir, 'bootstrap.txt');
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(
      file,
      [
        `# First-start admin of ${config.publicUrl} (created ${new Date().toISOString()})`,
        `username=${config.bootstrapAdminUsername}`,
        `password=${password}`,
        `accesskey=${token}`,
        `customer_id=${customer.id}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    return { customerId: customer.id, username: config.bootstrapAdminUsername, password, accesskey: token, file };
  });
}
