/**
 * The agent every new account starts with, whether the customer signed up or the operator created
 * it: username = the account's email, no password (set through the auth group's password-forgot),
 * admin permission. Written in the caller's transaction, with the customer row.
 */
import { PERMISSION_BY_NAME } from '../../core/permissions';
import type { Repos } from '../../core/repos';

export async function createDefaultAdmin(t: Repos, customerId: string, email: string): Promise<void> {
  await t.agents.create({
    customer_id: customerId,
    username: email,
    password_hash: '',
    name: 'default admin',
    detail: 'default agent account for admin permission',
    permission: PERMISSION_BY_NAME.admin,
  });
}
