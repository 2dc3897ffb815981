// Runs before every test file. Make a missing PostgreSQL visible rather than silent.
if (!process.env.DATABASE_URL && process.env.CI !== 'true' && !process.env.VERIDEX_QUIET_SKIP) {
  process.env.VERIDEX_QUIET_SKIP = '1';
  console.warn(
    '\n[veridex] DATABASE_URL is not set: PostgreSQL suites are skipped, PGlite suites run. ' +
      'Set DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run both.\n',
  );
}
