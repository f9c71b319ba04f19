import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toPostgresPlaceholders } from '../../kernel/store/bound-sql.js';

/** kernel/store/bound-sql.ts: the `?` → `$n` conversion every PostgreSQL statement of the store goes through. */
const test = suite('kernel: bound SQL (PostgreSQL placeholders)');

test('placeholders are numbered in order; quoted strings and identifiers keep their question marks', () => {
  assert.is(toPostgresPlaceholders('insert into t (a,b) values (?,?),(?,?)', false), 'insert into t (a,b) values ($1,$2),($3,$4)');
  assert.is(toPostgresPlaceholders(`select ? as "what?", 'why?' as w, ? from t where x = 'it''s?' and y = ?`, false), `select $1 as "what?", 'why?' as w, $2 from t where x = 'it''s?' and y = $3`);
  assert.is(toPostgresPlaceholders('select 1', false), 'select 1');
  // Remembered: the same text gives the same string back.
  const sql = 'update t set a = ? where id = ?';
  assert.is(toPostgresPlaceholders(sql), 'update t set a = $1 where id = $2');
  assert.is(toPostgresPlaceholders(sql), toPostgresPlaceholders(sql));
});

test.run();
