import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';

/** The files of a gzip tar bundle, by name without the top folder. */
export async function unpack(data: Buffer): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        files.set(header.name.replace(/^svc-diagnostics\//, ''), Buffer.concat(chunks).toString('utf8'));
        next();
      });
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  ex.end(gunzipSync(data));
  await done;
  return files;
}

export const bundleFiles = [
  'cache.json', 'counts.json', 'database.json', 'failed-requests.json', 'health.json', 'jobs.json', 'manifest.json', 'plugins.json',
  'price-updates.json', 'recovery-keys.json', 'sandbox.json', 'settings.json', 'versions.json',
];
