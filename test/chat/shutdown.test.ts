import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { shape, startService } from '../support/harness.js';
import { adminEnv } from '../support/provision.js';
import { assertSchema } from '../support/openapi.js';
import { StoreToken } from '../../kernel/index.js';
import { startChatWorld, modelName, type ChatWorld } from './setup.js';
import { hello, post, readEvents } from './support.js';

/**
 * SPEC.md Limits "Shutdown": in-flight requests may finish within the grace; new ones get a plain
 * 503; streams still running after it end with server_shutting_down. Nothing recorded is lost.
 * Each test runs a world of its own with a 300 ms grace (the spec's 20 s, shortened).
 */
const test = suite(`chat shutdown (${shape})`);
const streamBody = { model: modelName, messages: hello, stream: true };
const grace = 300;

/** Usage records of `ids`, read by a fresh service on the stopped world's database. */
async function recordsAfterStop(s: ChatWorld, ids: string[]): Promise<Array<Record<string, unknown>>> {
  const again = await startService({ backing: s.backing, env: adminEnv });
  try {
    const store = again.service.get(StoreToken);
    const rows = await Promise.all(ids.map((id) => store.execute<Record<string, unknown>>('select * from usage_records where id = ?', [id])));
    return rows.map((r) => r[0]!).filter(Boolean);
  } finally {
    await again.stop();
  }
}

test('shutdown: a long stream ends with server_shutting_down; a request during the drain gets a plain 503; records are kept', async () => {
  const s = await startChatWorld({ server: { shutdownGraceMs: grace } });
  try {
    s.mock.enqueue({ chunks: Array.from({ length: 100 }, (_, i) => `t${i} `), gapMs: 50 });
    const res = await post(s, streamBody);
    const requestId = res.headers.get('x-svc-request-id')!;
    // A connection already open (its request not yet complete) when the drain starts.
    const port = new URL(s.svc.url).port;
    const sock = connect(Number(port), '127.0.0.1');
    await new Promise((done) => sock.once('connect', done));
    sock.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const events: string[] = [];
    let stopping: Promise<void> | undefined;
    let late = '';
    let fresh: Response | undefined;
    await readEvents(res, async (data) => {
      events.push(data);
      if (events.length === 3) {
        stopping = s.svc.service.stop();
        await new Promise((done) => setTimeout(done, 50));
        // A new connection during the drain: still answered, with the plain 503.
        fresh = await fetch(`${s.svc.url}/healthz`, { headers: { connection: 'close' } });
        late = await new Promise<string>((done) => {
          let text = '';
          sock.on('data', (b: Buffer) => (text += b.toString('latin1')));
          sock.on('close', () => done(text));
          sock.write('\r\n');
        });
      }
    });
    await stopping;
    const last = JSON.parse(events.at(-1)!) as { error: { code: string } };
    assertSchema('ErrorResponse', last);
    assert.is(last.error.code, 'server_shutting_down');
    assert.ok(events.length > 3 && events.length < 100, `${events.length} events`);
    assert.match(late, /^HTTP\/1\.1 503 /);
    assert.is(fresh!.status, 503);
    assert.match(fresh!.headers.get('content-type') ?? '', /^text\/plain/);
    assert.ok(fresh!.headers.get('x-svc-request-id'));
    assert.not.match(late, /application\/json/i);
    assert.not.match(late, /"error"/);

    // Nothing lost on a graceful stop: the cut stream's record is in the store.
    const [row] = await recordsAfterStop(s, [requestId]);
    assert.is(row?.error_code, 'server_shutting_down');
    assert.ok(Number(row!.completion_tokens) > 0, 'charged for what was used');
  } finally {
    await s.stop();
  }
});


test('requests still waiting for their first byte when the grace ends: upstream aborted, client answered, records kept', async () => {
  const s = await startChatWorld({ server: { shutdownGraceMs: grace } });
  try {
    s.mock.reset();
    s.mock.enqueue({ hang: true }).enqueue({ hang: true });
    const answers = [post(s, streamBody), post(s, { model: modelName, messages: hello })].map((p) =>
      p.then(async (res) => ({ status: res.status, id: res.headers.get('x-svc-request-id'), text: await res.text() }), (err: Error) => ({ status: 0, id: null, text: String(err.cause ?? err) })),
    );
    while (s.mock.requests.length < 2) await new Promise((done) => setTimeout(done, 10));
    const t0 = performance.now();
    await s.svc.service.stop();
    const took = performance.now() - t0;
    const got = await Promise.all(answers);
    const settled = await Promise.all(s.mock.requests.map((r) => r.settled));
    if (process.env.SVC_TEST_VERBOSE) console.log({ took, got, settled });
    assert.equal(settled, ['aborted', 'aborted']);
    assert.ok(took < grace + 1500, `stop took ${Math.round(took)} ms`);
    for (const a of got) {
      assert.is(a.status, 503, a.text);
      assert.not.match(a.text, /"error"/);
    }
    const rows = await recordsAfterStop(s, got.map((a) => a.id!));
    assert.is(rows.length, 2, 'both requests are recorded');
    for (const r of rows) assert.is(r.error_code, 'server_shutting_down');
  } finally {
    await s.stop();
  }
});

test.run();
