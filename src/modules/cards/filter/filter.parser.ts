import {
  BUILTIN_FIELDS,
  type BuiltinField,
  type CompareOp,
  type FieldName,
  type FilterExpr,
  type FilterValue,
  type UserRef,
} from './filter.ast.js';
import { FilterError } from './filter.errors.js';
import { instantSplitBySpace } from './filter-values.js';
import { tokenize, type Token } from './filter.lexer.js';

/** Longest filter accepted; a longer one is refused before it is read. */
export const MAX_FILTER_LENGTH = 4000;
/** Deepest nesting of parentheses and `not`s (the parser recurses once per level). */
export const MAX_FILTER_DEPTH = 64;

const KEYWORDS = new Set(['and', 'or', 'not', 'in']);
const TERM = 'a term (a word, "phrase", #ref, #group, @user, field op value, value in field, "not" or "(")';

const keyword = (t: Token): string | null =>
  t.kind === 'word' && KEYWORDS.has(t.text.toLowerCase()) ? t.text.toLowerCase() : null;

/**
 * Parses a filter (DESIGN.md §7) into its syntax tree, by recursive descent
 * over the grammar:
 *
 *   expr  := or ;  or := and ("or" and)* ;  and := unary (["and"] unary)*
 *   unary := "not" unary | "(" expr ")" | term
 *
 * An empty filter matches every card. Errors carry the 0-based position of
 * the offending token and what was expected there.
 */
export function parseFilter(text: string): FilterExpr {
  if (text.length > MAX_FILTER_LENGTH) {
    throw new FilterError(MAX_FILTER_LENGTH, `a filter of at most ${MAX_FILTER_LENGTH} characters`);
  }
  return new Parser(tokenize(text)).parse();
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): FilterExpr {
    if (this.peek().kind === 'eof') return { kind: 'all' };
    const expr = this.or();
    const rest = this.peek();
    if (rest.kind === 'rparen') throw new FilterError(rest.position, 'a term or the end of the filter', 'unmatched ")"');
    if (rest.kind !== 'eof') throw new FilterError(rest.position, `"and", "or" or ${TERM}`);
    return expr;
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.index + offset, this.tokens.length - 1)];
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.index++;
    return t;
  }

  private or(): FilterExpr {
    const items = [this.and()];
    while (keyword(this.peek()) === 'or') {
      this.next();
      items.push(this.and());
    }
    return items.length === 1 ? items[0] : { kind: 'or', items };
  }

  private and(): FilterExpr {
    const items = [this.unary()];
    for (;;) {
      const t = this.peek();
      if (keyword(t) === 'and') {
        this.next();
        items.push(this.unary());
      } else if (t.kind !== 'eof' && t.kind !== 'rparen' && keyword(t) !== 'or') {
        items.push(this.unary());
      } else {
        break;
      }
    }
    return items.length === 1 ? items[0] : { kind: 'and', items };
  }

  private unary(): FilterExpr {
    const t = this.peek();
    if (keyword(t) === 'not' || t.kind === 'lparen') {
      if (++this.depth > MAX_FILTER_DEPTH) {
        throw new FilterError(t.position, `at most ${MAX_FILTER_DEPTH} levels of nesting`);
      }
      this.next();
      const expr = t.kind === 'lparen' ? this.group() : { kind: 'not' as const, item: this.unary() };
      this.depth--;
      return expr;
    }
    return this.term();
  }

  private group(): FilterExpr {
    const expr = this.or();
    const close = this.peek();
    if (close.kind !== 'rparen') throw new FilterError(close.position, '")"');
    this.next();
    return expr;
  }

  private term(): FilterExpr {
    const t = this.next();
    switch (t.kind) {
      case 'hash':
        return this.hashTerm(t);
      case 'at':
        if (keyword(this.peek()) === 'in') return this.inTerm(this.userValue(t), t.position);
        return { kind: 'member', user: userRef(t), position: t.position };
      case 'braced':
        return this.comparison(customField(t.text, t.position), t.position);
      case 'quoted':
        if (keyword(this.peek()) === 'in') return this.inTerm(textValue(t.text, true, t.position), t.position);
        return { kind: 'text', text: t.text, position: t.position };
      case 'word':
        return this.wordTerm(t);
      default:
        throw new FilterError(t.position, TERM, t.kind === 'eof' ? `expected ${TERM}, found the end of the filter` : undefined);
    }
  }

  private wordTerm(t: Token & { kind: 'word' }): FilterExpr {
    if (keyword(t)) throw new FilterError(t.position, TERM, `expected ${TERM}, found "${t.text}" (quote it to search for it)`);
    const after = this.peek();
    if (after.kind === 'op') return this.comparison(fieldName(t.text, t.position), t.position);
    if (keyword(after) === 'in') return this.inTerm(textValue(t.text, false, t.position), t.position);
    return { kind: 'text', text: t.text, position: t.position };
  }

  private hashTerm(t: Token & { kind: 'hash' }): FilterExpr {
    if (!t.braced && /^\d+$/.test(t.text)) {
      const ref = Number(t.text);
      if (!Number.isSafeInteger(ref)) throw new FilterError(t.position + 1, 'a ref number of at most 15 digits');
      // `#12 in Blocks`: a ref as the value of `in`, as `Blocks = #12` takes it.
      if (keyword(this.peek()) === 'in') return this.inTerm(textValue(t.text, false, t.position + 1), t.position);
      return { kind: 'ref', ref, position: t.position };
    }
    return { kind: 'group', name: t.text, position: t.position };
  }

  private comparison(field: FieldName, position: number): FilterExpr {
    const op = this.next();
    if (op.kind !== 'op') throw new FilterError(op.position, 'an operator (= != > >= < <= ~=) after the field name');
    return { kind: 'compare', field, op: op.op as CompareOp, opPosition: op.position, value: this.value(), position };
  }

  private inTerm(value: FilterValue, position: number): FilterExpr {
    const opPosition = this.next().position; // "in"
    const t = this.next();
    if (t.kind === 'braced') return { kind: 'in', value, field: customField(t.text, t.position), opPosition, position };
    if (t.kind === 'word' && !keyword(t)) return { kind: 'in', value, field: fieldName(t.text, t.position), opPosition, position };
    throw new FilterError(t.position, 'a field name after "in"');
  }

  private value(): FilterValue {
    const t = this.next();
    switch (t.kind) {
      case 'word':
        this.refuseSpacedInstant(t);
        return textValue(t.text, false, t.position);
      case 'quoted':
        return textValue(t.text, true, t.position);
      case 'at':
        return this.userValue(t);
      case 'hash':
        // `parent = #12`: a ref written the way it is shown.
        if (!t.braced && /^\d+$/.test(t.text)) return textValue(t.text, false, t.position + 1);
        break;
    }
    throw new FilterError(t.position, 'a value (a word, "text", a number, a date, today, -7d or @user)');
  }

  /**
   * An instant split by a space: `updated >= 2026-11-28T10:00 01:00`, its
   * offset's `+` sent unencoded in a query string (where a `+` is a space),
   * or `2026-11-28 10:00Z`, a space for its `T`. Read as it stands, the
   * second part would be a title word, and the filter would quietly match
   * nothing: a sync client would miss every card.
   */
  private refuseSpacedInstant(t: Token & { kind: 'word' }): void {
    const after = this.peek();
    if (after.kind !== 'word' || after.position !== t.position + t.text.length + 1) return;
    const split = instantSplitBySpace(t.text, after.text);
    if (split === 'offset') {
      throw new FilterError(after.position - 1, 'an offset +HH:MM', 'expected an offset +HH:MM, found a space: a "+" in a URL\'s query string is a space, send it as %2B');
    }
    if (split === 'T') {
      throw new FilterError(after.position - 1, 'T between the day and the time', 'expected T between the day and the time of an instant (2026-11-28T10:00Z), found a space');
    }
  }

  private userValue(t: Token & { kind: 'at' }): FilterValue {
    return { kind: 'user', user: userRef(t), position: t.position };
  }
}

function userRef(t: Token & { kind: 'at' }): UserRef {
  return !t.braced && t.text.toLowerCase() === 'me' ? { kind: 'me' } : { kind: 'name', name: t.text, displayName: t.braced };
}

function textValue(text: string, quoted: boolean, position: number): FilterValue {
  return { kind: 'text', text, quoted, position };
}

function fieldName(text: string, position: number): FieldName {
  const lower = text.toLowerCase();
  return (BUILTIN_FIELDS as readonly string[]).includes(lower)
    ? { kind: 'builtin', name: lower as BuiltinField, position }
    : customField(text, position);
}

function customField(name: string, position: number): FieldName {
  return { kind: 'custom', name, position };
}
