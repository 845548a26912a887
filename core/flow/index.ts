export * from './action';
export * from './registry';
export * from './validate';
export * from './variables';
export * from './encoding';
