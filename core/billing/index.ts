/** Billing basics: accounts and balance, charges, the 402 helper. */
export { insufficientBalance, ensureBillingAccount, assertAffordable, charge, addBalance, subtractBalance, inTransaction, type ChargeInput } from './ledger';
export { startCallBilling, endCallBilling, chargeCallMinutes, assertCallAffordable, billableMinutes, type CallCostType } from './calls';
export { chargeNumber, numberPrice } from './numbers';
export { rates, setRates, loadRates, DEFAULT_RATES, type Rates } from './rates';
export { chargeEndedCall, chargeableSeconds, type EndedCall } from './call-end';
