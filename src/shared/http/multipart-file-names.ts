import { basename, decodeFormDataName, isOctetStream, parseDisposition, partHeaders } from './part-headers.js';

/** A part's headers longer than this are not read (busboy refuses them too). */
const MAX_HEADER_BYTES = 16 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * The file name a multipart part gives, as its Content-Disposition sends
 * it, read from the raw body fed chunk by chunk (`write`). The parser
 * (busboy, under multer) cannot say: a part whose `filename` is empty comes
 * out as a text field (or, typed as a file, is dropped), and one whose name
 * reduces to nothing ("..", ".", "dir/") is dropped, so the request read as
 * one with a text value or none. `problem` says what is wrong with the name
 * of the part named `part`: it has a file name parameter, but no file name.
 * Each part is read as busboy reads it (`part-headers.ts`: which parameter
 * wins, escapes, folded lines, what makes a delimiter), so a part busboy
 * stores as a file is never refused for its name, and one it drops or
 * reads as text is never let through.
 */
export class MultipartFileNames {
  private readonly delimiter: Buffer;
  /** The last bytes of the body before the current chunk, for a delimiter split across chunks. */
  private tail = Buffer.from('\r\n'); // the body's first delimiter has no line break before it
  /** The bytes of a part's header block read so far, once a delimiter was found. */
  private header: Buffer | undefined;
  private finished = false;
  private found: string | undefined;
  private readonly others: string[] = [];

  constructor(
    boundary: string,
    private readonly part: string,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** The `boundary` of a multipart Content-Type, or undefined. */
  static boundaryOf(contentType: string | undefined): string | undefined {
    const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i.exec(contentType ?? '');
    return match ? (match[1] ?? match[2]) : undefined;
  }

  write(chunk: Buffer): void {
    let rest: Buffer | undefined = chunk;
    while (rest && !this.finished) rest = this.header ? this.readHeader(rest) : this.findDelimiter(rest);
  }

  /** What is wrong with the file name the part `part` gave, or undefined. */
  get problem(): string | undefined {
    return this.found;
  }

  /** The names of the parts read so far that busboy takes for files, other than `part`: files the upload does not take. */
  get filesNotTaken(): readonly string[] {
    return this.others;
  }

  /** The chunk after the next delimiter (then reading its part's headers), or undefined when it has none. */
  private findDelimiter(chunk: Buffer): Buffer | undefined {
    const width = this.delimiter.length - 1;
    // A delimiter that starts in the tail ends within the chunk's first `width` bytes.
    const junction = Buffer.concat([this.tail, chunk.subarray(0, width)]);
    let at = junction.indexOf(this.delimiter);
    let after: Buffer | undefined;
    if (at !== -1 && at < this.tail.length) after = chunk.subarray(at + this.delimiter.length - this.tail.length);
    else if ((at = chunk.indexOf(this.delimiter)) !== -1) after = chunk.subarray(at + this.delimiter.length);
    if (after) {
      this.header = Buffer.alloc(0);
      return after;
    }
    this.tail = Buffer.concat([this.tail, chunk.subarray(-width)]).subarray(-width);
    return undefined;
  }

  /**
   * Reads what follows a delimiter: `--` ends the body, a line break starts
   * a part's header block (read up to its blank line), anything else makes
   * it no delimiter (busboy reads on as part content). The chunk after it,
   * or undefined when it goes on in the next chunk.
   */
  private readHeader(chunk: Buffer): Buffer | undefined {
    const block = this.header!.length ? Buffer.concat([this.header!, chunk]) : chunk;
    const opening = block.subarray(0, 2).toString('latin1');
    if (opening === '--') return this.finish(); // the closing delimiter
    const end = opening === '\r\n' ? block.indexOf(HEADER_END) : -1;
    if (end === -1) {
      if (opening.length < 2 || (opening === '\r\n' && block.length <= MAX_HEADER_BYTES)) {
        this.header = Buffer.from(block);
        return undefined;
      }
      if (opening === '\r\n') return this.finish(); // busboy refuses a header block this long
      this.header = undefined;
      this.tail = Buffer.alloc(0); // the search goes on after the false delimiter
      return block;
    }
    this.header = undefined;
    this.inspect(block.subarray(2, Math.max(2, end)).toString('latin1'));
    // Right after the headers, a delimiter (an empty part) has its line break in `tail`.
    this.tail = Buffer.from('\r\n');
    return block.subarray(end + HEADER_END.length);
  }

  private finish(): undefined {
    this.finished = true;
    return undefined;
  }

  /** A part's header block (after its delimiter's line break), read as busboy reads it: what is wrong with the file name of the part `part`, or another part that is a file. */
  private inspect(block: string): void {
    const headers = partHeaders(block);
    const raw = headers.get('content-disposition') ?? '';
    const disposition = parseDisposition(raw);
    if (!disposition || disposition.type !== 'form-data') {
      // busboy skips the part: named `part` (read leniently), the request would go on as if it had none.
      if (decodeFormDataName(looseName(raw) ?? '') === this.part) this.find('the part\'s Content-Disposition cannot be read (a malformed or not a form-data disposition)');
      return;
    }
    const { params } = disposition;
    const name = decodeFormDataName(params.get('name') || '');
    const contentType = headers.get('content-type');
    if (name === this.part) this.find(fileNameProblem(params, contentType));
    else if (name && (params.get('filename*') || params.get('filename') || isOctetStream(contentType))) this.others.push(name);
  }

  private find(problem: string | undefined): void {
    this.found ??= problem;
  }
}

const EMPTY_NAME = 'the file part has an empty file name (filename="")';

/**
 * busboy takes `filename*`, else `filename`, the first of each and only when
 * not empty, then its last segment; a part with neither is a file only when
 * typed application/octet-stream. multer drops a file whose name is then
 * empty, and reads a part with an empty file name as text. A blank name, or
 * one whose last segment is blank, '.' or '..' once trimmed, is refused too:
 * it names no file.
 */
function fileNameProblem(params: Map<string, string>, contentType: string | undefined): string | undefined {
  const chosen = params.get('filename*') || params.get('filename') || undefined;
  if (chosen === undefined) {
    if (params.has('filename*') || params.has('filename')) return EMPTY_NAME;
    return isOctetStream(contentType) ? 'the file part has no file name (no filename parameter)' : undefined;
  }
  const last = decodeFormDataName(basename(chosen)).trim();
  if (!decodeFormDataName(chosen).trim()) return EMPTY_NAME;
  if (last === '' || last === '.' || last === '..') return `the file part's name ${JSON.stringify(chosen)} is not a file name`;
  return undefined;
}

/** The `name` parameter of a disposition busboy cannot read, read leniently. */
function looseName(disposition: string): string | undefined {
  const match = /(?:^|;)[ \t]*name[ \t]*=[ \t]*(?:"([^"]*)"|([^\s;]*))/i.exec(disposition);
  return match ? (match[1] ?? match[2]) : undefined;
}
