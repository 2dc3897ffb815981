import { VeridexError } from '../errors/index.js';

/** A value that has exactly one canonical JSON form. */
export type CanonicalValue =
  | null
  | boolean
  | number
  | string
  | readonly CanonicalValue[]
  | { readonly [key: string]: CanonicalValue | undefined };

/**
 * Serialises `value` as RFC 8785 (JSON Canonicalization Scheme) text: object keys sorted by
 * UTF-16 code units, no whitespace, strings and numbers exactly as ECMAScript's
 * `JSON.stringify` writes them (which RFC 8785 §3.2.2 adopts). Everything hashed or signed
 * by the library goes through here first.
 *
 * Written here rather than taken from the `canonicalize` package: that package produces
 * the same bytes (a property test checks every output against it) but is about 6× slower,
 * and evidence bundles canonicalise megabytes.
 *
 * JSON has no representation for some JavaScript values, and silently coercing them would
 * let two different inputs hash the same. So, explicitly:
 * - `undefined` object properties are omitted (as `JSON.stringify` does); `undefined`
 *   anywhere else (top level, array element) is rejected;
 * - `bigint`, functions, symbols, `NaN`, `±Infinity` and lone surrogates are rejected —
 *   convert money to a decimal string first;
 * - `Date` is rejected (call `toISOString()` yourself so the format is visible);
 *   other objects with `toJSON` are serialised through it.
 *
 * @throws VeridexError `canonical_json_invalid` naming the JSON path of the offending value.
 * @example canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  // Strings, finite numbers, booleans and null serialise the same with or without sorting.
  if (
    typeof value === 'string'
      ? isWellFormed(value)
      : typeof value === 'boolean' || value === null || Number.isFinite(value)
  ) {
    return JSON.stringify(value);
  }
  if (value !== undefined) {
    try {
      return plainData(value, 0);
    } catch (error) {
      if (error !== FALLBACK) throw error;
    }
    try {
      return JSON.stringify(value, sortingReplacer);
    } catch (error) {
      if (error !== FALLBACK) throw error;
    }
  }
  return serialize(value, [], new Set());
}

// Three paths, each exact for what it accepts. Anything a path does not take abandons it by
// throwing FALLBACK:
// 1. plainData: plain objects, arrays and JSON scalars, written directly — about 2.5× faster
//    than (2) on the small payloads every governed call hashes (no replacer round trips).
// 2. native JSON.stringify (same string and number forms as RFC 8785) with a replacer that
//    hands it key-sorted objects: nesting deeper than (1) takes.
// 3. the exact recursive serializer: `toJSON`, class instances, and every value that must be
//    rejected (it produces the error messages).
const FALLBACK = Symbol('canonical-json-fallback');
const PLAIN_MAX_DEPTH = 64;
// A string JSON.stringify writes other than as itself in quotes (escapes), or with a lone
// surrogate somewhere (rejected); every other string is written as `"${text}"`.
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The canonical JSON of one string (what `canonicalJson(text)` returns), without the general
 * dispatch: for hashing fixed envelopes field by field.
 * @throws VeridexError `canonical_json_invalid` for a lone surrogate.
 */
export function canonicalString(text: string): string {
  if (!NEEDS_ESCAPING.test(text)) return `"${text}"`;
  return canonicalJson(text);
}

function plainString(text: string): string {
  if (!NEEDS_ESCAPING.test(text)) return `"${text}"`;
  if (!isWellFormed(text)) throw FALLBACK;
  return JSON.stringify(text);
}

function plainData(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return plainString(value);
    case 'number':
      if (!Number.isFinite(value)) throw FALLBACK;
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw FALLBACK; // undefined (here only an array element or the top level), bigint, …
  }
  if (value === null) return 'null';
  if (depth > PLAIN_MAX_DEPTH) throw FALLBACK; // also what ends a circular structure here
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ',';
      text += plainData(value[index], depth + 1);
    }
    return `${text}]`;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) throw FALLBACK;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') throw FALLBACK;
  const keys = Object.keys(value);
  for (let index = 1; index < keys.length; index++) {
    // Array.prototype.sort without a comparator orders by UTF-16 code units (RFC 8785 §3.2.3).
    if ((keys[index - 1] as string) > (keys[index] as string)) {
      keys.sort();
      break;
    }
  }
  let text = '{';
  let first = true;
  for (const key of keys) {
    const child = (value as Record<string, unknown>)[key];
    if (child === undefined) continue; // omitted, as JSON.stringify does
    text += `${first ? '' : ','}${plainString(key)}:${plainData(child, depth + 1)}`;
    first = false;
  }
  return `${text}}`;
}
const INTEGER_LIKE = /^(?:0|[1-9][0-9]*)$/;

function sortingReplacer(this: unknown, key: string, value: unknown): unknown {
  if ((this as Record<string, unknown>)[key] !== value) throw FALLBACK; // toJSON was applied
  switch (typeof value) {
    case 'string':
      if (!isWellFormed(value)) throw FALLBACK;
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw FALLBACK;
      return value;
    case 'boolean':
      return value;
    case 'undefined':
      // An omitted object property is fine; an array element or top-level value is not.
      if (Array.isArray(this)) throw FALLBACK;
      return value;
    case 'object':
      break;
    default:
      throw FALLBACK;
  }
  if (value === null || Array.isArray(value)) return value;
  if (value instanceof Date) throw FALLBACK;
  const keys = Object.keys(value);
  let sorted = true;
  for (let index = 1; index < keys.length; index++) {
    if ((keys[index - 1] as string) > (keys[index] as string)) {
      sorted = false;
      break;
    }
  }
  // Already in code-unit order (the common case for objects built by this library): no copy.
  if (sorted) {
    for (const candidate of keys) if (!isWellFormed(candidate)) throw FALLBACK;
    return value;
  }
  keys.sort();
  // No prototype: an own "__proto__" key is then a plain property, not a prototype change that
  // would silently drop it (two different objects hashing the same).
  const copy: Record<string, unknown> = Object.create(null);
  for (const candidate of keys) {
    if (INTEGER_LIKE.test(candidate) || !isWellFormed(candidate)) throw FALLBACK;
    copy[candidate] = (value as Record<string, unknown>)[candidate];
  }
  return copy;
}

// `path` is kept as a stack of segments and only joined when an error is reported, so the
// happy path allocates nothing for it.
function serialize(value: unknown, path: Array<string | number>, ancestors: Set<object>): string {
  switch (typeof value) {
    case 'string':
      if (!isWellFormed(value)) reject(path, 'lone UTF-16 surrogate');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) reject(path, `${value} has no JSON form`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return reject(
        path,
        'undefined is only allowed as an object property value (which is omitted)',
      );
    case 'bigint':
      return reject(path, 'bigint has no JSON form; convert it to a decimal string first');
    case 'function':
    case 'symbol':
      return reject(path, `a ${typeof value} has no JSON form`);
  }
  if (value === null) return 'null';
  const object = value as object;
  if (object instanceof Date) reject(path, 'Date must be converted with toISOString() first');
  if (ancestors.has(object)) reject(path, 'circular reference');
  ancestors.add(object);
  let result: string;
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
    result = serialize((object as { toJSON(): unknown }).toJSON(), path, ancestors);
  } else if (Array.isArray(object)) {
    result = '[';
    for (let index = 0; index < object.length; index++) {
      path.push(index);
      result += (index === 0 ? '' : ',') + serialize(object[index], path, ancestors);
      path.pop();
    }
    result += ']';
  } else {
    // Array.prototype.sort without a comparator orders by UTF-16 code units (RFC 8785 §3.2.3).
    const keys = Object.keys(object).sort();
    result = '{';
    let first = true;
    for (const key of keys) {
      const child = (object as Record<string, unknown>)[key];
      if (child === undefined) continue;
      path.push(key);
      if (!isWellFormed(key)) reject(path, 'lone UTF-16 surrogate in a key');
      result += `${first ? '' : ','}${JSON.stringify(key)}:${serialize(child, path, ancestors)}`;
      path.pop();
      first = false;
    }
    result += '}';
  }
  ancestors.delete(object);
  return result;
}

// String.prototype.isWellFormed is in Node 20 but not yet in TypeScript's ES2023 lib.
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function reject(path: ReadonlyArray<string | number>, why: string): never {
  const where = `$${path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${segment}`)).join('')}`;
  throw new VeridexError(
    'canonical_json_invalid',
    `Cannot canonicalise the value at ${where}: ${why}.`,
    {
      details: { path: where },
    },
  );
}
