import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

/** The package root: compiled files live in dist/kernel, so the root is two levels above dist. */
export const distRoot = resolve(fileURLToPath(import.meta.url), '../..');
export const packageRoot = resolve(distRoot, '..');
