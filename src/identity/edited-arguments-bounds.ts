/** The deepest an edit's replacement arguments may nest (objects and arrays). */
export const MAX_EDITED_ARGUMENTS_DEPTH = 64;

/** The most values (objects, arrays, scalars) an edit's replacement arguments may hold. */
export const MAX_EDITED_ARGUMENTS_VALUES = 100_000;

/**
 * Why an edit's replacement arguments are too deep or too large to hash, scrub and store, or
 * `undefined` when they are within bounds. Everything downstream (`argumentsHash`, the
 * scrubber, canonical JSON) recurses over the value, so a JSON body nested tens of thousands
 * deep would overflow the stack there: it is refused here, before anything recurses, by an
 * iterative walk that stops at the first bound crossed (time linear in what it visits, never
 * more than {@link MAX_EDITED_ARGUMENTS_VALUES} values). A cycle (possible only from code, not
 * from JSON) is refused as too deep.
 */
export function describeUnboundedEditedArguments(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  let values = 0;
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    values += 1;
    if (values > MAX_EDITED_ARGUMENTS_VALUES) {
      return `editedArgs may hold at most ${MAX_EDITED_ARGUMENTS_VALUES} values`;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth > MAX_EDITED_ARGUMENTS_DEPTH) {
      return `editedArgs may nest at most ${MAX_EDITED_ARGUMENTS_DEPTH} levels deep`;
    }
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  return undefined;
}
