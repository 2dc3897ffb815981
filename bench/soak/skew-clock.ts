// Preloaded (`node --import`) into the approver process that runs with a wrong clock: every
// `new Date()` and `Date.now()` in the process is off by SOAK_SKEW_MS, as on a machine whose
// clock drifted. Timers and `performance.now()` are unaffected, as they would be.
const skewMs = Number(process.env.SOAK_SKEW_MS ?? 0);

if (Number.isFinite(skewMs) && skewMs !== 0) {
  const RealDate = Date;
  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + skewMs);
      else super(...(args as [string | number | Date]));
    }

    static override now(): number {
      return RealDate.now() + skewMs;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
}
