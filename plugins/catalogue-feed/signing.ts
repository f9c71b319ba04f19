import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

/**
 * Ed25519 signing of feed lists (node:crypto). What is signed is the list's exact text behind a
 * fixed domain prefix, so a signature made with the same key for anything else never verifies as
 * a price list, and no JSON canonicalisation is needed.
 */
const domain = Buffer.from('svc-catalogue-feed/1\n', 'utf8');

const message = (listText: string): Buffer => Buffer.concat([domain, Buffer.from(listText, 'utf8')]);

/** A public key as written in config: the raw 32 bytes in base64 (or base64url), e.g. `hD3k…=`. */
export function parsePublicKey(text: string): KeyObject {
  const raw = Buffer.from(text.trim(), 'base64');
  if (raw.length !== 32) throw new Error('an Ed25519 public key is 32 bytes in base64 (as `svc catalogue keygen` prints it)');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** The raw public key in base64, the form config pins. */
export function publicKeyText(key: KeyObject): string {
  const x = key.export({ format: 'jwk' }).x;
  if (!x) throw new Error('not an Ed25519 key');
  return Buffer.from(x, 'base64url').toString('base64');
}

/** A new key pair: the private key as PKCS#8 PEM (keep it secret), the public key as pinned in config. */
export function generateKeys(): { privatePem: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicKey: publicKeyText(publicKey) };
}

/** Reads a PKCS#8 PEM private key and checks that it is Ed25519. */
export function parsePrivateKey(pem: string): KeyObject {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`the private key is ${key.asymmetricKeyType ?? 'not asymmetric'}, not Ed25519`);
  return key;
}

/** The base64 signature of a list's text. */
export function signList(listText: string, privateKey: KeyObject): string {
  return sign(null, message(listText), privateKey).toString('base64');
}

/** True when `signature` (base64) is one of `keys` over the list's text. */
export function verifyList(listText: string, signature: string, keys: readonly KeyObject[]): boolean {
  const sig = Buffer.from(signature, 'base64');
  if (sig.length !== 64) return false;
  const data = message(listText);
  return keys.some((k) => verify(null, data, k, sig));
}
