import { GatewayError, pdfPageCount, type ContentPart, type RequestNeeds } from '../../kernel/index.js';

/** SPEC.md Limits: 10 MB per attachment, 20 MB in one message. */
export interface AttachmentLimits {
  perAttachmentBytes: number;
  perMessageBytes: number;
}

const imageTypes = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const dataUrl = /^data:([a-z]+\/[a-z0-9.+-]+)(;[a-z-]+=[^;,]*)*;base64,/i;
const base64Body = /^[A-Za-z0-9+/]*={0,2}$/;

function bad(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

/** The bytes' own signature, so a declared type cannot smuggle something else to a model. */
function signatureMatches(type: string, head: Buffer): boolean {
  switch (type) {
    case 'image/png':
      return head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    case 'image/jpeg':
      return head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
    case 'image/gif':
      return head.subarray(0, 4).toString('latin1') === 'GIF8';
    case 'image/webp':
      return head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP';
    case 'application/pdf':
      return head.subarray(0, 5).toString('latin1') === '%PDF-';
    default:
      return true;
  }
}

interface Decoded { type: string; bytes: Buffer }

/**
 * Decodes a base64 `data:` URL, checking its size before decoding (base64 length × 3/4) so an
 * oversized attachment is refused without allocating it, and its content against its type.
 */
function decodeDataUrl(url: unknown, param: string, limits: AttachmentLimits, allowed: (type: string) => boolean): Decoded {
  if (typeof url !== 'string') throw bad(param, `${param} must be a string.`);
  const m = dataUrl.exec(url);
  if (!m) {
    throw bad(param, /^https?:/i.test(url) ? 'Attachments are accepted only as base64 data: URLs, not links.' : `${param} must be a base64 data: URL.`);
  }
  const type = m[1]!.toLowerCase();
  if (!allowed(type)) throw bad(param, `Attachments of type ${type} are not accepted here.`);
  const payload = url.slice(m[0].length);
  // Padding is not data: without subtracting it, a file of exactly the limit was refused.
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
  if (Math.floor((payload.length * 3) / 4) - padding > limits.perAttachmentBytes) {
    throw bad(param, `An attachment may be at most ${Math.floor(limits.perAttachmentBytes / (1024 * 1024))} MB.`);
  }
  if (payload.length === 0 || payload.length % 4 !== 0 || !base64Body.test(payload)) throw bad(param, 'The attachment is not valid base64.');
  const bytes = Buffer.from(payload, 'base64');
  if (!signatureMatches(type, bytes.subarray(0, 16))) throw bad(param, `The attachment's content is not ${type}.`);
  return { type, bytes };
}

/** How a plain-text file reaches every model: its text, delimited and named by its filename. */
export function textFileBlock(filename: string, text: string): string {
  return `--- file: ${filename} ---\n${text}\n--- end of file: ${filename} ---`;
}

/**
 * Checks and normalizes a message's content parts. Images and PDFs stay as parts (counted in
 * `needs` for the capability check); a text file becomes a text part holding its contents.
 */
export function normalizeParts(parts: unknown[], param: string, needs: RequestNeeds, limits: AttachmentLimits): ContentPart[] {
  let messageBytes = 0;
  const out = parts.map((part, i): ContentPart => {
    const p = `${param}[${i}]`;
    if (typeof part !== 'object' || part === null) throw bad(p, `${p} must be a content part object.`);
    const { type } = part as { type?: unknown };
    if (type === 'text') {
      const text = (part as { text?: unknown }).text;
      if (typeof text !== 'string') throw bad(`${p}.text`, `${p}.text must be a string.`);
      return { type: 'text', text };
    }
    if (type === 'image_url') {
      const image = (part as { image_url?: { url?: unknown; detail?: unknown } }).image_url;
      const d = decodeDataUrl(image?.url, `${p}.image_url.url`, limits, (t) => imageTypes.has(t));
      messageBytes += d.bytes.length;
      needs.images++;
      const detail = image?.detail === 'low' || image?.detail === 'high' || image?.detail === 'auto' ? image.detail : undefined;
      return { type: 'image_url', image_url: detail ? { url: image!.url as string, detail } : { url: image!.url as string } };
    }
    if (type === 'file') {
      const file = (part as { file?: { filename?: unknown; file_data?: unknown; file_id?: unknown } }).file;
      if (file?.file_id !== undefined) throw bad(`${p}.file.file_id`, 'Uploaded file ids are not supported; send the file as a base64 data: URL in file_data.');
      const d = decodeDataUrl(file?.file_data, `${p}.file.file_data`, limits, (t) => t === 'application/pdf' || t === 'text/plain');
      messageBytes += d.bytes.length;
      if (d.type === 'application/pdf') {
        needs.pdfs++;
        needs.pdfPages = (needs.pdfPages ?? 0) + pdfPageCount(d.bytes);
        const filename = typeof file?.filename === 'string' ? file.filename : undefined;
        return { type: 'file', file: filename ? { filename, file_data: file!.file_data as string } : { file_data: file!.file_data as string } };
      }
      if (typeof file?.filename !== 'string' || file.filename.trim() === '') throw bad(`${p}.file.filename`, 'A text file needs a filename.');
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(d.bytes);
      } catch {
        throw bad(`${p}.file.file_data`, 'A text file must be UTF-8.');
      }
      return { type: 'text', text: textFileBlock(file.filename, text) };
    }
    throw bad(`${p}.type`, `${p}.type must be text, image_url or file.`);
  });
  if (messageBytes > limits.perMessageBytes) {
    throw bad(param, `Attachments in one message may add up to at most ${Math.floor(limits.perMessageBytes / (1024 * 1024))} MB.`);
  }
  needs.attachmentBytes += messageBytes;
  return out;
}
