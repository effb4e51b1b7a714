import { assertStorableText, unstorableText, UnstorableTextError } from './text-input.js';

describe('unstorableText', () => {
  it.each(['plain', 'Zoë', '🎟️ ticket', 'tab\tand\nnewline\r\n', '', '\uD83D\uDE00'])('accepts %j', (value) => {
    expect(unstorableText(value)).toBeUndefined();
  });

  it.each([
    ['a\u0000b', /NUL/],
    ['escape \u001b[2J sequence', /control characters/],
    ['bell \u0007', /control characters/],
    ['delete \u007f', /control characters/],
    ['lone high \uD800 surrogate', /lone surrogate/],
    ['lone low \uDC00 surrogate', /lone surrogate/],
    ['\uDE00\uD83D reversed pair', /lone surrogate/],
  ])('refuses %j', (value, reason) => {
    expect(unstorableText(value)).toMatch(reason);
  });
});

describe('assertStorableText', () => {
  it('names the nested field that holds the bad text', () => {
    expect(() => assertStorableText({ variables: { input: { tags: ['ok', 'a\u0000'] } } }, '')).toThrow(
      new UnstorableTextError('variables.input.tags.1', 'must not contain the NUL character (U+0000)'),
    );
  });

  it('checks object keys too, and ignores numbers, booleans and null', () => {
    expect(() => assertStorableText({ ['k\u0000']: 1 }, 'body')).toThrow(UnstorableTextError);
    expect(() => assertStorableText({ n: 1, b: true, z: null }, '')).not.toThrow();
  });
});
