import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSchemaName, quoteIdentifier, searchPathOption } from '../../src/db/schema-name.js';

/** Reads a quoted identifier back as PostgreSQL does: "" is one quote; a lone quote ends it. */
function unquote(quoted: string): string | undefined {
  if (!quoted.startsWith('"') || !quoted.endsWith('"') || quoted.length < 2) return undefined;
  const inner = quoted.slice(1, -1);
  if (/(^|[^"])"("")*($|[^"])/.test(inner.replaceAll('""', ''))) return undefined;
  return inner.replaceAll('""', '"');
}

/** Splits libpq options as libpq does: on unescaped spaces, a backslash escapes the next byte. */
function libpqWords(options: string): string[] {
  const words: string[] = [];
  let word = '';
  for (let index = 0; index < options.length; index++) {
    const char = options[index]!;
    if (char === '\\' && index + 1 < options.length) word += options[++index];
    else if (char === ' ') {
      if (word) words.push(word);
      word = '';
    } else word += char;
  }
  if (word) words.push(word);
  return words;
}

describe('schema names', () => {
  it('a quoted name reads back as exactly the name, whatever it holds', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (name) => {
        expect(unquote(quoteIdentifier(name))).toBe(name);
      }),
    );
  });

  it('the search_path option is one libpq word carrying exactly the quoted name', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (name) => {
        const words = libpqWords(searchPathOption(name));
        expect(words).toEqual(['-c', `search_path=${quoteIdentifier(name)}`]);
      }),
    );
  });

  it('accepts what PostgreSQL holds and refuses the rest', () => {
    for (const ok of ['public', 'custom-schema', 'Two Words', 'x"y', 'ü'.repeat(31)]) {
      expect(() => checkSchemaName(ok)).not.toThrow();
    }
    for (const bad of ['', 'x'.repeat(64), 'a\u0000', 'pg_catalog', 'PG_x']) {
      expect(() => checkSchemaName(bad)).toThrow(
        expect.objectContaining({ code: 'config_invalid' }),
      );
    }
  });
});
