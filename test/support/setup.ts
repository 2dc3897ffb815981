// Runs before every test file. Make a missing PostgreSQL visible rather than silent.
if (!process.env.DATABASE_URL && process.env.CI !== 'true' && !process.env.VERIDEX_QUIET_SKIP) {
  process.env.VERIDEX_QUIET_SKIP = '1';
  console.warn(
    '\n[veridex] DATABASE_URL is not set: PostgreSQL suites are skipped, PGlite suites run. ' +
      'Set DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run both.\n',
  );
}

// Every process of a test run — workers and the `veridex` children they start in other working
// directories — seals and checks approver directory rows with one directory key, as the
// processes of one deployment share theirs (README "Approver directory").
if (!process.env.VERIDEX_DIRECTORY_KEY) {
  process.env.VERIDEX_DIRECTORY_KEY = new URL(
    '../../.veridex/keys/directory-ed25519.key',
    import.meta.url,
  ).pathname;
}
