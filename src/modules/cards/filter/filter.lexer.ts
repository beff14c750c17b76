import { FilterError } from './filter.errors.js';

export type Token =
  | { kind: 'lparen' | 'rparen' | 'eof'; position: number }
  | { kind: 'op'; op: string; position: number }
  /** A bare word: also numbers, dates, `-7d`, and the keywords and/or/not/in. */
  | { kind: 'word'; text: string; position: number }
  | { kind: 'quoted'; text: string; position: number }
  /** `{name with spaces}`: a project field. */
  | { kind: 'braced'; text: string; position: number }
  /** `#123` (ref) or `#name` / `#{Group name}` (group). */
  | { kind: 'hash'; text: string; braced: boolean; position: number }
  /** `@name`, `@me`, `@{user name}`. */
  | { kind: 'at'; text: string; braced: boolean; position: number };

const OPERATORS = ['!=', '>=', '<=', '~=', '=', '>', '<'];
const SPACE = /\s/;
/** Characters that end a bare word. `!` and `~` end one only when `=` follows. */
const WORD_END = new Set(['(', ')', '"', '{', '}', '=', '<', '>']);

function isWordEnd(text: string, i: number): boolean {
  const c = text[i];
  if (SPACE.test(c) || WORD_END.has(c)) return true;
  return (c === '!' || c === '~') && text[i + 1] === '=';
}

/** Splits a filter into tokens; the last one is always `eof`. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (SPACE.test(c)) {
      i++;
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: c === '(' ? 'lparen' : 'rparen', position: i });
      i++;
    } else if (c === '"') {
      const { value, end } = readQuoted(text, i);
      tokens.push({ kind: 'quoted', text: value, position: i });
      i = end;
    } else if (c === '{') {
      const { value, end } = readBraced(text, i);
      tokens.push({ kind: 'braced', text: value, position: i });
      i = end;
    } else if (c === '#' || c === '@') {
      const token = readSigil(text, i);
      tokens.push(token.token);
      i = token.end;
    } else {
      const op = OPERATORS.find((o) => text.startsWith(o, i));
      if (op) {
        tokens.push({ kind: 'op', op, position: i });
        i += op.length;
      } else if (c === '}') {
        throw new FilterError(i, 'a term', 'unexpected "}"');
      } else {
        const end = wordEnd(text, i);
        tokens.push({ kind: 'word', text: text.slice(i, end), position: i });
        i = end;
      }
    }
  }
  tokens.push({ kind: 'eof', position: text.length });
  return tokens;
}

function wordEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && !isWordEnd(text, i)) i++;
  return i;
}

/** `"…"` with `\"` and `\\` escapes. */
function readQuoted(text: string, start: number): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') return { value, end: i + 1 };
    if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
      value += text[i + 1];
      i += 2;
    } else {
      value += c;
      i++;
    }
  }
  throw new FilterError(text.length, 'a closing " (the phrase opened at position ' + start + ')');
}

/** `{…}` up to the first `}`; the name inside is trimmed and must not be empty. */
function readBraced(text: string, start: number): { value: string; end: number } {
  const close = text.indexOf('}', start + 1);
  if (close < 0) throw new FilterError(text.length, 'a closing } (opened at position ' + start + ')');
  const value = text.slice(start + 1, close).trim();
  if (!value) throw new FilterError(start + 1, 'a name inside {}');
  return { value, end: close + 1 };
}

function readSigil(text: string, start: number): { token: Token; end: number } {
  const kind = text[start] === '#' ? 'hash' : 'at';
  const what = kind === 'hash' ? 'a ref number or a group name' : 'a user name or me';
  if (text[start + 1] === '{') {
    const { value, end } = readBraced(text, start + 1);
    return { token: { kind, text: value, braced: true, position: start }, end };
  }
  if (start + 1 >= text.length || isWordEnd(text, start + 1)) throw new FilterError(start + 1, `${what} after ${text[start]}`);
  const end = wordEnd(text, start + 1);
  return { token: { kind, text: text.slice(start + 1, end), braced: false, position: start }, end };
}
