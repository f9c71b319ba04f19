import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { startChatWorld, modelName, type ChatWorld } from './setup.js';
import { expectSdk } from './support.js';
import { dataUrl, gif, jpeg, pdf, png, webp } from './files.js';

/** SPEC.md "Attachments": base64 data: URLs only, checked by signature; text files inlined; limits. */
const test = suite(`chat attachments (${shape})`);
let w: ChatWorld;
const blind = 'local:text-only';
const MB = 1024 * 1024;

type Part = Record<string, unknown>;
type Body = Parameters<OpenAI['chat']['completions']['create']>[0];
/** One user message with these content parts (typed loosely: some are deliberately wrong). */
const ask = (parts: Part[], model = modelName) =>
  w.client.chat.completions.create({ model, messages: [{ role: 'user', content: parts }] } as unknown as Body);
const text = (t: string): Part => ({ type: 'text', text: t });
const image = (url: string, detail?: string): Part => ({ type: 'image_url', image_url: detail ? { url, detail } : { url } });
const file = (f: Record<string, unknown>): Part => ({ type: 'file', file: f });
const textFile = (filename: string | undefined, bytes: Buffer): Part => file({ ...(filename === undefined ? {} : { filename }), file_data: dataUrl('text/plain', bytes) });
/** The content parts the upstream received for the first message. */
const forwarded = (): Part[] => w.mock.requests[0]!.body.messages[0].content as Part[];
/** A buffer of `size` bytes that starts with a real PNG (so only its size is wrong). */
const bigPng = (size: number): Buffer => Buffer.concat([png(), Buffer.alloc(size - png().length, 7)]);

test.before(async () => {
  w = await startChatWorld();
  await w.admin.model(blind, { can_read_images: false, can_read_pdf: false });
});
test.after(async () => w.stop());
test.before.each(() => w.mock.reset());

test('images: PNG, JPEG, GIF and WebP reach the upstream as the same data: URLs, detail kept', async () => {
  const urls = [dataUrl('image/png', png()), dataUrl('image/jpeg', jpeg()), dataUrl('image/gif', gif()), dataUrl('image/webp', webp())];
  await ask([text('Compare these'), image(urls[0]!, 'low'), image(urls[1]!), image(urls[2]!, 'high'), image(urls[3]!)]);
  assert.equal(forwarded(), [
    { type: 'text', text: 'Compare these' },
    { type: 'image_url', image_url: { url: urls[0], detail: 'low' } },
    { type: 'image_url', image_url: { url: urls[1] } },
    { type: 'image_url', image_url: { url: urls[2], detail: 'high' } },
    { type: 'image_url', image_url: { url: urls[3] } },
  ]);
});

test('a PDF reaches the upstream as a file part with its filename and data: URL', async () => {
  const url = dataUrl('application/pdf', pdf());
  await ask([text('Summarize'), file({ filename: 'report.pdf', file_data: url })]);
  assert.equal(forwarded()[1], { type: 'file', file: { filename: 'report.pdf', file_data: url } });
});

test('a plain-text file reaches every model as its text, delimited and named by its filename', async () => {
  const content = 'line one\nünïcødé ✓ 日本語\n';
  await ask([text('Read this'), textFile('notes.txt', Buffer.from(content, 'utf8'))], blind);
  assert.equal(forwarded()[1], { type: 'text', text: `--- file: notes.txt ---\n${content}\n--- end of file: notes.txt ---` });
  assert.is(w.mock.requests[0]!.body.model, 'text-only');
  w.mock.reset();
  const withCharset = `data:text/plain;charset=utf-8;base64,${Buffer.from('hi').toString('base64')}`;
  await ask([file({ filename: 'a b.txt', file_data: withCharset })]);
  assert.equal(forwarded()[0], { type: 'text', text: '--- file: a b.txt ---\nhi\n--- end of file: a b.txt ---' });
});

test('an attachment of exactly 10 MB is accepted', async () => {
  await ask([image(dataUrl('image/png', bigPng(10 * MB)))]);
  assert.is(w.mock.requests.length, 1);
  const url = (forwarded()[0]!.image_url as { url: string }).url;
  assert.is(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64').length, 10 * MB);
});

test('refused with 400 invalid_request naming the part: links, bad base64, wrong signature, wrong types', async () => {
  const p = 'messages[0].content[1]';
  const cases: Array<[Part, string]> = [
    [image('https://example.com/cat.png'), `${p}.image_url.url`],
    [image('http://127.0.0.1/cat.png'), `${p}.image_url.url`],
    [image('data:image/png;base64,!!not base64!!'), `${p}.image_url.url`],
    [image('data:image/png;base64,iVBORw0KGgo'), `${p}.image_url.url`],
    [image('data:image/png;base64,'), `${p}.image_url.url`],
    [image(`data:image/png,${png().toString('latin1')}`), `${p}.image_url.url`],
    [image(dataUrl('image/jpeg', png())), `${p}.image_url.url`],
    [image(dataUrl('image/webp', gif())), `${p}.image_url.url`],
    [image(dataUrl('image/svg+xml', Buffer.from('<svg/>'))), `${p}.image_url.url`],
    [image(dataUrl('application/pdf', pdf())), `${p}.image_url.url`],
    [{ type: 'image_url', image_url: dataUrl('image/png', png()) }, `${p}.image_url.url`],
    [file({ filename: 'x.pdf', file_data: dataUrl('application/pdf', png()) }), `${p}.file.file_data`],
    [file({ filename: 'x.zip', file_data: dataUrl('application/zip', Buffer.from('PK\x03\x04')) }), `${p}.file.file_data`],
    [file({ filename: 'x.pdf', file_data: 'https://example.com/x.pdf' }), `${p}.file.file_data`],
    [textFile('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])), `${p}.file.file_data`],
    [textFile('bad.txt', Buffer.from([0xff, 0xfe, 0x00, 0x41])), `${p}.file.file_data`],
    [textFile(undefined, Buffer.from('no name')), `${p}.file.filename`],
    [textFile('  ', Buffer.from('blank name')), `${p}.file.filename`],
    [file({ file_id: 'file-abc123' }), `${p}.file.file_id`],
    [file({ file_id: 'file-abc123', filename: 'x.txt', file_data: dataUrl('text/plain', Buffer.from('x')) }), `${p}.file.file_id`],
  ];
  for (const [part, param] of cases) {
    await expectSdk(ask([text('Look'), part]), { status: 400, code: 'invalid_request', param });
  }
  assert.is(w.mock.requests.length, 0);
});

test('size limits: over 10 MB for one attachment, over 20 MB for one message (each under 10 MB)', async () => {
  await expectSdk(ask([image(dataUrl('image/png', bigPng(10 * MB + 1)))]), { status: 400, code: 'invalid_request', param: 'messages[0].content[0].image_url.url' });
  const seven = dataUrl('image/png', bigPng(7 * MB));
  await expectSdk(ask([image(seven), image(seven), image(seven)]), { status: 400, code: 'invalid_request', param: 'messages[0].content' });
  const e = await expectSdk(ask([image(seven), file({ filename: 'a.pdf', file_data: dataUrl('application/pdf', Buffer.concat([pdf(), Buffer.alloc(7 * MB)])) }), textFile('t.txt', Buffer.alloc(7 * MB, 0x61))]), {
    status: 400,
    code: 'invalid_request',
    param: 'messages[0].content',
  });
  assert.match(e.message, /20 MB/);
  assert.is(w.mock.requests.length, 0);
  // The per-message limit is per message: two messages of 12 MB in all, each well under it, pass.
  const six = dataUrl('image/png', bigPng(6 * MB));
  await w.client.chat.completions.create({
    model: modelName,
    messages: [
      { role: 'user', content: [{ type: 'image_url', image_url: { url: six } }] },
      { role: 'assistant', content: 'I see it.' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: six } }] },
    ],
  });
  assert.is(w.mock.requests.length, 1);
});

test('capability: an image or a PDF to a model that cannot read it is 422 unsupported_input', async () => {
  await expectSdk(ask([text('?'), image(dataUrl('image/webp', webp()))], blind), { status: 422, code: 'unsupported_input', param: 'messages' });
  await expectSdk(ask([file({ filename: 'r.pdf', file_data: dataUrl('application/pdf', pdf()) })], blind), { status: 422, code: 'unsupported_input', param: 'messages' });
  assert.is(w.mock.requests.length, 0);
});

test.run();
