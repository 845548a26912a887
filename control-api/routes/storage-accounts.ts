/**
 * /storage_accounts: every customer's storage account, for the platform operator (ProjectSuperAdmin
 * for the list and for creating one; a customer admin reads its own by id). A customer has one
 * account, made on its first upload or here. Deleting one (ProjectSuperAdmin) removes every file's
 * object from the storage backend, then the file rows and the account (soft deletes); the customer's
 * next upload gets an empty account again. A backend that refuses leaves the rest listed (503), so
 * the delete can be sent again.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { alreadyExists, notFound } from '../../core/errors';
import { isProjectSuperAdmin } from '../../core/permissions';
import { storageRepo } from '../../core/repos/storage';
import { storageBackend, viaStorage } from '../../core/storage/backend';
import { accountSchema, accountView } from './storage';
import { listOf } from './schemas';

const tag = 'Storage';
const accountNotFound = () => notFound('ACCOUNT_NOT_FOUND', 'storage account not found');

export const routes = [
  defineRoute({
    method: 'get',
    path: '/storage_accounts',
    tag,
    summary: 'List every storage account (ProjectSuperAdmin)',
    permission: 'superadmin',
    paginated: true,
    response: listOf(accountSchema),
    handler: async ({ ctx, page }) => {
      const p = await storageRepo(ctx.db).listAccounts(page);
      return { result: await Promise.all(p.result.map((a) => accountView(ctx, a))), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/storage_accounts',
    tag,
    summary: 'Create the storage account of a customer (ProjectSuperAdmin)',
    description: 'A customer has one account: 409 ALREADY_EXISTS when it has one, 404 when the customer does not exist.',
    permission: 'superadmin',
    body: z.object({ customer_id: uuid() }),
    response: accountSchema,
    handler: async ({ ctx, body }) => {
      const customer = await ctx.repos.customers.get(body.customer_id);
      if (!customer) throw notFound('RESOURCE_NOT_FOUND', 'customer not found');
      const repo = storageRepo(ctx.db);
      if (await repo.findAccount(customer.id)) throw alreadyExists('the customer has a storage account');
      return accountView(ctx, await repo.account(customer.id));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/storage_accounts/:id',
    tag,
    summary: 'Get a storage account (own; any for a ProjectSuperAdmin)',
    permission: 'admin',
    params: idParams,
    response: accountSchema,
    handler: async ({ ctx, auth, params }) => {
      const a = await storageRepo(ctx.db).accountById(params.id);
      if (!a || (a.customer_id !== auth.customerId && !isProjectSuperAdmin(auth.permission))) throw accountNotFound();
      return accountView(ctx, a);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/storage_accounts/:id',
    tag,
    summary: "Delete a storage account with its files' objects (ProjectSuperAdmin)",
    permission: 'superadmin',
    params: idParams,
    response: accountSchema,
    handler: async ({ ctx, params }) => {
      const repo = storageRepo(ctx.db);
      const a = await repo.accountById(params.id);
      if (!a) throw accountNotFound();
      const store = storageBackend(ctx.config).files;
      for (const f of await repo.allFiles(a.customer_id)) {
        // the object first: when the backend refuses, the file stays listed and the delete can be sent again
        await viaStorage(() => store.delete(f.object_key));
        await repo.softDelete(a.customer_id, f.id);
      }
      const deleted = await repo.softDeleteAccount(a.id);
      if (!deleted) throw accountNotFound();
      return accountView(ctx, deleted);
    },
  }),
];
