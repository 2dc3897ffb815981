// `tsx scripts/check-readme-snippets.ts [file.md]` (part of `npm run typecheck`): every ```ts and
// ```tsx block of README.md must type-check against the library as it is, as its own module,
// with the context its `<!-- snippet: ... -->` comment declares (see
// readme-snippets/extract-snippets.ts). Prints `README.md:<line>: TS<code> <message>` for each
// error and exits 1 if there is any. The generated modules stay in
// node_modules/.cache/readme-snippets/ for inspection (`npx tsc -p` that directory).
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { extractSnippets } from './readme-snippets/extract-snippets.js';
import { type SnippetError, typeCheckSnippets } from './readme-snippets/type-check-snippets.js';

const root = join(import.meta.dirname, '..');

/** What {@link checkMarkdownSnippets} found. */
export interface SnippetReport {
  /** How many blocks were type-checked. */
  snippets: number;
  /** Extraction problems and compiler errors, in Markdown order. */
  errors: SnippetError[];
}

/**
 * Extracts the ```ts / ```tsx blocks of `markdown` and type-checks them with the repository's
 * compiler settings. `directory` is where the generated modules go (emptied first); it must be
 * inside this repository so that its dependencies resolve.
 */
export function checkMarkdownSnippets(
  markdown: string,
  directory = join(root, 'node_modules', '.cache', 'readme-snippets'),
): SnippetReport {
  const { snippets, problems } = extractSnippets(markdown);
  const errors: SnippetError[] = [
    ...problems.map((problem) => ({ ...problem, code: 0 })),
    ...typeCheckSnippets(snippets, {
      directory,
      baseConfig: join(root, 'tsconfig.json'),
      sharedModules: {
        'readme-context.ts': join(import.meta.dirname, 'readme-snippets', 'readme-context.ts'),
      },
    }),
  ];
  errors.sort((a, b) => (a.markdownLine ?? 0) - (b.markdownLine ?? 0));
  return { snippets: snippets.length, errors };
}

/** One error as `file.md:<line>: TS<code> <message>` (or its location outside the snippets). */
export function formatSnippetError(error: SnippetError, markdownName: string): string {
  const where =
    error.markdownLine !== undefined ? `${markdownName}:${error.markdownLine}` : error.location;
  const code = error.code === 0 ? '' : ` TS${error.code}`;
  return `${where ?? markdownName}:${code} ${error.message}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const file = resolve(process.argv[2] ?? join(root, 'README.md'));
  const started = performance.now();
  const report = checkMarkdownSnippets(readFileSync(file, 'utf8'));
  for (const error of report.errors) console.error(formatSnippetError(error, basename(file)));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const verdict = report.errors.length === 0 ? 'ok' : `${report.errors.length} error(s)`;
  console.log(
    `${basename(file)}: ${report.snippets} TypeScript blocks type-checked in ${seconds} s: ${verdict}`,
  );
  if (report.errors.length > 0) process.exitCode = 1;
}
