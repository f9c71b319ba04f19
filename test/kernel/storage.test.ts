import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StoreToken } from '../../kernel/index.js';
import { createBacking, startService, shape, type Backing, type TestService } from '../support/harness.js';
import { Note } from './fixtures/notes-plugin.js';
import { tempDir } from './fixtures/cli.js';

const test = suite(`storage: migrations and plugin entities (${shape})`);
const notesModule = fileURLToPath(new URL('./fixtures/notes-plugin.js', import.meta.url));
const dialect = shape === 'embedded' ? 'sqlite' : 'postgresql';
const withNotes = { plugins: { notes: { module: notesModule } } };
let backing: Backing;

test.before(async () => {
  backing = await createBacking();
});
test.after(async () => {
  await backing.drop();
});

async function migrationRows(svc: TestService): Promise<Array<{ id: string; applied_at: string }>> {
  return svc.service.get(StoreToken).execute<{ id: string; applied_at: string }>('select id, applied_at from svc_migrations where id like ? order by id', ['notes-%']);
}

test('first start applies the plugin migrations in order and records them in svc_migrations', async () => {
  const svc = await startService({ backing, overrides: withNotes });
  try {
    assert.is(svc.service.get(StoreToken).dialect, dialect);
    const migrated = svc.logs.events('store.migrated');
    assert.is(migrated.length, 1);
    assert.is(migrated[0]!.dialect, dialect);
    const applied = (migrated[0]!.applied as string[]).filter((id) => id.startsWith('notes-'));
    assert.equal(applied, ['notes-001-test-notes', 'notes-002-index']);
    const rows = await migrationRows(svc);
    assert.equal(rows.map((r) => r.id), ['notes-001-test-notes', 'notes-002-index']);
    for (const r of rows) assert.ok(!Number.isNaN(Date.parse(r.applied_at)));
  } finally {
    await svc.stop();
  }
});

test('a plugin entity round-trips through store.em(): insert, read in a fresh unit of work, update, query', async () => {
  const svc = await startService({ backing, overrides: withNotes });
  try {
    const store = svc.service.get(StoreToken);
    const createdAt = new Date('2025-03-04T05:06:07.000Z');
    const em = store.em();
    em.create(Note, { id: 'n1', body: 'héllo — 世界 🙂', stars: 3, createdAt });
    em.create(Note, { id: 'n2', body: 'second', stars: 5, createdAt });
    await em.flush();

    const read = await store.em().findOneOrFail(Note, { id: 'n1' });
    assert.is(read.body, 'héllo — 世界 🙂');
    assert.is(read.stars, 3);
    assert.is(read.createdAt.toISOString(), createdAt.toISOString());

    const em2 = store.em();
    const n2 = await em2.findOneOrFail(Note, { id: 'n2' });
    n2.stars = 9;
    await em2.flush();
    const starred = await store.em().find(Note, { stars: { $gt: 4 } }, { orderBy: { id: 'asc' } });
    assert.equal(starred.map((n) => [n.id, n.stars]), [['n2', 9]]);
    // The same table through raw SQL with `?` placeholders.
    const raw = await store.execute<{ n: number | string }>('select count(*) as n from test_notes where stars >= ?', [3]);
    assert.is(Number(raw[0]!.n), 2);
  } finally {
    await svc.stop();
  }
});

test('second start applies nothing, keeps the records and the rows', async () => {
  const svc = await startService({ backing, overrides: withNotes });
  try {
    assert.is(svc.logs.events('store.migrated').length, 0, 'no store.migrated: nothing was applied');
    assert.is((await migrationRows(svc)).length, 2);
    assert.is((await svc.service.get(StoreToken).em().findOneOrFail(Note, { id: 'n1' })).stars, 3);
  } finally {
    await svc.stop();
  }
});

test('a failing migration stops start-up naming it, and nothing of its batch is applied', async () => {
  const b = await createBacking();
  const dir = tempDir({
    'broken.mjs': `export default {
  name: 'broken',
  migrations: [
    { id: 'broken-001-ok', sqlite: ['create table broken_ok (id text primary key)'], postgresql: ['create table broken_ok (id text primary key)'] },
    { id: 'broken-002-bad', sqlite: ['create tabel nope (id text)'], postgresql: ['create tabel nope (id text)'] },
  ],
  register() {},
};
`,
  });
  try {
    let message = '';
    await startService({ backing: b, overrides: { plugins: { broken: { module: join(dir, 'broken.mjs') } } } }).then(
      async (s) => {
        await s.stop();
        assert.unreachable('start-up should fail');
      },
      (err: Error) => (message = err.message),
    );
    assert.match(message, /^migration broken-002-bad failed: /);
    const svc = await startService({ backing: b });
    try {
      const store = svc.service.get(StoreToken);
      assert.equal(await store.execute('select id from svc_migrations where id like ?', ['broken-%']), []);
      const table = shape === 'embedded' ? "select name from sqlite_master where name = 'broken_ok'" : "select tablename from pg_tables where tablename = 'broken_ok'";
      assert.equal(await store.execute(table), [], 'the first migration of the batch was rolled back');
    } finally {
      await svc.stop();
    }
  } finally {
    await b.drop();
  }
});

test('a migration id declared twice stops start-up', async () => {
  const b = await createBacking();
  const twice = `{ id: 'dup-001', sqlite: ['select 1'], postgresql: ['select 1'] }`;
  const dir = tempDir({ 'dup.mjs': `export default { name: 'dup', migrations: [${twice}, ${twice}], register() {} };\n` });
  try {
    await startService({ backing: b, overrides: { plugins: { dup: { module: join(dir, 'dup.mjs') } } } }).then(
      async (s) => {
        await s.stop();
        assert.unreachable('start-up should fail');
      },
      (err: Error) => assert.match(err.message, /migration id dup-001 is declared twice/),
    );
  } finally {
    await b.drop();
  }
});

if (shape === 'scale-out') {
  test('two replicas starting together on a fresh database apply each migration once', async () => {
    const b = await createBacking();
    try {
      const [s1, s2] = await Promise.all([startService({ backing: b, overrides: withNotes }), startService({ backing: b, overrides: withNotes })]);
      try {
        const applied = [...s1.logs.events('store.migrated'), ...s2.logs.events('store.migrated')].flatMap((e) => e.applied as string[]);
        assert.is(applied.filter((id) => id === 'notes-001-test-notes').length, 1);
        assert.is((await migrationRows(s1)).length, 2);
        const em = s1.service.get(StoreToken).em();
        em.create(Note, { id: 'r1', body: 'from replica one', stars: 1, createdAt: new Date() });
        await em.flush();
        assert.is((await s2.service.get(StoreToken).em().findOneOrFail(Note, { id: 'r1' })).body, 'from replica one');
      } finally {
        await s1.stop();
        await s2.stop();
      }
    } finally {
      await b.drop();
    }
  });
}

test.run();
