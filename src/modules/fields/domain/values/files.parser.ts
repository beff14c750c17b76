import type { FileInput } from './field-value.types.js';
import { parseList, readId } from './list-value.parser.js';
import { invalidValue } from './field-value.errors.js';
import { isPlainObject, isStorableText } from './json.guards.js';

export const MAX_FILE_NAME_LENGTH = 255;
export const MAX_FILE_URL_LENGTH = 2048;

const EXPECTED = 'expected a file URL (http or https), {"name", "data"} or an array of those';
// `data:<mime>[;param=value]*;base64,<payload>`; any other string in `data` is the file's text.
const DATA_URL = /^data:([^,]*);base64,(.*)$/is;
const MIME_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Names end up in Content-Disposition headers and on disks of people who download them. */
export function isValidFileName(name: string): boolean {
  return (
    // A blank name is no name (nothing to show or save the file as), like an empty one.
    name.trim().length >= 1 &&
    name.length <= MAX_FILE_NAME_LENGTH &&
    name !== '.' &&
    name !== '..' &&
    !/[/\\\u0000-\u001f\u007f]/.test(name) &&
    isStorableText(name)
  );
}

function parseUrl(field: string, input: string): FileInput {
  const text = input.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidValue(field, EXPECTED);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidValue(field, 'expected a file URL with the http or https scheme');
  }
  if (url.username !== '' || url.password !== '') {
    throw invalidValue(field, 'expected a file URL without credentials');
  }
  if (url.hostname === '' || url.href.length > MAX_FILE_URL_LENGTH) {
    throw invalidValue(field, `expected a file URL with a host, at most ${MAX_FILE_URL_LENGTH} characters`);
  }
  return { kind: 'url', url: url.href };
}

function decodeBase64(field: string, payload: string): Buffer {
  const compact = payload.replace(/\s+/g, '');
  const valid =
    BASE64.test(compact) && compact.length % 4 !== 1 && (!compact.includes('=') || compact.length % 4 === 0);
  if (!valid) throw invalidValue(field, 'expected valid base64 after "data:<mime>;base64,"');
  return Buffer.from(compact, 'base64');
}

function parseDataObject(field: string, input: Record<string, unknown>): FileInput {
  const unknownKey = Object.keys(input).find((key) => key !== 'name' && key !== 'data');
  if (unknownKey !== undefined) throw invalidValue(field, `${EXPECTED}; unknown key ${unknownKey}`);
  const { name, data } = input;
  if (typeof name !== 'string' || !isValidFileName(name)) {
    throw invalidValue(
      field,
      `expected a file name of 1-${MAX_FILE_NAME_LENGTH} characters, not only spaces, without path separators or control characters`,
    );
  }
  if (data === undefined || data === null) throw invalidValue(field, 'expected "data" with the file content next to "name"');
  if (typeof data !== 'string') throw invalidValue(field, 'expected "data" to be a string or a data:<mime>;base64,… URL');
  const dataUrl = DATA_URL.exec(data);
  if (!dataUrl) return { kind: 'text', name, content: data };
  const mimeType = dataUrl[1].split(';')[0].trim().toLowerCase() || 'application/octet-stream';
  if (!MIME_TYPE.test(mimeType)) throw invalidValue(field, 'expected a MIME type such as image/png in the data URL');
  return { kind: 'base64', name, mimeType, bytes: decodeBase64(field, dataUrl[2]) };
}

/** One file as taken by `append`. Multipart uploads never reach this: the HTTP layer handles them. */
export function parseFileInput(field: string, input: unknown): FileInput {
  if (typeof input === 'string') return parseUrl(field, input);
  if (isPlainObject(input)) return parseDataObject(field, input);
  throw invalidValue(field, EXPECTED);
}

export function parseFiles(field: string, input: unknown): FileInput[] | null {
  return parseList(field, input, parseFileInput);
}

/** `pop` on a files field names the stored file by its id. */
export function parseFileId(field: string, input: unknown): number {
  const id = readId(input);
  if (id === null) throw invalidValue(field, 'expected a file id');
  return id;
}
