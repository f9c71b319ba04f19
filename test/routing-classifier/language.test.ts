import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadSets } from '../../bench/routing/dataset.js';
import { shape } from '../support/harness.js';

const test = suite(`route classifier: same-language route texts (${shape})`);

test("the evaluation files a prompt under 'examples in its language' only for real examples in it (English quoting French is English)", () => {
  const sets = new Map(loadSets().map((s) => [s.name, s]));
  assert.equal([...sets.get('assistant')!.exampleLanguages], []);
  assert.equal([...sets.get('business')!.exampleLanguages], ['de']);
  assert.equal([...sets.get('travel')!.exampleLanguages].sort(), ['de', 'es', 'fr', 'ja']);
  assert.not.ok(sets.get('assistant')!.prompts.some((p) => p.localExamples));
});

test.run();
