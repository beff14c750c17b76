import 'reflect-metadata';
import { describe, expect, it, jest } from '@jest/globals';
import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, IsInt, IsOptional, IsString, ValidateNested, validateSync } from 'class-validator';
import fc from 'fast-check';
import * as hierarchyDtos from '../../modules/card-hierarchy/http/dto/card.dto.js';
import * as cardsDtos from '../../modules/cards/http/dto/cards.dto.js';
import * as fieldsDtos from '../../modules/fields/http/dto/fields.dto.js';
import * as groupingDtos from '../../modules/grouping/http/dto/grouping.dto.js';
import * as identityDtos from '../../modules/identity/http/dto/create-api-key.dto.js';
import * as workspaceDtos from '../../modules/workspace/http/dto/workspace.dto.js';
import { compileRules } from './compiled-rules.js';
import { createValidationPipe, withClientMaps } from './validation.pipe.js';

/** Every DTO class of the API's routes. */
const DTOS = Object.values({ ...hierarchyDtos, ...cardsDtos, ...fieldsDtos, ...groupingDtos, ...identityDtos, ...workspaceDtos }).filter(
  (x): x is new () => object => typeof x === 'function' && /Dto$/.test(x.name),
);

const OPTIONS = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false };

function propertiesOf(dto: Function): string[] {
  return [...new Set(getMetadataStorage().getTargetValidationMetadatas(dto, undefined as unknown as string, false, false).map((m) => m.propertyName))];
}

/** Values as the JSON, form and query parsers make them, and near misses of the rules. */
const value = fc.oneof(
  fc.constantFrom('', ' ', '1', '-1', '0', '1.5', 'true', 'false', 'null', 'todo', 'done', 'in_progress', '2024-01-31', 'x'.repeat(1025)),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -3, max: 2_000_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null)), { maxKeys: 3 }),
);

/** A body: some of the class's properties, now and then another key, as JSON.parse would make it. */
function body(dto: Function) {
  const keys = [...propertiesOf(dto), 'extra', '__proto__', 'constructor'];
  return fc
    .dictionary(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.string({ maxLength: 5 }) }), value, { maxKeys: 4 })
    .map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>);
}

/** The pipe's answer as data: the instance's class and JSON, or the error's detail. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    const r = (await run()) as object;
    return { ok: r.constructor.name, json: JSON.stringify(r) };
  } catch (e) {
    return { error: (e as Error).message, problems: (e as { errors?: unknown }).errors };
  }
}

describe('compiled DTO rules', () => {
  it('compile for every DTO class of the API', () => {
    expect(DTOS.length).toBeGreaterThan(20);
    for (const dto of DTOS) expect([dto.name, typeof compileRules(dto)]).toEqual([dto.name, 'function']);
  });

  it('pass exactly the instances class-validator passes', () => {
    for (const dto of DTOS) {
      const check = compileRules(dto)!;
      fc.assert(
        fc.property(body(dto), (b) => {
          const entity = plainToInstance(dto, b) as Record<string, unknown>;
          expect([dto.name, b, check(entity)]).toEqual([dto.name, b, validateSync(entity, OPTIONS).length === 0]);
        }),
        { numRuns: 300, seed: 15 },
      );
    }
  });

  it('are not made for rules they cannot run (nested objects, `each`)', () => {
    class Inner {
      @IsInt() n!: number;
    }
    class Nested {
      @ValidateNested() inner!: Inner;
    }
    class Each {
      @IsString({ each: true }) tags!: string[];
    }
    class Simple {
      @IsOptional() @IsString() title?: string;
    }
    expect(compileRules(Nested)).toBeUndefined();
    expect(compileRules(Each)).toBeUndefined();
    expect(compileRules(Simple)).toBeDefined();
  });
});

describe('the API validation pipe', () => {
  const pipe = createValidationPipe();
  // Nest's own pipe, with the same options and primitives left as they are, and the clients' maps
  // (ClientMap) and top-level prototype keys taken care of as the API's pipe does around both its paths.
  const reference = (v: unknown, m: ArgumentMetadata) => withClientMaps(v, m, (held) => ValidationPipe.prototype.transform.call(pipe, held, m));

  it('answers every body and query as Nest’s whole pipe does', async () => {
    for (const dto of DTOS) {
      for (const type of ['body', 'query'] as const) {
        const metadata: ArgumentMetadata = { type, metatype: dto, data: undefined };
        await fc.assert(
          fc.asyncProperty(body(dto), async (b) => {
            // An accepted body also with one key more, and with each of its keys left out.
            const variants = [b];
            if ('ok' in ((await outcome(() => reference(structuredClone(b), metadata))) as object)) {
              variants.push({ ...b, extra: 1 });
              for (const key of Object.keys(b)) variants.push(Object.fromEntries(Object.entries(b).filter(([k]) => k !== key)));
            }
            for (const v of variants) {
              const fast = await outcome(() => pipe.transform(structuredClone(v), metadata));
              const full = await outcome(() => reference(structuredClone(v), metadata));
              expect([dto.name, v, fast]).toEqual([dto.name, v, full]);
            }
          }),
          { numRuns: 100, seed: 15 },
        );
      }
    }
  });

  it('takes a valid plain body at once, and an invalid one through Nest’s pipe', async () => {
    const metadata: ArgumentMetadata = { type: 'body', metatype: cardsDtos.CreateCardDto, data: undefined };
    const whole = jest.spyOn(ValidationPipe.prototype, 'transform');
    try {
      await expect(pipe.transform({ title: 'a', attributes: { Estimate: 3 } }, metadata)).resolves.toBeInstanceOf(cardsDtos.CreateCardDto);
      expect(whole).not.toHaveBeenCalled();
      await expect(pipe.transform({ title: '' }, metadata)).rejects.toThrow('title should not be empty');
      expect(whole).toHaveBeenCalledTimes(1);
    } finally {
      whole.mockRestore();
    }
  });

  it('hands a client map over as sent, prototype-named keys included, and refuses such keys at the top', async () => {
    const metadata: ArgumentMetadata = { type: 'body', metatype: cardsDtos.CreateCardDto, data: undefined };
    const attributes = JSON.parse('{"constructor":"a","prototype":"b","toString":"c","valueOf":{"start":"x"},"n":1}') as object;
    const answer = (await pipe.transform({ title: 'a', attributes }, metadata)) as { attributes: object };
    expect(answer).toBeInstanceOf(cardsDtos.CreateCardDto);
    expect(answer.attributes).toBe(attributes);
    expect(Object.keys(attributes)).toEqual(['constructor', 'prototype', 'toString', 'valueOf', 'n']);
    // A map that is not an object still meets the property's rules.
    await expect(pipe.transform({ title: 'a', attributes: 'x' }, metadata)).rejects.toThrow('attributes must be an object');
    for (const key of ['constructor', 'prototype']) {
      await expect(pipe.transform(JSON.parse(`{"title":"a","${key}":{}}`), metadata)).rejects.toThrow(`${key}: property ${key} should not exist`);
    }
  });

  it('leaves prototype keys, gaps and binary values to Nest’s pipe', async () => {
    const metadata: ArgumentMetadata = { type: 'body', metatype: fieldsDtos.CreateAttributeDto, data: undefined };
    const polluted = JSON.parse('{"name":"a","type":"text","options":{"__proto__":{"x":1},"n":1}}') as object;
    const answer = (await pipe.transform(polluted, metadata)) as { options: object };
    // Nest's pipe deleted the key in place: the fast path did not take it.
    expect(Object.keys(answer.options)).toEqual(['n']);
    const unusual = [
      { name: 'a', type: 'text', options: { file: Buffer.from('x') } },
      { name: 'a', type: 'text', options: { list: [1, , 3] } },
      { name: 'a', type: 'text', options: { at: new Date(0) } },
    ];
    // class-transformer turns a Date from another realm (structuredClone's,
    // outside jest's) into the current time, on both sides, a millisecond
    // apart at times: the instants are not compared.
    const instantless = (o: unknown) => JSON.stringify(o).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<instant>');
    for (const v of unusual) {
      const ours = await outcome(() => pipe.transform(structuredClone(v), metadata));
      expect(instantless(ours)).toEqual(instantless(await outcome(() => reference(structuredClone(v), metadata))));
    }
  });
});

describe('the API validation pipe’s messages', () => {
  const pipe = createValidationPipe();
  /** The 400's detail and problems for a value given to `dto` as a `type`. */
  async function refusal(dto: new () => object, v: unknown, type: 'body' | 'query' = 'body') {
    try {
      await pipe.transform(v, { type, metatype: dto, data: undefined });
      return { error: undefined, problems: undefined };
    } catch (e) {
      return { error: (e as Error).message, problems: (e as { errors?: unknown }).errors };
    }
  }

  it('say a property left out is required, once', async () => {
    const { CreateProjectDto, CreateCardDto, AddToGroupDto } = cardsDtos;
    expect(await refusal(CreateProjectDto, {})).toEqual({ error: 'title: title is required', problems: [{ field: 'title', message: 'title is required' }] });
    expect(await refusal(CreateCardDto, {})).toEqual({ error: 'title: title is required', problems: [{ field: 'title', message: 'title is required' }] });
    expect(await refusal(hierarchyDtos.CommentDto, {})).toEqual({ error: 'content: content is required', problems: [{ field: 'content', message: 'content is required' }] });
    expect(await refusal(fieldsDtos.CreateAttributeDto, { type: 'text' })).toEqual({ error: 'name: name is required', problems: [{ field: 'name', message: 'name is required' }] });
    expect(await refusal(AddToGroupDto, { position: 1 })).toEqual({ error: 'group_id: group_id is required', problems: [{ field: 'group_id', message: 'group_id is required' }] });
    // Several left out, and one wrong beside them: one problem each.
    expect((await refusal(fieldsDtos.CreateAttributeDto, { options: 3 })).problems).toEqual([
      { field: 'name', message: 'name is required' },
      { field: 'type', message: 'type is required' },
      { field: 'options', message: 'options must be an object' },
    ]);
  });

  it('say of a property given one thing: its format first, then its emptiness, then the rest', async () => {
    const { CreateCardDto, AddToGroupDto } = cardsDtos;
    const problems = async (dto: new () => object, v: unknown, type: 'body' | 'query' = 'body') => (await refusal(dto, v, type)).problems;
    expect(await problems(CreateCardDto, { title: 5 })).toEqual([{ field: 'title', message: 'title must be a string' }]);
    expect(await problems(CreateCardDto, { title: null })).toEqual([{ field: 'title', message: 'title must be a string' }]);
    expect(await problems(CreateCardDto, { title: '' })).toEqual([{ field: 'title', message: 'title should not be empty' }]);
    expect(await problems(CreateCardDto, { title: 'x'.repeat(1025) })).toEqual([{ field: 'title', message: 'title must be shorter than or equal to 1024 characters' }]);
    expect(await problems(AddToGroupDto, { group_id: 'x' })).toEqual([{ field: 'group_id', message: 'group_id must be an integer number' }]);
    expect(await problems(AddToGroupDto, { group_id: 0 })).toEqual([{ field: 'group_id', message: 'group_id must not be less than 1' }]);
    // An empty query value is given: its format is said (not that it is required).
    expect(await problems(groupingDtos.GroupsQueryDto, { type_id: '' }, 'query')).toEqual([{ field: 'type_id', message: 'type_id must be an integer number' }]);
    expect(await problems(fieldsDtos.CreateAttributeDto, { name: 'X', type: 7 })).toEqual([{ field: 'type', message: 'type must be a string' }]);
    // The types listed are those the endpoint makes: group_type passes on to the service, which says where such a field comes from.
    const [bogus] = (await problems(fieldsDtos.CreateAttributeDto, { name: 'X', type: 'bogus' })) as { message: string }[];
    expect(bogus.message).toMatch(/^type must be one of the following values: text, /);
    expect(bogus.message.split(': ')[1]!.split(', ')).not.toContain('group_type');
    await expect(pipe.transform({ name: 'X', type: 'group_type' }, { type: 'body', metatype: fieldsDtos.CreateAttributeDto, data: undefined })).resolves.toBeDefined();
    // An unknown property is still named as such, whatever it holds.
    expect(await problems(CreateCardDto, { title: 'a', color: 'red' })).toEqual([{ field: 'color', message: 'property color should not exist' }]);
  });

  it('say a query parameter of one value given more than once is', async () => {
    const { PageQueryDto } = await import('./list-query.dto.js');
    const message = 'page is given more than once; it takes one value';
    expect(await refusal(PageQueryDto, { page: ['1', '2'] }, 'query')).toEqual({ error: `page: ${message}`, problems: [{ field: 'page', message }] });
    expect((await refusal(cardsDtos.CardListQueryDto, { page: '1', filter: ['a', 'b'], per_page: ['1', '1'] }, 'query')).problems).toEqual([
      { field: 'filter', message: 'filter is given more than once; it takes one value' },
      { field: 'per_page', message: 'per_page is given more than once; it takes one value' },
    ]);
    // A parameter the listing does not take is unknown, once or twice.
    expect((await refusal(PageQueryDto, { color: ['a', 'b'] }, 'query')).problems).toEqual([{ field: 'color', message: 'property color should not exist' }]);
    // A list of a parameter that takes lists is left to its rules.
    class Tags {
      @IsOptional() @IsString({ each: true }) tag?: string[];
    }
    await expect(pipe.transform({ tag: ['a', 'b'] }, { type: 'query', metatype: Tags, data: undefined })).resolves.toEqual({ tag: ['a', 'b'] });
  });
});
