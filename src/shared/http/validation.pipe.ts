import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import { InvalidInputError, type FieldProblem } from '../domain/domain-error.js';
import { isPlainObject } from '../domain/plain-object.js';
import { MAX_JSON_DEPTH } from './body-limits.js';
import { compileRules, type RulesCheck } from './compiled-rules.js';

/**
 * The rules whose message says what a value must be (its type or its set of
 * values), in the order one is picked when several failed: a number sent for
 * a title is told "must be a string", not also that it is empty and too long.
 */
const FORMAT_RULES = ['isString', 'isInt', 'isNumber', 'isBoolean', 'isObject', 'isArray', 'isIn', 'isEnum', 'isPosition'];

/**
 * One message per property (DESIGN.md §5: the field and the format it
 * expects): a property left out is required; one given whose value breaks
 * several rules gets the message of its format (FORMAT_RULES), else of its
 * emptiness, else of the first rule it broke. class-validator words every
 * failed rule, and a title left out was told it was too long, empty and not
 * a string at once.
 */
function flatten(errors: ValidationError[], prefix = ''): FieldProblem[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const message = oneMessage(e);
    return [...(message === undefined ? [] : [{ field, message }]), ...flatten(e.children ?? [], field)];
  });
}

function oneMessage({ constraints, property, value }: ValidationError): string | undefined {
  if (!constraints) return undefined;
  const rules = Object.keys(constraints);
  if (!rules.length) return undefined;
  if (value === undefined && !rules.includes(ValidationTypes.WHITELIST)) return `${property} is required`;
  const rule = FORMAT_RULES.find((r) => rules.includes(r)) ?? (rules.includes('isNotEmpty') ? 'isNotEmpty' : rules[0]);
  return constraints[rule];
}

/**
 * Nest's pipe turns a path or query primitive declared `number` into one with
 * `+value`, so `/cards/0x10`, `/cards/1e1` and `/cards/ 16` reached the id pipe
 * as 16 (issue 13). Primitives stay the strings they came as: ParseIdPipe and
 * the pagination reader decide what a well-formed number is (DESIGN.md §2).
 */
class NoCoercionValidationPipe extends ValidationPipe {
  /** Each DTO class's compiled rules; null for a class they cannot run (compiled-rules.ts). */
  private readonly rules = new WeakMap<Function, RulesCheck | null>();

  /**
   * A body or query of plain data (what the JSON, form and query parsers
   * make) that passes its class's compiled rules becomes the class instance
   * at once; anything else, and every failure, takes Nest's whole pipe, which
   * words the errors. Nest's pipe, in the app, cost a card creation about 26
   * µs of its 1.1 ms, mostly in walks of the value and class-validator's work
   * around the rules (docs/PERFORMANCE.md, issue 15, tenth pass).
   */
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    return withClientMaps(value, metadata, async (held) => this.passedAtOnce(held, metadata) ?? super.transform(held, metadata));
  }

  private passedAtOnce(value: unknown, metadata: ArgumentMetadata): object | undefined {
    const { metatype, type } = metadata;
    if ((type !== 'body' && type !== 'query') || typeof metatype !== 'function' || !this.toValidate(metadata)) return undefined;
    // Nest's pipe strips prototype keys, closes array gaps and refuses binary
    // values; plain data has none of them, so its steps would change nothing.
    if (!isPlainObject(value) || !isPlainData(value)) return undefined;
    const check = this.rulesOf(metatype);
    if (!check) return undefined;
    const entity = plainToInstance(metatype as new () => object, value) as Record<string, unknown>;
    return entity.constructor === metatype && check(entity) ? entity : undefined;
  }

  private rulesOf(dto: Function): RulesCheck | null {
    let check = this.rules.get(dto);
    if (check === undefined) {
      check = compileRules(dto) ?? null;
      this.rules.set(dto, check);
    }
    return check;
  }

  protected override transformPrimitive(value: unknown, _metadata: ArgumentMetadata): unknown {
    return value;
  }
}

/** More parameters than any operation takes, by far. */
export const MAX_PARAMETERS = 100;

/**
 * A request naming more than MAX_PARAMETERS parameters is refused at once:
 * class-validator's check of unknown properties grows with the square of
 * their number (80 000 of them held the event loop, and so every request,
 * for 6 s) and answered one error each (12 MB).
 */
export function refuseTooManyParameters(count: number): void {
  if (count > MAX_PARAMETERS) {
    throw invalidInput([{ field: '(parameters)', message: `${count} parameters sent; an operation takes at most ${MAX_PARAMETERS}` }]);
  }
}

/** Keys that Nest's pipe deletes from every object of a value (prototype pollution). */
const PROTO_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/** Each DTO class's properties that carry a client's map (`ClientMap`). */
const CLIENT_MAPS = new WeakMap<Function, string[]>();

/**
 * Marks a DTO property whose value is an object keyed by the client's own
 * names: a card's `attributes`, field name → value. Nest's pipe deletes the
 * keys `constructor` and `prototype` from every object of a body, and
 * class-transformer leaves out every key that Object.prototype holds
 * (`toString`, `valueOf`, …), so the value of a field of such a name was
 * silently lost on card creation. Such a map goes through the pipe as an
 * empty object and is put back as it was sent; the service that reads it
 * looks the names up and never assigns by them (JSON.parse and the form
 * parsers make `__proto__` an own key, never the prototype).
 */
export function ClientMap(): PropertyDecorator {
  return (target, property) => {
    const dto = target.constructor;
    CLIENT_MAPS.set(dto, [...(CLIENT_MAPS.get(dto) ?? []), String(property)]);
  };
}

/**
 * Names no DTO declares that validation would never see: Nest's pipe deletes
 * `constructor` and `prototype`, and class-transformer leaves out every key
 * Object.prototype holds (`toString`, `valueOf`, `hasOwnProperty`, …), so
 * `?valueOf=1` passed as if not sent while `?unknown=1` was a 400.
 */
const UNSEEN_KEYS = [...new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype'])];

/**
 * Validates a DTO body or query with `validate`, keeping its client maps as
 * sent (`ClientMap`). An own key at the top named as Object.prototype's
 * members (`UNSEEN_KEYS`, `__proto__` among them) is refused as any unknown
 * property is (DESIGN.md §2), where the pipe would drop it without a word.
 */
export async function withClientMaps(value: unknown, metadata: ArgumentMetadata, validate: (value: unknown) => Promise<unknown>): Promise<unknown> {
  const { metatype, type } = metadata;
  if ((type !== 'body' && type !== 'query') || typeof metatype !== 'function' || !isPlainObject(value)) return validate(value);
  refuseTooManyParameters(Object.keys(value).length);
  const unknown = UNSEEN_KEYS.filter((key) => Object.hasOwn(value, key));
  if (unknown.length) throw invalidInput(unknown.map((field) => ({ field, message: `property ${field} should not exist` })));
  if (type === 'query') refuseRepeatedParameters(value, metatype);
  const maps = (CLIENT_MAPS.get(metatype) ?? []).filter((key) => isPlainObject(value[key]));
  if (!maps.length) return validate(value);
  const held = { ...value };
  for (const key of maps) held[key] = {};
  const entity = (await validate(held)) as Record<string, unknown>;
  for (const key of maps) entity[key] = value[key];
  return entity;
}

/**
 * A query parameter of one value that came more than once (`?page=1&page=2`,
 * which the query parser makes a list) is a 400 saying so, where its rules
 * would say it is not a string. Only a parameter the DTO names and takes one
 * value of: none of the API's takes a list (an unknown one is refused as
 * unknown, whatever it holds).
 */
function refuseRepeatedParameters(query: Record<string, unknown>, dto: Function): void {
  const lists = Object.keys(query).filter((key) => Array.isArray(query[key]));
  if (!lists.length) return;
  const rules = getMetadataStorage().getTargetValidationMetadatas(dto, undefined as unknown as string, false, false, undefined);
  const repeated = lists.filter((key) => {
    const own = rules.filter((m) => m.propertyName === key);
    return own.length > 0 && !own.some((m) => m.each || m.name === 'isArray');
  });
  if (repeated.length) throw invalidInput(repeated.map((field) => ({ field, message: `${field} is given more than once; it takes one value` })));
}

/**
 * Strings, numbers, booleans and null, in plain objects without prototype
 * keys and in dense arrays, at most `MAX_JSON_DEPTH` deep (refuseDeepJson turns
 * deeper JSON away before any pipe).
 */
function isPlainData(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return typeof value !== 'function' && typeof value !== 'symbol' && typeof value !== 'bigint';
  if (depth > MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.keys(value).length !== value.length) return false;
    return value.every((item) => isPlainData(item, depth + 1));
  }
  if (!isPlainObject(value)) return false;
  for (const key of Object.keys(value)) if (PROTO_KEYS.has(key) || !isPlainData(value[key], depth + 1)) return false;
  return true;
}

/** One validation style for the whole API: whitelist + forbidNonWhitelisted. */
export function createValidationPipe(): ValidationPipe {
  return new NoCoercionValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: false,
    exceptionFactory: (errors) => invalidInput(flatten(errors)),
  });
}

/** The 400 of a body or query the pipe refuses: each problem named, and all of them in the detail. */
export function invalidInput(problems: FieldProblem[]): InvalidInputError {
  return new InvalidInputError(problems.map((p) => `${p.field}: ${p.message}`).join('; ') || 'Invalid input', problems);
}
