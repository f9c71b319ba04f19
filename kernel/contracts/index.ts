export * from './chat.js';
export * from './identity.js';
export * from './catalog.js';
export * from './request-state.js';
export * from './admin.js';
export * from './provider.js';
export * from './pricing.js';
export * from './credentials.js';
