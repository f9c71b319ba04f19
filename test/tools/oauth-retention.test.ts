import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreToken } from '../../kernel/index.js';
import { shape } from '../support/harness.js';
import { browse, startOAuthWorld, type OAuthWorld } from './oauth-support.js';

const test = suite(`tools: unfinished OAuth sign-ins and the retention job (${shape})`);
let w: OAuthWorld;
const ttlMs = 3000;

test.before(async () => {
  w = await startOAuthWorld({ tools: { signInTtlMs: ttlMs } });
});
test.after(async () => w?.stop());

const message = async (res: Response) => ((await res.json()) as any).error.message as string;

test('unfinished sign-ins are a retention kind removed at the next run once expired; a late callback is refused; a live one survives and completes', async () => {
  const kinds = (await w.admin.ok<{ kinds: any[] }>('GET', '/retention')).kinds;
  assert.equal(kinds.find((k) => k.kind === 'tool_signins'), {
    kind: 'tool_signins', summary: 'Unfinished tool sign-ins', days: 'expired', default_days: 'expired', min_days: 1, max_days: 3650, per_workspace: false,
  });
  const id = await w.register('crm');
  const abandoned = await w.start(id);
  const late = await w.start(id);
  await new Promise((r) => setTimeout(r, ttlMs + 200));
  const live = await w.start(id);
  const store = w.svc.service.get(StoreToken);
  assert.is((await store.execute('select id from tool_signins')).length, 3);

  const tooLate = await browse(late);
  assert.is(tooLate.res.status, 400);
  assert.match(await message(tooLate.res), /has expired/);

  const run = await w.admin.ok<{ run: { counts: Record<string, number> } }>('POST', '/retention/runs');
  assert.is(run.run.counts.tool_signins, 1, 'the abandoned one (the late one was consumed by its callback)');
  assert.is((await store.execute('select id from tool_signins')).length, 1);

  const gone = await browse(abandoned);
  assert.is(gone.res.status, 400);
  assert.match(await message(gone.res), /unknown or was already used/);
  assert.is(await w.signInState(id), 'not_signed_in');

  assert.is((await browse(live)).res.status, 200);
  assert.is(await w.signInState(id), 'signed_in');
  assert.equal((await store.execute('select id from tool_signins')).length, 0, 'a completed sign-in leaves no record');
});

test.run();
