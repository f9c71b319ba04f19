import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreToken } from '../../kernel/index.js';
import { unpack } from '../diagnostics/unpack.js';
import { shape } from '../support/harness.js';
import { browse, protectedServer, signInNeeded, startOAuthWorld, type OAuthWorld } from './oauth-support.js';

const test = suite(`tools: OAuth tokens never leak (${shape})`);
let w: OAuthWorld;

test.before(async () => {
  w = await startOAuthWorld();
});
test.after(async () => w?.stop());

const enteredSecret = 'oauth-client-secret-canary-5e1d07';

test('access and refresh tokens, codes and client secrets never reach logs, spans, records, admin responses, errors or the diagnostics bundle', async () => {
  const entered = await protectedServer({ registration: false });
  w.also.push(entered);
  entered.as.addClient('svc-canary', enteredSecret, [`${w.svc.url}/admin/v1/tool-sign-in/callback`]);
  const dcr = await w.register('crm');
  const fixed = await w.register('ledger', entered, { oauth_client_id: 'svc-canary', oauth_client_secret: enteredSecret });
  const seen: string[] = [];
  const keep = async (r: Response | { body: unknown }) => seen.push(r instanceof Response ? await r.text() : JSON.stringify(r.body));
  for (const id of [dcr, fixed]) {
    const { res, hops } = await browse(await w.start(id));
    await keep(res);
    await keep(await fetch(hops.at(-1)!)); // a replayed callback: its error
  }
  const requestIds: string[] = [];
  const use = async (fn: string) => requestIds.push((await w.useTool(fn)).requestId);
  await use('crm__whoami');
  await use('ledger__whoami');
  w.as.revokeAccessTokens(); // refreshed on the 401
  await use('crm__whoami');
  w.as.revokeAll(); // refresh refused
  await use('crm__whoami');
  assert.is(w.toolResult(), signInNeeded);
  assert.is(await w.signInState(dcr), 'expired');
  await keep(await w.ws('GET', '/tool-servers'));
  await keep(await w.ws('GET', `/tool-servers/${fixed}/tools`));
  await keep(await w.ws('GET', `/tool-servers/${dcr}/tools`));
  for (const r of requestIds) {
    await keep(await w.ws('GET', `/tool-calls?request_id=${r}`));
    await keep(await w.admin.call('GET', `/requests/${r}`));
  }
  await keep(await fetch(`${w.svc.url}/admin/v1/tool-sign-in/client-metadata`));
  const bundle = await fetch(`${w.svc.url}/admin/v1/diagnostics`, { headers: { authorization: `Bearer ${w.admin.token}` } });
  assert.is(bundle.status, 200);
  seen.push(...(await unpack(Buffer.from(await bundle.arrayBuffer()))).values());
  await new Promise((r) => setTimeout(r, 300)); // spans and usage are written behind the response
  const store = w.svc.service.get(StoreToken);
  for (const table of ['spans', 'usage_records', 'tool_calls', 'tool_servers', 'tool_oauth', 'tool_signins', 'retention_runs']) seen.push(JSON.stringify(await store.execute(`select * from ${table}`)));

  const secrets = [
    enteredSecret, ...w.as.issued, ...entered.as.issued,
    ...[...w.as.clients.values()].map((c) => c.secret).filter((s): s is string => Boolean(s)),
  ];
  assert.ok(w.as.issued.filter((t) => t.startsWith('at-')).length >= 2 && w.as.issued.some((t) => t.startsWith('rt-')), 'tokens were issued and refreshed');
  assert.ok(secrets.length >= 8);
  const all = seen.join('\n');
  for (const s of secrets) assert.not.ok(all.includes(s), `a response, record or the bundle carries ${s.slice(0, 6)}…`);
  await w.svc.service.stop();
  for (const s of secrets) assert.not.ok(w.svc.logs.text.includes(s), `logs carry ${s.slice(0, 6)}…`);
  assert.ok(w.svc.logs.events('tools.sign_in_expired').length === 1 && w.svc.logs.events('tools.token_refreshed').length === 1);
});

test.run();
