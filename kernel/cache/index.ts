import type { KernelConfig } from '../config/schema.js';
import type { CachePort } from './port.js';
import { MemoryCache } from './memory.js';

export * from './port.js';
export { MemoryCache } from './memory.js';

/** The in-process cache unless SVC_REDIS_URL is set; Redis code is only loaded when used. */
export async function openCache(config: KernelConfig): Promise<CachePort> {
  if (!config.cache.url) return new MemoryCache();
  const { RedisCache } = await import('./redis.js');
  return new RedisCache(config.cache.url, config.cache.prefix);
}
