// Attachments (SPEC.md Attachments and Limits): images, PDFs and plain-text files read in the
// browser and sent as base64 data: URLs in content parts; the spec's limits are checked before
// anything is sent, and what a model cannot read is left to the API to refuse, in its own words.

const MB = 1024 * 1024;
export const limits = { each: 10 * MB, perMessage: 20 * MB };

const imageTypes = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Text files browsers often type oddly (or not at all), by extension. */
const textExtensions = /\.(txt|md|markdown|csv|tsv|json|jsonl|log|xml|ya?ml|toml|ini|html?|css|js|mjs|ts|py|rb|go|rs|java|c|h|cpp|sh|sql)$/i;

export const accepted = 'image/png,image/jpeg,image/gif,image/webp,application/pdf,text/*,.md,.csv,.json,.log,.yaml,.yml';

const mb = (bytes) => `${(bytes / MB).toFixed(1)} MB`;

function kindOf(file) {
  if (imageTypes.has(file.type)) return 'image';
  if (file.type === 'application/pdf') return 'pdf';
  if (file.type.startsWith('text/') || file.type === 'application/json' || textExtensions.test(file.name)) return 'text';
  return null;
}

function base64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Reads one file into an attachment `{ name, kind, size, part }`, or throws an Error whose message
 * says why it cannot be attached (type, size, text that is not UTF-8).
 */
export async function readAttachment(file) {
  const kind = kindOf(file);
  if (!kind) throw new Error(`${file.name} cannot be attached: only images (PNG, JPEG, GIF, WebP), PDF files and plain-text files can.`);
  if (file.size > limits.each) throw new Error(`${file.name} is ${mb(file.size)}: an attachment may be at most 10 MB.`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (kind === 'text') {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new Error(`${file.name} is not UTF-8 text, so it cannot be attached as a text file.`);
    }
    return { name: file.name, kind, size: file.size, part: { type: 'file', file: { filename: file.name, file_data: `data:text/plain;base64,${base64(bytes)}` } } };
  }
  const url = `data:${file.type};base64,${base64(bytes)}`;
  if (kind === 'image') return { name: file.name, kind, size: file.size, part: { type: 'image_url', image_url: { url } } };
  return { name: file.name, kind, size: file.size, part: { type: 'file', file: { filename: file.name, file_data: url } } };
}

/** Null when the attachments fit in one message, else the sentence saying they do not. */
export function tooMuch(attachments) {
  const total = attachments.reduce((n, a) => n + a.size, 0);
  return total > limits.perMessage ? `These attachments add up to ${mb(total)}: one message may carry at most 20 MB.` : null;
}

/** The user message's content: plain text alone, or parts (text first, then each attachment). */
export function userContent(text, attachments) {
  if (attachments.length === 0) return text;
  return [...(text ? [{ type: 'text', text }] : []), ...attachments.map((a) => a.part)];
}

const fileBlock = /^--- file: (.+) ---\n([\s\S]*)\n--- end of file: \1 ---$/;

/**
 * A stored user message's content for display: its text and its attachments (`{ name, kind, url? }`).
 * A text file reaches history as the text block the API made of it; it shows as that file again.
 */
export function displayParts(content) {
  if (typeof content === 'string' || content === null || content === undefined) return { text: content ?? '', files: [] };
  const texts = [];
  const files = [];
  for (const p of content) {
    const block = p.type === 'text' ? fileBlock.exec(p.text) : null;
    if (block) files.push({ name: block[1], kind: 'text' });
    else if (p.type === 'text') texts.push(p.text);
    else if (p.type === 'image_url') files.push({ name: 'image', kind: 'image', url: p.image_url.url });
    else if (p.type === 'file') files.push({ name: p.file.filename ?? 'PDF file', kind: p.file.file_data?.startsWith('data:text/') ? 'text' : 'pdf' });
  }
  return { text: texts.join('\n\n'), files };
}
