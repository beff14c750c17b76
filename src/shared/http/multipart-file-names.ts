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
 */
export class MultipartFileNames {
  private readonly delimiter: Buffer;
  /** The last bytes of the body before the current chunk, for a delimiter split across chunks. */
  private tail = Buffer.from('\r\n'); // the body's first delimiter has no line break before it
  /** The bytes of a part's header block read so far, once a delimiter was found. */
  private header: Buffer | undefined;
  private finished = false;
  private found: string | undefined;

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

  /** Reads the header block after a delimiter; the chunk after it, or undefined when it goes on in the next chunk. */
  private readHeader(chunk: Buffer): Buffer | undefined {
    const block = this.header!.length ? Buffer.concat([this.header!, chunk]) : chunk;
    if (block.length >= 2 && block.subarray(0, 2).toString('latin1') === '--') return this.finish(); // the closing delimiter
    const end = block.indexOf(HEADER_END);
    if (end === -1) {
      if (block.length > MAX_HEADER_BYTES) return this.finish();
      this.header = Buffer.from(block);
      return undefined;
    }
    this.header = undefined;
    this.inspect(block.subarray(0, end).toString('latin1'));
    // Right after the headers, a delimiter (an empty part) has its line break in `tail`.
    this.tail = Buffer.from('\r\n');
    return block.subarray(end + HEADER_END.length);
  }

  private finish(): undefined {
    this.finished = true;
    return undefined;
  }

  /** The header lines of one part (after its delimiter's line): its disposition's name and file name. */
  private inspect(headers: string): void {
    const line = headers.split('\r\n').find((l) => /^content-disposition\s*:/i.test(l));
    if (!line || this.found !== undefined) return;
    const params = dispositionParams(line.slice(line.indexOf(':') + 1));
    if (params.name !== this.part) return;
    const name = params['filename*'] ?? params.filename;
    if (name === undefined) return;
    const last = name.split(/[/\\]/).pop()!.trim();
    if (!name.trim()) this.found = 'the file part has an empty file name (filename="")';
    else if (last === '' || last === '.' || last === '..') this.found = `the file part's name ${JSON.stringify(name)} is not a file name`;
  }
}

/** A Content-Disposition's parameters (RFC 6266: quoted strings unescaped, `filename*` decoded from its charset''value form). */
function dispositionParams(value: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const m of value.matchAll(/;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]*))/g)) {
    const key = m[1].toLowerCase();
    const raw = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
    params[key] = key === 'filename*' ? extValue(raw) : raw;
  }
  return params;
}

function extValue(raw: string): string {
  const text = raw.replace(/^[^']*'[^']*'/, '');
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
