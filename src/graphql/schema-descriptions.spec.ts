import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType, isSpecifiedScalarType } from 'graphql';
import { projectRoot } from '../config/project-root.js';

/** The house rule for schema.graphql: every type, field, argument and value says what it is ("Title of the event", no leading "The"). */
describe('schema.graphql descriptions', () => {
  const schema = buildSchema(readFileSync(join(projectRoot(), 'schema.graphql'), 'utf8'));

  function problems(): string[] {
    const found: string[] = [];
    const check = (where: string, description: string | null | undefined) => {
      if (!description?.trim()) found.push(`${where} has no description`);
      else if (/^the\s/i.test(description)) found.push(`${where}: start with the noun, not "The"`);
    };
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || (isScalarType(type) && isSpecifiedScalarType(type))) continue;
      check(type.name, type.description);
      if (isObjectType(type) || isInterfaceType(type)) {
        for (const field of Object.values(type.getFields())) {
          check(`${type.name}.${field.name}`, field.description);
          for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name})`, arg.description);
        }
      } else if (isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) check(`${type.name}.${field.name}`, field.description);
      } else if (isEnumType(type)) {
        for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
      }
    }
    return found;
  }

  it('describes every type, field, argument, input field and enum value', () => {
    expect(problems()).toEqual([]);
  });
});
