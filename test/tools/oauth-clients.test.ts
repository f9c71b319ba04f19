import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { browse, protectedServer, startOAuthWorld, type OAuthWorld, type Protected } from './oauth-support.js';

const test = suite(`tools: OAuth clients — metadata document, entered client id, well-known discovery (${shape})`);
/** svc behind a TLS-terminating proxy at this address; `toReal` plays the proxy. */
const publicUrl = 'https://svc.example.test';
const documentUrl = `${publicUrl}/admin/v1/tool-sign-in/client-metadata`;
const callback = `${publicUrl}/admin/v1/tool-sign-in/callback`;
let w: OAuthWorld;
let plain: Protected;
let real = '';
const toReal = (u: string) => (u.startsWith(publicUrl) ? real + u.slice(publicUrl.length) : u);

test.before(async () => {
  // The main authorization server registers no clients but reads client metadata documents; its
  // MCP server names its metadata only at the well-known URL.
  w = await startOAuthWorld({ as: { registration: false, clientDocuments: true, rewrite: toReal }, discovery: 'well-known', tools: { publicUrl } });
  real = w.svc.url;
  plain = await protectedServer({ registration: false });
  w.also.push(plain);
});
test.after(async () => w?.stop());

test('svc publishes its client metadata document at the https public address', async () => {
  const r = await fetch(`${w.svc.url}/admin/v1/tool-sign-in/client-metadata`);
  assert.is(r.status, 200);
  assert.equal(await r.json(), {
    client_id: documentUrl, client_name: 'svc', redirect_uris: [callback], grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'], token_endpoint_auth_method: 'none',
  });
});

test('an authorization server reading client metadata documents: the document URL is the client id, nothing is registered; discovery by the well-known URL', async () => {
  const id = await w.register('docs');
  const url = new URL(await w.start(id));
  assert.equal([url.searchParams.get('client_id'), url.searchParams.get('redirect_uri'), url.searchParams.get('resource')], [documentUrl, callback, w.mcp.url]);
  assert.is(w.as.registrations.length, 0);
  const { res, hops } = await browse(url.toString(), { rewrite: toReal });
  assert.is(res.status, 200);
  assert.is(hops.at(-1)!.startsWith(callback), true, 'back at the public address');
  assert.is(await w.signInState(id), 'signed_in');
  assert.is((await w.useTool('docs__whoami')).status, 200);
  assert.is(w.toolResult(), 'signed in as oauth-test-user');
  assert.equal(w.as.tokenRequests, [{ grant: 'authorization_code', resource: w.mcp.url }]);
});

test('neither registration nor client documents: the start asks for a client id', async () => {
  const id = await w.register('plain', plain);
  const r = await w.ws('POST', `/tool-servers/${id}/sign-in`);
  assert.equal([r.status, r.body.error.code, r.body.error.param], [400, 'invalid_request', 'oauth_client_id']);
  assert.equal(r.body.error.svc, { reason: 'no_client_registration' });
  assert.is(plain.as.authorizeQueries.length, 0);
});

test('an entered client id and secret: sent to the token endpoint, with the scope the admin chose', async () => {
  plain.as.addClient('svc-entered', 'entered-secret', [callback]);
  const id = await w.register('entered', plain, { oauth_client_id: 'svc-entered', oauth_client_secret: 'entered-secret', oauth_scope: 'tools' });
  const listed = (await w.ws('GET', '/tool-servers')).body.data.find((s: any) => s.id === id);
  assert.equal([listed.auth, listed.sign_in, listed.has_credentials], ['oauth', 'not_signed_in', false]);
  const url = new URL(await w.start(id));
  assert.is(url.searchParams.get('client_id'), 'svc-entered');
  assert.is(url.searchParams.get('scope')!.split(' ')[0], 'tools');
  assert.is((await browse(url.toString(), { rewrite: toReal })).res.status, 200);
  assert.is((await w.useTool('entered__whoami')).status, 200);
  assert.is(w.toolResult(), 'signed in as oauth-test-user');
  assert.equal(plain.as.tokenRequests, [{ grant: 'authorization_code', resource: plain.mcp.url }]);
  // A wrong secret would have been refused: the same server with another secret cannot sign in.
  const wrong = await w.register('wrong', plain, { oauth_client_id: 'svc-entered', oauth_client_secret: 'not-the-secret' });
  const { res } = await browse(await w.start(wrong), { rewrite: toReal });
  const body = (await res.json()) as any;
  assert.equal([res.status, body.error.code, body.error.svc], [502, 'upstream_unavailable', { reason: 'oauth_invalid_client' }]);
  assert.is(await w.signInState(wrong), 'not_signed_in');
});

test('the issuer is checked: metadata naming another issuer stops the start, a redirect with another iss stops the callback', async () => {
  const id = await w.register('mixup', plain, { oauth_client_id: 'svc-entered', oauth_client_secret: 'entered-secret' });
  plain.as.misbehave = 'metadata-issuer';
  const start = await w.ws('POST', `/tool-servers/${id}/sign-in`);
  assert.equal([start.status, start.body.error.code, start.body.error.svc], [502, 'upstream_unavailable', { reason: 'issuer_mismatch' }]);
  assert.not.ok(JSON.stringify(start.body).includes('impostor'), 'the server\'s claim is not echoed');
  plain.as.misbehave = 'response-issuer';
  const before = plain.as.tokenRequests.length;
  const { res } = await browse(await w.start(id), { rewrite: toReal });
  const body = (await res.json()) as any;
  assert.equal([res.status, body.error.code, body.error.svc], [502, 'upstream_unavailable', { reason: 'issuer_mismatch' }]);
  assert.is(plain.as.tokenRequests.length, before, 'the code was not redeemed');
  plain.as.misbehave = 'none';
  assert.is(await w.signInState(id), 'not_signed_in');
});

test.run();
