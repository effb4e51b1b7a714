import { checkAll, DomainError, failuresOf, InvalidInput } from './domain-error.js';

const invalid = (field: string) => () => {
  throw new DomainError('invalid', `INVALID_${field.toUpperCase()}`, `${field} is wrong.`, field);
};

describe('checkAll', () => {
  it('returns every value when every check passes', () => {
    expect(checkAll({ a: () => 1, b: () => 'two', c: () => undefined })).toEqual({ a: 1, b: 'two', c: undefined });
  });

  it('throws a single failure as it is', () => {
    expect(() => checkAll({ a: () => 1, b: invalid('b') })).toThrow(expect.objectContaining({ code: 'INVALID_B', field: 'b' }));
  });

  it('reports every invalid field together, in the order of the checks', () => {
    let thrown: unknown;
    try {
      checkAll({ a: invalid('a'), b: () => 2, c: invalid('c') });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidInput);
    expect(failuresOf(thrown as DomainError).map((e) => e.field)).toEqual(['a', 'c']);
    expect((thrown as InvalidInput).kind).toBe('invalid');
  });

  it('lets other errors through at once', () => {
    const conflict = new DomainError('conflict', 'TAKEN', 'Taken.');
    expect(() =>
      checkAll({
        a: invalid('a'),
        b: () => {
          throw conflict;
        },
      }),
    ).toThrow(conflict);
  });
});
