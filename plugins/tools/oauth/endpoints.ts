import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../../kernel/index.js';
import type { ClientEndpoints } from './start.js';

/** Under /admin/v1: where the authorization server sends the browser back, and svc's published client document. */
export const callbackPath = '/tool-sign-in/callback';
export const clientDocumentPath = '/tool-sign-in/client-metadata';

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();

/**
 * svc's own address as the admin's browser reaches it: `publicUrl` when configured (set it in
 * production), else the start request's host (and `X-Forwarded-Proto`/`-Host` from a proxy in
 * front). Only the admin starting a sign-in sends that request, so a forged header misdirects
 * only their own sign-in.
 */
export function baseUrl(publicUrl: string, req: IncomingMessage): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const proto = first(req.headers['x-forwarded-proto']) === 'https' ? 'https' : 'http';
  const host = first(req.headers['x-forwarded-host']) ?? req.headers.host ?? '';
  if (!/^[A-Za-z0-9.:[\]-]{1,300}$/.test(host)) throw new GatewayError('invalid_request', 'svc cannot tell its own address from this request: set plugins.tools.config.publicUrl.');
  return `${proto}://${host}`;
}

/**
 * The redirect URI, and the Client ID Metadata Document URL: only with an https `publicUrl`
 * (the document's URL is svc's client id, and must be a stable https address).
 */
export function clientEndpoints(publicUrl: string, req: IncomingMessage): ClientEndpoints {
  const base = baseUrl(publicUrl, req);
  return {
    redirectUri: `${base}/admin/v1${callbackPath}`,
    ...(publicUrl.startsWith('https://') ? { clientMetadataUrl: `${base}/admin/v1${clientDocumentPath}` } : {}),
  };
}

/** The cookie binding one sign-in to the browser that started it (named after its state's hash, so sign-ins may overlap). */
export const bindingCookie = (stateHash: string) => `svc_tsi_${stateHash.slice(0, 16)}`;

/** Sent only to the callback (its path as the browser sees it, a proxy's prefix included), over https when svc is reached so. */
export function setBindingCookie(res: ServerResponse, name: string, value: string, maxAgeMs: number, redirectUri: string): void {
  const at = new URL(redirectUri);
  const attrs = [`${name}=${value}`, `Path=${at.pathname}`, `Max-Age=${Math.ceil(maxAgeMs / 1000)}`, 'HttpOnly', 'SameSite=Lax', ...(at.protocol === 'https:' ? ['Secure'] : [])];
  res.setHeader('set-cookie', attrs.join('; '));
}

/** A cookie's value from the request, or undefined. */
export function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page the admin's browser lands on after a sign-in: no scripts, no styles, nothing to frame. */
export function signedInPage(res: ServerResponse, serverName: string): void {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed in</title></head><body><h1>Signed in</h1><p>svc can now use the tool server <strong>${escapeHtml(serverName)}</strong>. You can close this tab, or go back to <a href="/">svc</a>.</p></body></html>`;
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'", 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff',
  });
  res.end(body);
}
