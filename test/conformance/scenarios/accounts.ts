/** The customer's own account settings, billing accounts and outbound config; the operator's /customers and /storage_accounts. */
import { crud, type Step } from '../steps';

const su = { as: 'superadmin' as const };

export const accounts: Record<string, Step[]> = {
  own_account: [
    { op: 'put /customer/metadata', body: () => ({ rtp_debug: true }) },
    {
      op: 'get /billing_account',
      save: (s, b) => {
        s.billingAccount = String(b.id);
      },
    },
    { op: 'put /customer/billing_account_id', body: (s) => ({ billing_account_id: s.billingAccount }) },
    { op: 'put /billing_account', body: () => ({ name: 'Production Account', detail: 'main' }) },
    { op: 'put /billing_account/payment_info', body: () => ({ payment_type: 'prepaid', payment_method: 'credit card' }) },
    { op: 'put /billing_accounts/{id}', url: (s) => `/billing_accounts/${s.billingAccount}`, body: () => ({ name: 'acc', detail: 'd' }) },
    { op: 'put /billing_accounts/{id}/payment_info', url: (s) => `/billing_accounts/${s.billingAccount}/payment_info`, body: () => ({ payment_type: '', payment_method: '' }) },
    { op: 'get /outbound_config' },
    { op: 'put /outbound_config', body: () => ({ name: 'own', destination_whitelist: ['us', 'gb'], codecs: '' }) },
  ],
  customers: crud({
    collection: '/customers',
    name: 'newCustomer',
    as: 'superadmin',
    create: (s) => ({ name: 'n', detail: 'd', email: `new-${s.run}@example.test`, phone_number: '', address: '', webhook_method: 'POST', webhook_uri: '' }),
    update: () => ({ name: 'n2', detail: 'd2' }),
    extra: [
      { op: 'put /customers/{id}/metadata', url: (s) => `/customers/${s.newCustomer}/metadata`, body: () => ({ rtp_debug: false }), ...su },
      {
        op: 'get /customers/{id}',
        again: true,
        url: (s) => `/customers/${s.newCustomer}`,
        save: (s, b) => {
          s.newBilling = String(b.billing_account_id);
        },
        ...su,
      },
      { op: 'put /customers/{id}/billing_account_id', url: (s) => `/customers/${s.newCustomer}/billing_account_id`, body: (s) => ({ billing_account_id: s.newBilling }), ...su },
      { op: 'post /billing_accounts/{id}/balance_subtract_force', url: (s) => `/billing_accounts/${s.newBilling}/balance_subtract_force`, body: () => ({ balance: 1.5 }), ...su },
      {
        op: 'post /storage_accounts',
        body: (s) => ({ customer_id: s.newCustomer }),
        save: (s, b) => {
          s.storageAccount = String(b.id);
        },
        ...su,
      },
      { op: 'get /storage_accounts', ...su },
      { op: 'get /storage_accounts/{id}', url: (s) => `/storage_accounts/${s.storageAccount}`, ...su },
      { op: 'post /customers/{id}/freeze', url: (s) => `/customers/${s.newCustomer}/freeze`, ...su },
      { op: 'post /customers/{id}/recover', url: (s) => `/customers/${s.newCustomer}/recover`, ...su },
    ],
  }),
};
