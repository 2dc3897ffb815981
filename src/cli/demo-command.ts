import { DemoDeviation } from './demo/narrator.js';
import { runTreasuryDemo } from './demo/treasury-demo.js';
import { type CliIo, EXIT } from './io.js';

export const DEMO_USAGE = `Usage: veridex demo

Runs the treasury payout scenario end to end on embedded PGlite in ./.veridex: no server,
no keys (a scripted model unless OPENAI_API_KEY is set). Exits 1 if any step deviates.`;

/** `veridex demo`: the treasury scenario; exit code 1 on any deviation from the story. */
export async function demoCommand(_argv: string[], io: CliIo): Promise<number> {
  try {
    await runTreasuryDemo(io);
    io.out('');
    io.out('Demo complete: every step behaved as promised.');
    return EXIT.ok;
  } catch (error) {
    if (error instanceof DemoDeviation) {
      io.err(`\nDEVIATION: ${error.message}`);
      return EXIT.failed;
    }
    throw error;
  }
}
