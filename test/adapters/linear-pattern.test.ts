import fc from 'fast-check';
import { check } from 'recheck';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { linearPatternRefusal, MAX_PATTERN_LENGTH } from '../../src/adapters/linear-pattern.js';

const refusalOf = (pattern: string) => linearPatternRefusal(pattern).refusal;

// Patterns tool schemas carry: the repository's fixtures, the header pattern `fromOpenAPI`
// adds, common hand-written ones and the ones zod 4 writes for its string formats.
const ORDINARY = [
  '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$', // IBAN
  '^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$', // e-mail
  '^[^@]+@[^@]+$',
  '^\\d{4}-\\d{2}-\\d{2}$', // date
  '^(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$',
  '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  '^[a-z0-9]+(-[a-z0-9]+)*$', // slug
  '^[a-z0-9]+(\\.[a-z0-9]+)*$',
  '^v\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.-]+)?$',
  '^https?://[^\\s/$.?#].[^\\s]*$',
  '^[A-Za-z0-9+/]*={0,2}$',
  '^\\+?[1-9]\\d{1,14}$',
  '^(GET|POST|PUT|PATCH|DELETE)$',
  '^[^\\r\\n]*$', // fromOpenAPI's header values
  '^cus_[A-Za-z0-9]+$',
  '^[a-f0-9]{32}$',
  '^[a-z0-9_-]{1,80}$',
  '^[a-z]{3}$',
  '^(?!\\s*$).+', // not blank
  '^(?:(?!--).)*$',
  '[A-Z]', // contains a capital
  '[a-z]+', // unanchored, but any one letter already matches
  'x',
];

function zodFormatPatterns(): string[] {
  const formats = z.object({
    email: z.email(),
    uuid: z.uuid(),
    datetime: z.iso.datetime(),
    date: z.iso.date(),
    time: z.iso.time(),
    duration: z.iso.duration(),
    ipv4: z.ipv4(),
    ipv6: z.ipv6(),
    cidr: z.cidrv4(),
    hostname: z.hostname(),
    base64: z.base64(),
    base64url: z.base64url(),
    e164: z.e164(),
    cuid: z.cuid(),
    ulid: z.ulid(),
    nanoid: z.nanoid(),
    mac: z.mac(),
    hash: z.hash('sha256'),
    lowercase: z.string().lowercase(),
    startsWith: z.string().startsWith('ab'),
  });
  const properties = z.toJSONSchema(formats).properties as Record<string, { pattern?: string }>;
  return Object.values(properties).flatMap((property) => property.pattern ?? []);
}

describe('linearPatternRefusal', () => {
  it.each(ORDINARY)('accepts the ordinary pattern %s', (pattern) => {
    expect(refusalOf(pattern)).toBeUndefined();
  });

  it("accepts the patterns zod 4 writes for its string formats (what a zod-built tool's schema carries)", () => {
    const patterns = zodFormatPatterns();
    expect(patterns.length).toBeGreaterThan(15);
    expect(patterns.filter((pattern) => refusalOf(pattern) !== undefined)).toEqual([]);
  });

  // A document chooses which of zod's own regular expressions run on arguments by `format`.
  it.each([
    'email',
    'uuid',
    'date-time',
    'date',
    'time',
    'duration',
    'hostname',
    'ipv4',
    'ipv6',
    'mac',
    'cidr',
    'cidr-v6',
    'base64',
    'base64url',
    'e164',
    'nanoid',
    'cuid',
    'cuid2',
    'ulid',
    'xid',
    'ksuid',
    'credit_card',
    'iban',
  ])('proves linear the pattern zod runs for the JSON Schema format %s', (format) => {
    const rendered = z.toJSONSchema(z.fromJSONSchema({ type: 'string', format })) as {
      pattern?: string;
    };
    expect(rendered.pattern).toBeDefined();
    expect(refusalOf(rendered.pattern!)).toBeUndefined();
  });

  it.each([
    ['^(a+)+$', 'nested quantifiers'],
    ['^(a|a)*$', 'overlapping alternatives under a quantifier'],
    ['^(a*)*$', 'a quantified nullable group'],
    ['^(\\w+\\s?)+$', 'the classic word-list pattern'],
    ['^(x+x+)+y$', 'adjacent quantifiers inside a quantifier'],
    ['(a|a)(a|a)(a|a)(a|a)(a|a)(a|a)(a|a)(a|a)', 'finitely but hugely ambiguous'],
    ['a(?:|){40}b', 'empty alternatives, 2^40 ways through'],
  ])('refuses %s (exponential: %s)', (pattern) => {
    expect(refusalOf(pattern)).toBeDefined();
  });

  it.each([
    ['^\\d+\\d+$', 'two adjacent quantifiers over the same digits'],
    ['[a-z]+@', 'a loop retried from every start (unanchored)'],
    ['\\s+$', 'trailing blanks, retried from every start'],
    ['.*a.*b', 'wildcards'],
    ['.*ab$', "zod's endsWith"],
    ['^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', 'a dot the loop before it also reads'],
    ['^\\S+@\\S+\\.\\S+$', 'cubic'],
  ])('refuses %s (polynomial: %s)', (pattern) => {
    expect(refusalOf(pattern)).toBeDefined();
  });

  it.each([
    ['(a)\\1', 'a backreference'],
    ['(?<x>a)\\k<x>', 'a named backreference'],
    ['\\p{L}+', 'a Unicode property escape, literal text without the u flag'],
    ['\\8', 'a legacy octal escape'],
    ['(?i:a)', 'a modifier group'],
    ['(?=.*x)a', 'an unbounded lookahead tried at every start'],
    ['^(?:(?=.*x)a)*$', 'an unbounded lookahead inside a quantifier'],
    ['^a+(?=.*x)', 'an unbounded lookahead after an unbounded quantifier'],
    ['^(?=(?=a)a)', 'a lookaround inside a lookaround'],
    ['^(?=a)*b', 'a quantified assertion'],
    ['(', 'invalid syntax'],
    ['[b-a]', 'a range out of order'],
  ])('refuses %s (%s)', (pattern) => {
    expect(refusalOf(pattern)).toBeDefined();
  });

  it(`refuses a pattern longer than ${MAX_PATTERN_LENGTH} characters, whatever it says`, () => {
    expect(refusalOf(`^${'a'.repeat(MAX_PATTERN_LENGTH)}$`)).toMatch(/longer than/);
  });

  it('spends work proportional to the pattern and refuses a pattern built to be costly to check', () => {
    expect(refusalOf('^(?:(?:(?:a{0,16}){0,16}){0,16})$')).toMatch(/budget|positions/);
    const { work } = linearPatternRefusal('^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$ ');
    expect(work).toBeLessThan(500 + 50 * 34);
  });

  // recheck (https://makenowjust-labs.github.io/recheck/, the checker `npm run lint:redos` uses)
  // as an independent oracle: whatever this check accepts, recheck finds no attack on.
  it('accepts no pattern recheck can attack (random patterns over a small grammar)', async () => {
    // Mostly distinct literals, so that a good share of the patterns is linear and accepted.
    const atom = fc.constantFrom('a', 'b', 'c', '-', '@', '\\d', '[ab]', '[^a]', '\\w', '.');
    const quantifier = fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}', '{2,}', '*?');
    const term = fc.tuple(atom, quantifier).map(([a, q]) => a + q);
    const pattern: fc.Arbitrary<string> = fc.letrec<{ sequence: string }>((tie) => ({
      sequence: fc
        .array(
          fc.oneof(
            { depthSize: 'small', withCrossShrink: true },
            term,
            fc.tuple(tie('sequence'), quantifier).map(([s, q]) => `(?:${s})${q}`),
            fc.tuple(tie('sequence'), tie('sequence')).map(([x, y]) => `(?:${x}|${y})`),
          ),
          { minLength: 1, maxLength: 4 },
        )
        .map((parts) => parts.join('')),
    })).sequence;
    const anchored = fc
      .tuple(fc.boolean(), pattern, fc.boolean())
      .map(([start, body, end]) => `${start ? '^' : ''}${body}${end ? '$' : ''}`);
    await fc.assert(
      fc.asyncProperty(anchored, async (source) => {
        if (refusalOf(source) !== undefined) return;
        const diagnostics = await check(source, '', { timeout: 10_000 });
        expect(
          diagnostics.status,
          `${source}: ${JSON.stringify(diagnostics.status === 'vulnerable' ? diagnostics.attack : '')}`,
        ).not.toBe('vulnerable');
      }),
      { numRuns: 1_000, seed: 30 },
    );
  }, 120_000);
});
