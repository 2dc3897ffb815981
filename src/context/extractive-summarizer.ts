import type { BaseMessage } from '@langchain/core/messages';
import type { SummarizeRequest, Summarizer } from './summarizer.js';
import { transcriptLine } from './summarizer.js';

/** Options for {@link extractiveSummarizer}. */
export interface ExtractiveSummarizerOptions {
  /** Each message becomes one line clipped to this many characters. Default 200. */
  maxLineCharacters?: number;
}

/**
 * The offline default summariser: no model call, deterministic, fast. It keeps the task (the
 * span's first user message) and then as many of the most recent messages as fit, one clipped
 * line each (`User: …`, `Assistant called lookup({…})`, `Tool lookup: …`), marking what it
 * left out. An earlier summary keeps at most half of the budget, so new turns always show.
 * It extracts rather than abstracts: use {@link llmSummarizer} for a real digest.
 *
 * @example new ContextCompiler({ model: 'gpt-4o', summarizer: extractiveSummarizer({ maxLineCharacters: 120 }) })
 */
export function extractiveSummarizer(options: ExtractiveSummarizerOptions = {}): Summarizer {
  const maxLineCharacters = options.maxLineCharacters ?? 200;
  return {
    id: `extractive/v1/${maxLineCharacters}`,
    summarize: async (request) => summarizeExtractively(request, maxLineCharacters),
  };
}

function summarizeExtractively(request: SummarizeRequest, maxLineCharacters: number): string {
  const { messages, previousSummary, maxTokens, countTokens } = request;
  const lineCost = (line: string) => countTokens(line) + 1;
  const lines: string[] = [];
  let used = 0;
  if (previousSummary) {
    const earlier = fitLines(previousSummary.split('\n'), Math.floor(maxTokens / 2), lineCost);
    lines.push(...earlier.lines);
    used += earlier.tokens;
  } else {
    const task = messages.find((message) => message.getType() === 'human');
    if (task) {
      const line = `Task: ${transcriptLine(task, maxLineCharacters).slice('User: '.length)}`;
      const cost = lineCost(line);
      if (cost <= maxTokens) {
        lines.push(line);
        used += cost;
      }
    }
  }
  const recent = newestLinesThatFit(messages, maxTokens - used, maxLineCharacters, lineCost);
  lines.push(...recent);
  return lines.join('\n');
}

/** The newest messages' lines (in chronological order) within `budget`, with an omission marker. */
function newestLinesThatFit(
  messages: readonly BaseMessage[],
  budget: number,
  maxLineCharacters: number,
  lineCost: (line: string) => number,
): string[] {
  const picked: string[] = [];
  let remaining = budget;
  let index = messages.length - 1;
  for (; index >= 0; index--) {
    const line = transcriptLine(messages[index]!, maxLineCharacters);
    const cost = lineCost(line);
    if (cost > remaining) break;
    picked.push(line);
    remaining -= cost;
  }
  if (index >= 0) {
    const marker = `… (${index + 1} earlier messages omitted)`;
    // Make room for the marker by giving up the oldest picked lines.
    while (picked.length > 0 && lineCost(marker) > remaining) {
      remaining += lineCost(picked.pop()!);
      index += 1;
    }
    const finalMarker = `… (${index + 1} earlier messages omitted)`;
    if (lineCost(finalMarker) <= remaining) picked.push(finalMarker);
  }
  return picked.reverse();
}

/** The first line and as many of the last lines as fit in `budget`. */
function fitLines(
  lines: readonly string[],
  budget: number,
  lineCost: (line: string) => number,
): { lines: string[]; tokens: number } {
  const kept: string[] = [];
  let tokens = 0;
  const first = lines[0];
  if (first !== undefined && lineCost(first) <= budget) {
    kept.push(first);
    tokens += lineCost(first);
  }
  const tail: string[] = [];
  for (let index = lines.length - 1; index >= 1; index--) {
    const cost = lineCost(lines[index]!);
    if (tokens + cost > budget) break;
    tail.push(lines[index]!);
    tokens += cost;
  }
  return { lines: [...kept, ...tail.reverse()], tokens };
}
