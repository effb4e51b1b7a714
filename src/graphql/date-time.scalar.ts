import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

// ISO 8601 with a date, a time and an offset (or Z); what Date.parse accepts beyond that is refused.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function parse(value: unknown): Date {
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) {
    throw new GraphQLError('DateTime must be an ISO 8601 date and time with an offset, such as 2026-05-01T18:30:00Z.', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  return new Date(value);
}

/** `DateTime`: serialized as ISO 8601 in UTC, parsed from ISO 8601 with any offset. */
export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'Date and time in ISO 8601 with an offset, such as `2026-05-01T18:30:00.000Z`.',
  serialize(value) {
    const date = value instanceof Date ? value : new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime cannot represent an invalid date');
    return date.toISOString();
  },
  parseValue: parse,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) parse(undefined);
    return parse((ast as { value: string }).value);
  },
});
