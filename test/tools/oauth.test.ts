import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreToken } from '../../kernel/index.js';
import { addMember, newPerson } from '../identity/support.js';
import { shape } from '../support/harness.js';
import { Admin } from '../support/provision.js';
import { browse, signInNeeded, startOAuthWorld, type OAuthWorld } from './oauth-support.js';
import { model } from './support.js';

const test = suite(`tools: OAuth sign-in of a tool server (${shape})`);
let w: OAuthWorld;
let id: string;

test.before(async () => {
  w = await startOAuthWorld();
});
test.after(async () => w?.stop());

const ask = { model, messages: [{ role: 'user' as const, content: 'Who am I over there?' }] };
const useTool = () => w.useTool('crm__whoami');

const store = () => w.svc.service.get(StoreToken);
const grants = (kind: string) => w.as.tokenRequests.filter((r) => r.grant === kind).length;

test('register with auth "oauth": the listing says not signed in; tools cannot be listed yet; wrong combinations are refused', async () => {
  id = await w.register('crm');
  const listed = (await w.ws('GET', '/tool-servers')).body.data.find((s: any) => s.id === id);
  assert.equal({ auth: listed.auth, sign_in: listed.sign_in, has_credentials: listed.has_credentials }, { auth: 'oauth', sign_in: 'not_signed_in', has_credentials: false });
  const tools = await w.ws('GET', `/tool-servers/${id}/tools`);
  assert.equal([tools.status, tools.body.error.code, tools.body.error.param], [400, 'invalid_request', 'serverId']);
  const bad = async (body: Record<string, unknown>, param: string) => {
    const r = await w.ws('POST', '/tool-servers', { name: 'bad', url: w.mcp.url, ...body });
    assert.equal([r.status, r.body.error.code, r.body.error.param], [400, 'invalid_request', param], JSON.stringify(body));
  };
  await bad({ auth: 'oauth', bearer_token: 'x' }, 'bearer_token');
  await bad({ auth: 'oauth', oauth_client_secret: 's' }, 'oauth_client_secret');
  await bad({ oauth_client_id: 'c' }, 'oauth_client_id');
  await bad({ auth: 'bearer' }, 'bearer_token');
  const bearer = await w.ws('POST', '/tool-servers', { name: 'static', url: w.mcp.url, bearer_token: 'static-token' });
  assert.equal([bearer.body.auth, bearer.body.sign_in], ['bearer', null]);
  const notOAuth = await w.ws('POST', `/tool-servers/${bearer.body.id}/sign-in`);
  assert.equal([notOAuth.status, notOAuth.body.error.code, notOAuth.body.error.param], [400, 'invalid_request', 'serverId']);
  assert.is((await w.ws('DELETE', `/tool-servers/${bearer.body.id}`)).status, 204);
  // Not signed in: the server is left out of a conversation request, which still answers 200.
  w.mock.enqueue({ reply: { content: 'No tools.' } });
  const r = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': await w.conversation() } });
  assert.is(r.choices[0]!.message.content, 'No tools.');
  assert.equal(w.svc.logs.events('tools.list_failed').map((e) => e.kind), ['sign_in']);
});

test('only a workspace admin starts a sign-in; svc contacts no authorization server whose origin is not allowed', async () => {
  const member = await newPerson(w.svc.url, w.admin.token, 'oauth-member@example.test');
  await addMember(w.svc.url, w.admin.token, w.workspaceId, 'oauth-member@example.test', 'member');
  const asMember = await new Admin(w.svc.url, member.token).call('POST', `/workspaces/${w.workspaceId}/tool-servers/${id}/sign-in`);
  assert.equal([asMember.status, (asMember.body as any).error.code], [403, 'forbidden']);
  await w.admin.ok('DELETE', `/tool-origins?origin=${encodeURIComponent(w.as.origin)}`);
  const refused = await w.ws('POST', `/tool-servers/${id}/sign-in`);
  assert.equal([refused.status, refused.body.error.code], [400, 'invalid_request']);
  assert.ok(refused.body.error.message.includes(w.as.origin), 'names the origin to allow');
  assert.equal([w.as.registrations.length, w.as.authorizeQueries.length], [0, 0]);
  await w.admin.ok('POST', '/tool-origins', { origin: w.as.origin });
  assert.equal(w.svc.logs.events('tools.sign_in_failed').map((e) => [e.step, e.reason]), [['start', 'origin_not_allowed']]);
});

test('sign in: discovery from the 401, dynamic registration, PKCE S256, resource and state; the browser comes back; the tool runs with the token', async () => {
  const url = new URL(await w.start(id));
  assert.is(url.origin + url.pathname, `${w.as.origin}/authorize`);
  const q = url.searchParams;
  const callback = `${w.svc.url}/admin/v1/tool-sign-in/callback`;
  assert.equal([q.get('response_type'), q.get('code_challenge_method'), q.get('resource'), q.get('redirect_uri')], ['code', 'S256', w.mcp.url, callback]);
  assert.match(q.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
  assert.match(q.get('state')!, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(q.get('scope')!.split(' ').includes('tools'), 'the scope the resource metadata names');
  assert.is(w.as.registrations.length, 1);
  assert.equal((w.as.registrations[0] as any).redirect_uris, [callback]);
  assert.is(q.get('client_id'), [...w.as.clients.keys()][0]);
  assert.is(await w.signInState(id), 'not_signed_in');
  const { res, hops } = await browse(url.toString());
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/html/);
  assert.match(await res.text(), /Signed in[\s\S]*crm/);
  assert.equal(hops.map((h) => new URL(h).origin), [w.as.origin, w.svc.url]);
  assert.is(await w.signInState(id), 'signed_in');
  assert.equal(w.as.tokenRequests, [{ grant: 'authorization_code', resource: w.mcp.url }]);
  const tools = await w.ws('GET', `/tool-servers/${id}/tools`);
  assert.equal(tools.body.data.map((t: any) => [t.function_name, t.needs_approval]), [['crm__whoami', false]]);
  const used = await useTool();
  assert.equal([used.status, used.content, w.toolResult()], [200, 'Done.', 'signed in as oauth-test-user']);
  const bearer = w.mcp.authorizations.at(-1)!;
  assert.ok(w.as.issued.includes(bearer.replace('Bearer ', '')), 'the access token the authorization server issued');
  assert.equal(w.svc.logs.events('tools.signed_in').map((e) => e.server_id), [id]);
});

test('a refused access token is refreshed on the 401; one past its expiry is refreshed before the call', async () => {
  w.as.revokeAccessTokens();
  const before = grants('refresh_token');
  assert.equal((await useTool()).content, 'Done.');
  assert.is(w.toolResult(), 'signed in as oauth-test-user');
  assert.is(grants('refresh_token'), before + 1, 'refreshed once, on the 401');
  assert.equal(w.as.tokenRequests.at(-1), { grant: 'refresh_token', resource: w.mcp.url });
  // The clock: the stored expiry moves into the past (the authorization server still accepts the token).
  await store().execute('update tool_oauth set access_expires_at = ? where server_id = ?', [Date.now() - 1, id]);
  const old = w.mcp.authorizations.at(-1)!;
  const seen = w.mcp.authorizations.length;
  await useTool();
  assert.is(w.toolResult(), 'signed in as oauth-test-user');
  assert.is(grants('refresh_token'), before + 2, 'refreshed before calling');
  assert.not.ok(w.mcp.authorizations.slice(seen).includes(old), 'the expired token was not sent');
  assert.is(await w.signInState(id), 'signed_in');
  assert.is(w.svc.logs.events('tools.token_refreshed').length, 2);
});

test('a refused refresh: the model is told the tool cannot be used right now, the request is 200, the listing says expired', async () => {
  w.as.revokeAll();
  const before = grants('refresh_token');
  const used = await useTool();
  assert.equal([used.status, used.content, w.toolResult()], [200, 'Done.', signInNeeded]);
  assert.is(grants('refresh_token'), before + 1);
  assert.is(await w.signInState(id), 'expired');
  assert.equal(w.svc.logs.events('tools.sign_in_expired').map((e) => [e.server_id, e.kind]), [[id, 'invalid_grant']]);
  const records = (await w.ws('GET', `/tool-calls?request_id=${used.requestId}`)).body.data;
  assert.equal(records.map((r: any) => [r.tool, r.outcome]), [['whoami', 'error']]);
  // While expired, calls are refused at once: no further token request.
  assert.is((await useTool()).status, 200);
  assert.is(w.toolResult(), signInNeeded);
  assert.is(grants('refresh_token'), before + 1);
  // Signing in again mends it.
  assert.is((await browse(await w.start(id))).res.status, 200);
  assert.is(await w.signInState(id), 'signed_in');
  await useTool();
  assert.is(w.toolResult(), 'signed in as oauth-test-user');
});

test('a callback with a wrong, reused or refused state gets a clear error; only the right one signs in', async () => {
  const cb = (query: string) => fetch(`${w.svc.url}/admin/v1/tool-sign-in/callback?${query}`).then(async (r) => [r.status, ...Object.values(((await r.json()) as any).error)]);
  const unknown = await cb('state=not-a-state&code=abc');
  assert.equal(unknown.slice(0, 1), [400]);
  assert.equal([unknown[3], unknown[4]], ['state', 'invalid_request']);
  assert.match(String(unknown[1]), /unknown or was already used/);
  const first = new URL(await w.start(id));
  const refused = await cb(`state=${first.searchParams.get('state')}&error=access_denied&iss=${encodeURIComponent(w.as.issuer)}`);
  assert.equal([refused[0], refused[3], refused[4]], [400, 'error', 'invalid_request']);
  assert.match(String(refused[1]), /did not grant access \(access_denied\)/);
  const { res, hops } = await browse(await w.start(id));
  assert.is(res.status, 200);
  const replay = await fetch(hops.at(-1)!);
  assert.is(replay.status, 400);
  assert.match(((await replay.json()) as any).error.message, /already used/);
  assert.is(await w.signInState(id), 'signed_in');
});

test('a sign-in started in a browser session must come back to that browser', async () => {
  const fromBrowser = { cookie: `svc_session=${w.admin.token}`, 'x-svc-csrf': '1' };
  const start = async () => {
    const r = await fetch(`${w.svc.url}/admin/v1/workspaces/${w.workspaceId}/tool-servers/${id}/sign-in`, { method: 'POST', headers: fromBrowser });
    assert.is(r.status, 201);
    return { url: ((await r.json()) as any).authorization_url as string, cookie: r.headers.get('set-cookie')! };
  };
  const elsewhere = await start();
  assert.match(elsewhere.cookie, /^svc_tsi_[0-9a-f]{16}=[A-Za-z0-9_-]+; Path=\/admin\/v1\/tool-sign-in\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/);
  const other = await browse(elsewhere.url);
  assert.is(other.res.status, 400);
  assert.match(((await other.res.json()) as any).error.message, /another browser/);
  const here = await start();
  const same = await browse(here.url, { cookie: here.cookie.split(';')[0] });
  assert.is(same.res.status, 200);
});

test('sign-out forgets the tokens and svc\'s registration: not signed in, the model is told; a new sign-in registers again', async () => {
  const del = await w.ws('DELETE', `/tool-servers/${id}/sign-in`);
  assert.is(del.status, 204);
  assert.is(await w.signInState(id), 'not_signed_in');
  const before = w.as.tokenRequests.length;
  await useTool();
  assert.is(w.toolResult(), signInNeeded, 'the tool list was cached: offered, and refused when called');
  assert.is(w.as.tokenRequests.length, before);
  const registered = w.as.registrations.length;
  assert.is((await browse(await w.start(id))).res.status, 200);
  assert.is(w.as.registrations.length, registered + 1);
  assert.equal(w.svc.logs.events('tools.signed_out').map((e) => e.server_id), [id]);
});

test('removing the server removes its sign-in', async () => {
  await w.start(id); // one unfinished sign-in left behind
  assert.is((await w.ws('DELETE', `/tool-servers/${id}`)).status, 204);
  assert.equal(await store().execute('select server_id from tool_oauth where server_id = ?', [id]), []);
  assert.equal(await store().execute('select id from tool_signins where server_id = ?', [id]), []);
});

test.run();
