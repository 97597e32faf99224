/**
 * RFC 3339 timestamps in UTC, computed from milliseconds with arithmetic
 * alone. `Date.prototype.toISOString` gives the same text, but its first call
 * makes V8 set up its date cache and time zone machinery: 1.2 to 1.5 MiB of
 * the `deno` executable's pages become resident (an idle program holding one
 * listener, RSS averaged over three runs) in a process whose log lines,
 * Events, Leases and conditions need nothing but the UTC fields.
 *
 * @example
 * ```ts
 * import { rfc3339 } from "./_rfc3339.ts";
 * rfc3339(0, 3); // "1970-01-01T00:00:00.000Z"
 * rfc3339(1_764_120_638_787, 0); // "2025-11-26T01:30:38Z"
 * rfc3339(1_764_120_638_787, 6); // "2025-11-26T01:30:38.787000Z"
 * ```
 *
 * @module
 */

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the years written with four digits. */
const MIN_MS = -62_167_219_200_000;
const MAX_MS = 253_402_300_799_999;

/**
 * `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, with
 * `fractionDigits` digits after the seconds (none for 0): what
 * `new Date(ms).toISOString()` writes for 3, the API server's `metav1.Time`
 * for 0 and its `metav1.MicroTime` for 6 (milliseconds followed by zeros).
 * Fractions of a millisecond are dropped, as `Date` drops them.
 *
 * @throws {RangeError} when `ms` is not a finite time between the years 0 and 9999.
 */
export function rfc3339(ms: number, fractionDigits: 0 | 3 | 6): string {
  if (!(ms >= MIN_MS && ms <= MAX_MS)) {
    throw new RangeError(
      `Cannot format a timestamp: expected milliseconds between the years 0 and 9999, got ${ms}`,
    );
  }
  const whole = Math.trunc(ms);
  const days = Math.floor(whole / DAY_MS);
  const inDay = whole - days * DAY_MS;
  // Howard Hinnant's civil_from_days: eras of 400 years starting on March 1st.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra -
    (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const seconds = Math.floor(inDay / 1000);
  const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${
    pad(Math.floor(seconds / 3600), 2)
  }:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`;
  if (fractionDigits === 0) return `${text}Z`;
  const millis = pad(inDay % 1000, 3);
  return `${text}.${fractionDigits === 3 ? millis : `${millis}000`}Z`;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}
