import { type CharSet, charSet, complement, DIGITS, DOT, SPACE, WORD } from './pattern-char-set.js';

/**
 * A regular expression as the importer reads it: what each position can match and how positions
 * follow one another. Groups are kept only as structure (capturing or not is the same here).
 */
export type PatternNode =
  | { kind: 'chars'; set: CharSet }
  | { kind: 'sequence'; items: PatternNode[] }
  | { kind: 'alternation'; branches: PatternNode[] }
  | { kind: 'repeat'; body: PatternNode; min: number; max: number }
  | { kind: 'assertion'; start: boolean }
  | { kind: 'look'; behind: boolean; body: PatternNode };

/** Why a pattern was refused; `message` names the construct. */
export class PatternRefusal extends Error {}

/** Work units a pattern's check may spend (positions, transitions, characters tried). */
export interface CheckBudget {
  spent: number;
  readonly limit: number;
}

/** Adds `units` to `budget`. @throws PatternRefusal once the budget is exceeded. */
export function spend(budget: CheckBudget, units: number): void {
  budget.spent += units;
  if (budget.spent > budget.limit) {
    throw new PatternRefusal('too complex to prove linear within the checking budget');
  }
}

const MAX_NESTING = 64;
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
const SET_ESCAPES: Readonly<Record<string, CharSet>> = {
  d: DIGITS,
  D: complement(DIGITS),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
};

/**
 * Parses `source` as `new RegExp(source)` does (no flags, so Annex B syntax), accepting a strict
 * subset: literals, classes, `.`, groups, alternation, quantifiers, `^`, `$`, `\b`, `\B` and
 * lookarounds. Backreferences (`\1`, `\k<name>`), legacy octal escapes, unknown letter escapes
 * (`\p`, `\a`), quantified assertions, modifiers (`(?i:…)`) and anything else ambiguous are
 * refused rather than guessed at. One pass, linear in the length of `source`.
 *
 * @throws PatternRefusal naming the construct.
 */
export function parsePattern(source: string): PatternNode {
  let index = 0;
  const refuse = (what: string): never => {
    throw new PatternRefusal(`${what} at offset ${index}`);
  };
  const peek = () => source[index];

  const disjunction = (depth: number): PatternNode => {
    if (depth > MAX_NESTING) refuse(`groups nested deeper than ${MAX_NESTING}`);
    const branches = [alternative(depth)];
    while (peek() === '|') {
      index++;
      branches.push(alternative(depth));
    }
    return branches.length === 1 ? branches[0]! : { kind: 'alternation', branches };
  };

  const alternative = (depth: number): PatternNode => {
    const items: PatternNode[] = [];
    while (index < source.length && peek() !== '|' && peek() !== ')') {
      items.push(quantifier(term(depth)));
    }
    return items.length === 1 ? items[0]! : { kind: 'sequence', items };
  };

  const term = (depth: number): PatternNode => {
    const char = source[index++]!;
    if (char === '^' || char === '$') return { kind: 'assertion', start: char === '^' };
    if (char === '.') return { kind: 'chars', set: DOT };
    if (char === '[') return characterClass();
    if (char === '(') return group(depth);
    if (char === '\\') return atomEscape();
    if (char === ')' || char === '*' || char === '+' || char === '?') refuse(`a stray "${char}"`);
    if (char === '{' && bracedQuantifier(index - 1) !== undefined) refuse('a stray quantifier');
    return literal(char.charCodeAt(0));
  };

  const group = (depth: number): PatternNode => {
    let look: { behind: boolean } | undefined;
    if (peek() === '?') {
      const marker = source.slice(index, index + 3);
      if (marker.startsWith('?:')) index += 2;
      else if (marker.startsWith('?=') || marker.startsWith('?!')) {
        look = { behind: false };
        index += 2;
      } else if (marker === '?<=' || marker === '?<!') {
        look = { behind: true };
        index += 3;
      } else if (marker.startsWith('?<')) {
        const name = /^\?<([A-Za-z_$][A-Za-z0-9_$]{0,63})>/.exec(source.slice(index, index + 68));
        if (!name) refuse('a group name other than an ASCII identifier');
        index += name![0].length;
      } else refuse('a group kind other than (?:, (?=, (?!, (?<=, (?<! and (?<name>');
    }
    const body = disjunction(depth + 1);
    if (peek() !== ')') refuse('an unclosed group');
    index++;
    return look ? { kind: 'look', behind: look.behind, body } : body;
  };

  const quantifier = (atom: PatternNode): PatternNode => {
    const char = peek();
    let bounds: [number, number] | undefined;
    if (char === '*') bounds = [0, Number.POSITIVE_INFINITY];
    else if (char === '+') bounds = [1, Number.POSITIVE_INFINITY];
    else if (char === '?') bounds = [0, 1];
    else if (char === '{') {
      const braced = bracedQuantifier(index);
      if (braced === undefined) return atom;
      bounds = [braced.min, braced.max];
      index = braced.end - 1;
    } else return atom;
    index++;
    if (peek() === '?') index++; // lazy: the same paths, tried in another order
    if (atom.kind === 'assertion' || atom.kind === 'look') refuse('a quantified assertion');
    return { kind: 'repeat', body: atom, min: bounds[0], max: bounds[1] };
  };

  // `{n}`, `{n,}` or `{n,m}` starting at `at`; anything else is a literal `{` (Annex B).
  const bracedQuantifier = (at: number) => {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at, at + 24));
    if (!match) return undefined;
    const min = Number(match[1]);
    const max =
      match[2] === undefined ? min : match[3] ? Number(match[3]) : Number.POSITIVE_INFINITY;
    if (max < min) refuse('a quantifier whose maximum is below its minimum');
    return { min, max, end: at + match[0].length };
  };

  const atomEscape = (): PatternNode => {
    const char = source[index];
    if (char === 'b' || char === 'B') {
      index++;
      return { kind: 'assertion', start: false };
    }
    const set = escapeSet();
    return { kind: 'chars', set };
  };

  // After a backslash, outside or inside a class (where `\b` is a backspace).
  const escapeSet = (inClass = false): CharSet => {
    const char = source[index++];
    if (char === undefined) return refuse('a pattern ending in a backslash');
    const set = SET_ESCAPES[char];
    if (set) return set;
    const control = CONTROL_ESCAPES[char];
    if (control !== undefined) return charSet([[control, control]]);
    if (inClass && char === 'b') return charSet([[8, 8]]);
    if (char === '0' && !/[0-9]/.test(source[index] ?? '')) return charSet([[0, 0]]);
    if (char === 'c' && /[A-Za-z]/.test(source[index] ?? '')) {
      const code = source.charCodeAt(index++) % 32;
      return charSet([[code, code]]);
    }
    const hex = char === 'x' ? 2 : char === 'u' ? 4 : 0;
    if (hex > 0) {
      const digits = source.slice(index, index + hex);
      if (digits.length !== hex || !/^[0-9A-Fa-f]+$/.test(digits)) {
        refuse(`\\${char} without ${hex} hexadecimal digits`);
      }
      index += hex;
      const code = Number.parseInt(digits, 16);
      return charSet([[code, code]]);
    }
    if (/[0-9]/.test(char)) refuse('a backreference or octal escape');
    if (/[A-Za-z]/.test(char)) refuse(`the escape \\${char}`);
    return literal(char.charCodeAt(0)).set;
  };

  const characterClass = (): PatternNode => {
    const negated = peek() === '^';
    if (negated) index++;
    const ranges: Array<readonly [number, number]> = [];
    while (peek() !== ']') {
      if (index >= source.length) refuse('an unclosed character class');
      const low = classAtom();
      if (peek() === '-' && source[index + 1] !== ']' && index + 1 < source.length) {
        index++;
        const high = classAtom();
        if (!isSingle(low) || !isSingle(high)) refuse('a class range with a class escape');
        if (low[0]![0] > high[0]![0]) refuse('a class range out of order');
        ranges.push([low[0]![0], high[0]![0]]);
      } else ranges.push(...low);
    }
    index++;
    const set = charSet(ranges);
    return { kind: 'chars', set: negated ? complement(set) : set };
  };

  const classAtom = (): CharSet => {
    const char = source[index++]!;
    return char === '\\' ? escapeSet(true) : literal(char.charCodeAt(0)).set;
  };

  const root = disjunction(0);
  if (index < source.length) refuse('an unopened ")"');
  return root;
}

function literal(code: number): { kind: 'chars'; set: CharSet } {
  return { kind: 'chars', set: charSet([[code, code]]) };
}

function isSingle(set: CharSet): boolean {
  return set.length === 1 && set[0]![0] === set[0]![1];
}
