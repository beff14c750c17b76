/**
 * A multipart part's headers read as busboy 1.6 (under multer 2) reads
 * them, so a check of what a part is agrees with what the parser then
 * stores: busboy/lib/types/multipart.js (header block, folding, the type of
 * a part) and busboy/lib/utils.js (parseDisposition, basename), with
 * multer's decodeFormDataName. Header blocks busboy refuses fail the whole
 * request, so they need no reading here.
 */

/** The characters of `chars`, letters and digits too when `alphanumeric`, and the code ranges given. */
function charSet(chars: string, alphanumeric: boolean, ...ranges: Array<[number, number]>): Set<number> {
  const codes = new Set([...chars].map((ch) => ch.charCodeAt(0)));
  const all = alphanumeric ? [...ranges, [0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]] : ranges;
  for (const [from, to] of all) for (let c = from; c <= to; c++) codes.add(c);
  return codes;
}

// busboy's character tables (utils.js).
const TOKEN = charSet("!#$%&'*+-.^_`|~", true);
const QDTEXT = charSet('\t', false, [0x20, 0x21], [0x23, 0x5b], [0x5d, 0x7e], [0x80, 0xff]);
const CHARSET = charSet('!#$%&+-^_`{}~', true);
const EXTENDED_VALUE = charSet('!#$&+-.^_`|~', true);

const isWhitespace = (code: number) => code === 0x20 || code === 0x09;

/** The first value of each header of a part's header block (after unfolding), by lower-case name. */
export function partHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  // A line break followed by a space or tab continues the value (busboy keeps the space or tab).
  for (const line of block.split(/\r\n(?![ \t])/)) {
    const named = /^([^:\r\n]+):[ \t]*/.exec(line);
    if (!named || ![...named[1]].every((ch) => TOKEN.has(ch.charCodeAt(0)))) continue;
    const name = named[1].toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(named[0].length).replace(/\r\n/g, ''));
  }
  return headers;
}

/** busboy's parseDisposition: the type and parameters (the first of each name wins), or undefined when busboy skips the part for it. */
export function parseDisposition(value: string): { type: string; params: Map<string, string> } | undefined {
  if (!value.length) return undefined;
  let i = 0;
  while (i < value.length && TOKEN.has(value.charCodeAt(i))) i++;
  const params = new Map<string, string>();
  if (i < value.length && !readParams(value, i, params)) return undefined;
  return { type: value.slice(0, i).toLowerCase(), params };
}

function readParams(str: string, from: number, params: Map<string, string>): boolean {
  let i = from;
  while (i < str.length) {
    while (i < str.length && isWhitespace(str.charCodeAt(i))) i++;
    if (i === str.length) break;
    if (str[i++] !== ';') return false;
    while (i < str.length && isWhitespace(str.charCodeAt(i))) i++;
    if (i === str.length) return false;
    const nameStart = i;
    while (i < str.length && TOKEN.has(str.charCodeAt(i))) i++;
    if (i === str.length || str[i] !== '=') return false;
    const name = str.slice(nameStart, i);
    const read = name.endsWith('*') ? readExtended(str, i + 1) : readPlain(str, i + 1);
    if (!read) return false;
    i = read.end;
    if (!params.has(name.toLowerCase())) params.set(name.toLowerCase(), read.value);
  }
  return true;
}

type Read = { value: string; end: number } | undefined;

/** A `name*=charset'lang'value` value (RFC 5987), percent-decoded in its charset. */
function readExtended(str: string, from: number): Read {
  let i = from;
  while (i < str.length && CHARSET.has(str.charCodeAt(i))) i++;
  if (i === str.length || str[i] !== "'") return undefined;
  const charset = str.slice(from, i);
  i = str.indexOf("'", i + 1);
  if (i === -1 || i + 1 === str.length) return undefined;
  let bytes = '';
  let start = ++i;
  let hint = 0;
  for (; i < str.length; i++) {
    if (EXTENDED_VALUE.has(str.charCodeAt(i))) continue;
    if (str[i] !== '%') break;
    if (!/^[0-9a-fA-F]{2}$/.test(str.slice(i + 1, i + 3))) return undefined;
    const byte = parseInt(str.slice(i + 1, i + 3), 16);
    bytes += str.slice(start, i) + String.fromCharCode(byte);
    hint = byte >= 128 ? 2 : Math.max(hint, 1);
    i += 2;
    start = i + 1;
  }
  const value = decodeIn(bytes + str.slice(start, i), charset, hint);
  return value === undefined ? undefined : { value, end: i };
}

/** A quoted string (`\` escapes `\` and `"` only, and stays before any other character) or a token; read as UTF-8 (multer's defParamCharset). */
function readPlain(str: string, from: number): Read {
  let i = from;
  if (i === str.length) return undefined;
  if (str[i] !== '"') {
    while (i < str.length && TOKEN.has(str.charCodeAt(i))) i++;
    return i === from ? undefined : { value: decodeIn(str.slice(from, i), 'utf8', 2)!, end: i };
  }
  let value = '';
  let start = ++i;
  let escaping = false;
  for (; i < str.length; i++) {
    const code = str.charCodeAt(i);
    if (code === 0x5c || code === 0x22) {
      if (escaping) start = i;
      else if (code === 0x5c) value += str.slice(start, i);
      else break;
      escaping = !escaping && code === 0x5c;
      continue;
    }
    if (escaping) start = i - 1;
    escaping = false;
    if (!QDTEXT.has(code)) return undefined;
  }
  if (i === str.length) return undefined;
  return { value: decodeIn(value + str.slice(start, i), 'utf8', 2)!, end: i + 1 };
}

/** busboy's decoders (getDecoder): `bytes` one character per byte; undefined for a charset busboy cannot decode. */
function decodeIn(bytes: string, charset: string, hint: number): string | undefined {
  if (!bytes.length) return '';
  const raw = () => Buffer.from(bytes, 'latin1');
  switch (charset.toLowerCase()) {
    case 'utf-8':
    case 'utf8':
      return hint < 2 ? bytes : raw().toString('utf8');
    case 'latin1':
    case 'ascii':
    case 'us-ascii':
    case 'iso-8859-1':
    case 'iso8859-1':
    case 'iso88591':
    case 'iso_8859-1':
    case 'windows-1252':
    case 'iso_8859-1:1987':
    case 'cp1252':
    case 'x-cp1252':
      return bytes;
    case 'utf16le':
    case 'utf-16le':
    case 'ucs2':
    case 'ucs-2':
      return raw().toString('utf16le');
    case 'base64':
      return raw().toString('base64');
    default:
      // busboy's decoder of other charsets never gets its charset (an arrow function's `this`): it always fails.
      return undefined;
  }
}

/** busboy's basename: the last segment after `/` or `\`, and '' for '.' and '..'. */
export function basename(path: string): string {
  const last = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
  return last === '.' || last === '..' ? '' : last;
}

/** multer's decodeFormDataName: a form-data name's WHATWG escapes (%0A, %0D, %22) reversed. */
export function decodeFormDataName(name: string): string {
  return name.replace(/%0A|%0D|%22/gi, (m) => ({ '%0A': '\n', '%0D': '\r' })[m.toUpperCase()] ?? '"');
}

/**
 * Whether a Content-Type is application/octet-stream, which busboy takes for
 * a file part even without a file name. (busboy also wants its parameters
 * well formed, else it reads text/plain; either way such a part without a
 * file name is never stored as a file.)
 */
export function isOctetStream(contentType: string | undefined): boolean {
  return /^application\/octet-stream(?:[ \t]*;|[ \t]*$)/i.test(contentType ?? '');
}
