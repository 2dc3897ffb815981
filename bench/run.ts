// `npm run bench [-- name ...]`: runs the named benchmarks (default: all) in one process,
// printing human lines and one machine-readable `RESULT <name> key=value ...` line each.
const BENCHES = [
  'approvals',
  'evidence',
  'checkpointer',
  'checkpointer-cpu',
  'toolnode',
  'sandbox',
  'egress',
  'context',
  'memory',
  'interop',
  'sanitize',
] as const;

const requested = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = requested.filter((name) => !(BENCHES as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${BENCHES.join(', ')}.`);
  process.exit(2);
}
for (const name of requested.length > 0 ? requested : BENCHES) {
  console.log(`\n== ${name} ==`);
  const module = (await import(`./${name}.bench.ts`)) as { run(): Promise<void> };
  await module.run();
}
