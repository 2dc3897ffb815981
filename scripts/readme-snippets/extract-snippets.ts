// Finds the TypeScript code blocks of a Markdown document and the context each one declares.
//
// A block's context is an HTML comment on the lines right before its fence, invisible when the
// Markdown is rendered:
//
//   <!-- snippet: declare const db: Database; -->
//
// or, over several lines,
//
//   <!-- snippet:
//   import type { Database } from '@veridex/langgraph/db';
//   declare const db: Database;
//   -->
//
// Its text is placed before the block's code when the block is type-checked, so a block can use
// variables an earlier paragraph introduced without the reader seeing their declarations.

/** A line of a generated module and the line of the Markdown document it came from. */
export interface SourceLine {
  /** The text of the line. */
  text: string;
  /** Its 1-based line number in the Markdown document. */
  markdownLine: number;
}

/** One ```ts or ```tsx block, with the context its `<!-- snippet: ... -->` comment gives it. */
export interface Snippet {
  /** `ts` or `tsx`: the extension its module gets. */
  language: 'ts' | 'tsx';
  /** 1-based line number of the opening fence. */
  fenceLine: number;
  /** The lines of the comment's declarations (empty without a comment). */
  context: SourceLine[];
  /** The lines of the block, indentation of the fence removed. */
  code: SourceLine[];
}

/** A Markdown construct the extractor refuses, so that no block goes unchecked by accident. */
export interface ExtractionProblem {
  markdownLine: number;
  message: string;
}

/** What {@link extractSnippets} found. */
export interface Extraction {
  snippets: Snippet[];
  problems: ExtractionProblem[];
}

const CHECKED_LANGUAGES: Readonly<Record<string, Snippet['language']>> = {
  ts: 'ts',
  typescript: 'ts',
  tsx: 'tsx',
};
const OPENING_FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;
const CONTEXT_START = /^\s*<!--\s*snippet:/;

/**
 * Extracts every ```ts, ```typescript and ```tsx block of `markdown` with its context comment.
 * Other blocks (```sh, ```json, ...) are skipped. Reports, rather than ignores, a fence that
 * is never closed and a `<!-- snippet: -->` comment that is not followed by a checked block.
 */
export function extractSnippets(markdown: string): Extraction {
  const lines = markdown.split(/\r?\n/);
  const snippets: Snippet[] = [];
  const problems: ExtractionProblem[] = [];
  const contextComments = new Set<number>(); // 0-based first lines of the comments used

  for (let index = 0; index < lines.length; index++) {
    const opening = OPENING_FENCE.exec(lines[index] ?? '');
    if (!opening) continue;
    const [, indent = '', fence = '', info = ''] = opening;
    const close = findClosingFence(lines, index + 1, fence);
    if (close === undefined) {
      problems.push({ markdownLine: index + 1, message: 'code block is never closed' });
      break;
    }
    const language = CHECKED_LANGUAGES[info.toLowerCase()];
    if (language) {
      const context = contextBefore(lines, index);
      if (context) contextComments.add(context.firstLine);
      snippets.push({
        language,
        fenceLine: index + 1,
        context: context?.lines ?? [],
        code: lines.slice(index + 1, close).map((text, offset) => ({
          text: text.startsWith(indent) ? text.slice(indent.length) : text.trimStart(),
          markdownLine: index + 2 + offset,
        })),
      });
    }
    index = close;
  }

  lines.forEach((line, index) => {
    if (CONTEXT_START.test(line) && !contextComments.has(index)) {
      problems.push({
        markdownLine: index + 1,
        message: 'a <!-- snippet: --> comment must come right before a ```ts or ```tsx block',
      });
    }
  });
  return { snippets, problems };
}

/** The 0-based line of the fence that closes `fence` (same character, at least as long). */
function findClosingFence(lines: string[], from: number, fence: string): number | undefined {
  const closing = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
  for (let index = from; index < lines.length; index++) {
    if (closing.test(lines[index] ?? '')) return index;
  }
  return undefined;
}

/**
 * The `<!-- snippet: ... -->` comment that ends on the line just before the fence at
 * `fenceIndex`, as source lines with the comment markers removed.
 */
function contextBefore(
  lines: string[],
  fenceIndex: number,
): { firstLine: number; lines: SourceLine[] } | undefined {
  const last = fenceIndex - 1;
  if (!(lines[last] ?? '').trimEnd().endsWith('-->')) return undefined;
  let first = last;
  while (first >= 0 && !(lines[first] ?? '').includes('<!--')) first--;
  if (first < 0 || !CONTEXT_START.test(lines[first] ?? '')) return undefined;

  const body: SourceLine[] = [];
  for (let index = first; index <= last; index++) {
    let text = lines[index] ?? '';
    if (index === first) text = text.replace(CONTEXT_START, '');
    if (index === last) text = text.replace(/-->\s*$/, '');
    if (text.trim() !== '') body.push({ text, markdownLine: index + 1 });
  }
  return { firstLine: first, lines: body };
}
