import { CONFUSABLE_PROTOTYPES } from './confusable-prototypes.js';

let prototypes: Map<number, string> | undefined;

function prototypeTable(): Map<number, string> {
  if (prototypes) return prototypes;
  const table = new Map<number, string>();
  for (const entry of CONFUSABLE_PROTOTYPES.split(';')) {
    const [source, target] = entry.split(':') as [string, string];
    table.set(
      Number.parseInt(source, 16),
      String.fromCodePoint(...target.split(' ').map((hex) => Number.parseInt(hex, 16))),
    );
  }
  prototypes = table;
  return table;
}

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
// A Soft_Dotted letter (i, j, Cyrillic і, …) loses its own dot under a mark above, so `i` +
// U+0307 COMBINING DOT ABOVE shows one dot: it reads as `i` (UTS #39 §5.4 names this case).
// Every U+0307 in the marks that follow such a letter is dropped from the skeleton; dropping
// one that might show can only merge two names, never split one.
const DOT_AFTER_SOFT_DOTTED = /(\p{Soft_Dotted})(\p{M}*)/gu;

/** The `confusables.txt` prototype of one character, if it has one other than itself. */
export function prototypeOf(char: string): string | undefined {
  return prototypeTable().get(char.codePointAt(0)!);
}

/**
 * The confusable skeleton of `text` (Unicode TS #39 §4): NFD, default-ignorable code points
 * removed, every code point replaced by its prototype from `confusables.txt`, NFD again, and
 * a dot above dropped after a soft-dotted letter (§5.4: `ali\u0307ce` is `alice`).
 * Two strings with equal skeletons look alike (`раypal` written with Cyrillic letters and
 * `paypal`); the skeleton is a comparison key, never something to display. Linear in the
 * length of `text`.
 *
 * @example confusableSkeleton('аlice') === confusableSkeleton('alice') // true (Cyrillic а)
 */
export function confusableSkeleton(text: string): string {
  const table = prototypeTable();
  let mapped = '';
  for (const char of text.normalize('NFD').replace(DEFAULT_IGNORABLE, '')) {
    mapped += table.get(char.codePointAt(0)!) ?? char;
  }
  return mapped
    .normalize('NFD')
    .replace(
      DOT_AFTER_SOFT_DOTTED,
      (_, base: string, marks: string) => base + marks.replace(/\u0307/g, ''),
    );
}
