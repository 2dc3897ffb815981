import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkMarkdownSnippets, formatSnippetError } from '../scripts/check-readme-snippets.js';
import { extractSnippets } from '../scripts/readme-snippets/extract-snippets.js';

// Each check gets its own generated directory (inside the repository, so that node_modules and
// the tsconfig paths resolve), apart from the one `npm run typecheck` uses for README.md.
const directories: string[] = [];
function scratchDirectory(): string {
  const directory = fileURLToPath(
    new URL(`../node_modules/.cache/readme-snippets-test-${randomUUID()}/`, import.meta.url),
  );
  directories.push(directory);
  return directory;
}
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** Markdown from lines, so a test can say which line is which. */
const markdown = (...lines: string[]) => lines.join('\n');

describe('check-readme-snippets', () => {
  it('reports a type error on its Markdown line and nothing for the correct blocks', () => {
    const document = markdown(
      '# Example', //                                                 1
      '', //                                                          2
      '```ts', //                                                     3
      "import { VeridexError } from '@veridex/langgraph/errors';", // 4
      "const error = new VeridexError('config_invalid', 'bad');", //  5
      'const code: string = error.code;', //                          6
      '```', //                                                       7
      '', //                                                          8
      '```sh', //                                                     9
      'const not: TypeScript = 1', //                                10
      '```', //                                                      11
      '', //                                                         12
      '```tsx', //                                                   13
      'export const Hello = () => <p>{1 + 1}</p>;', //               14
      '```', //                                                      15
      '', //                                                         16
      '```ts', //                                                    17
      "import { VeridexError } from '@veridex/langgraph/errors';", //18
      '', //                                                         19
      "const count: number = new VeridexError('config_invalid', 'bad').code;", // 20
      '```', //                                                      21
    );

    const report = checkMarkdownSnippets(document, scratchDirectory());

    expect(report.snippets).toBe(3);
    expect(report.errors).toEqual([expect.objectContaining({ markdownLine: 20, code: 2322 })]);
    expect(formatSnippetError(report.errors[0]!, 'README.md')).toMatch(
      /^README\.md:20: TS2322 Type '.*' is not assignable to type 'number'\./,
    );
  });

  it('prepends a block’s snippet comment and places errors in the comment on its lines', () => {
    const document = markdown(
      'Some prose.', //                                        1
      '<!-- snippet:', //                                      2
      'declare const total: number;', //                       3
      "const wrong: number = 'not a number';", //              4
      '-->', //                                                5
      '```ts', //                                              6
      'const doubled: number = total * 2;', //                 7
      'const missing = notDeclaredAnywhere;', //               8
      '```', //                                                9
      '', //                                                  10
      '<!-- snippet: declare const name: string; -->', //     11
      '```ts', //                                             12
      'const upper: string = name.toUpperCase();', //         13
      '```', //                                               14
    );

    const report = checkMarkdownSnippets(document, scratchDirectory());

    expect(report.errors.map(({ markdownLine, code }) => ({ markdownLine, code }))).toEqual([
      { markdownLine: 4, code: 2322 }, // not assignable
      { markdownLine: 8, code: 2304 }, // cannot find name
    ]);
  });

  it('refuses a code block that is never closed and a snippet comment with no block after it', () => {
    const { snippets, problems } = extractSnippets(
      markdown(
        '<!-- snippet: declare const orphan: number; -->', // 1
        '', //                                                2
        '```ts', //                                           3
        'const a = 1;', //                                    4
        '```', //                                             5
        '```tsx', //                                          6
        'const b = <br />;', //                               7
      ),
    );

    expect(snippets.map((snippet) => snippet.fenceLine)).toEqual([3]);
    expect(snippets[0]?.context).toEqual([]);
    expect(problems).toEqual([
      { markdownLine: 6, message: 'code block is never closed' },
      {
        markdownLine: 1,
        message: 'a <!-- snippet: --> comment must come right before a ```ts or ```tsx block',
      },
    ]);
  });
});
