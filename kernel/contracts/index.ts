export * from './chat.js';
export * from './identity.js';
export * from './catalog.js';
export * from './request-state.js';
