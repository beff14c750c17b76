import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';

/** class-validator's metadata of one rule (its type is not exported by name). */
type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** Whether a DTO instance passes every rule of its class; `false` also when a rule answered with a promise. */
export type RulesCheck = (object: Record<string, unknown>) => boolean;

/**
 * The class-validator rules of a DTO class, as one synchronous function that
 * runs them the way class-validator's own executor does under the API's
 * options (whitelist, forbidNonWhitelisted, no groups): per property, the
 * conditions (`@IsOptional`, `@ValidateIf`) first, then `@IsDefined`, then
 * every other rule, each rule's own validator called with the same
 * arguments. It answers only "all passed": on `false` the caller runs the
 * full validation, which words the errors. Undefined for a class with a
 * rule it does not run (nested objects, `each`, promises, async rules), whose
 * bodies always take the full validation.
 *
 * What it saves is class-validator's per-call work around the rules: the
 * metadata looked up, filtered and grouped again for every body, an error
 * object made for every property, valid or not (docs/PERFORMANCE.md, issue
 * 15, tenth pass).
 */
export function compileRules(dto: Function): RulesCheck | undefined {
  const storage = getMetadataStorage();
  // The arguments class-validator's executor passes for these options.
  const grouped = storage.groupByPropertyName(storage.getTargetValidationMetadatas(dto, undefined as unknown as string, false, false, undefined));
  const properties: RulesCheck[] = [];
  for (const [property, metadatas] of Object.entries(grouped)) {
    const passes = propertyRules(dto.name, property, metadatas);
    if (!passes) return undefined;
    properties.push(passes);
  }
  const allowed = new Set(Object.keys(grouped));
  return (object) => {
    // forbidNonWhitelisted: a property without rules is an error.
    for (const key of Object.keys(object)) if (!allowed.has(key)) return false;
    for (const passes of properties) if (!passes(object)) return false;
    return true;
  };
}

type Rule = { metadata: ValidationMetadata; validate: (value: unknown, args: ValidationArguments) => unknown };

/** Whether one property of an instance passes its rules; undefined when one is out of reach (see compileRules). */
function propertyRules(targetName: string, property: string, metadatas: ValidationMetadata[]): RulesCheck | undefined {
  const conditions: ValidationMetadata[] = [];
  const defined: Rule[] = [];
  const custom: Rule[] = [];
  for (const m of metadatas) {
    if (m.each) return undefined;
    switch (m.type) {
      case ValidationTypes.WHITELIST:
        break;
      case ValidationTypes.CONDITIONAL_VALIDATION:
        conditions.push(m);
        break;
      case ValidationTypes.IS_DEFINED:
      case ValidationTypes.CUSTOM_VALIDATION: {
        const rules = m.type === ValidationTypes.IS_DEFINED ? defined : custom;
        for (const constraint of getMetadataStorage().getTargetValidatorConstraints(m.constraintCls)) {
          if (constraint.async) return undefined;
          const instance = constraint.instance;
          rules.push({ metadata: m, validate: (value, args) => instance.validate(value, args) });
        }
        break;
      }
      default:
        // Nested and promise validation: the full validation runs them.
        return undefined;
    }
  }
  const run = (rules: Rule[], object: Record<string, unknown>, value: unknown): boolean => {
    for (const { metadata, validate } of rules) {
      if (metadata.validateIf && !metadata.validateIf(object, value)) continue;
      const result = validate(value, { targetName, property: metadata.propertyName, object, value, constraints: metadata.constraints });
      if (!result || result instanceof Promise) return false;
    }
    return true;
  };
  return (object) => {
    const value = object[property];
    for (const c of conditions) if (!(c.constraints[0] as (o: object, v: unknown) => boolean)(object, value)) return true;
    return run(defined, object, value) && run(custom, object, value);
  };
}
