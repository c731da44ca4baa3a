// A build-time rewrite of node-cron 4's dist/_shared.js for the bundled CLI (scripts/bundle.mjs): for the time zone
// "UTC" its date parts come from Date's UTC getters instead of an Intl.DateTimeFormat.
//
// Why: node-cron computes every date through Intl.DateTimeFormat(...).formatToParts, whatever the zone. The first
// Intl formatter a process builds maps ICU's data into memory: +8.6 MiB resident for the daemon's whole life
// (measured: a node process with and without node-cron's two UTC formatters, 39.8 against 48.4 MiB), for the one
// job it schedules, the 00:00 UTC roll-over (BENCHMARKS.md, memory). In UTC the parts need no time zone data: the
// year, month, day, hour, minute and second are the UTC getters', the weekday en-US's short name of getUTCDay(), the
// offset "Z". Other zones are left to Intl. test/deploy/node-cron-utc.test.ts compares the rewritten module with
// node-cron's own over many dates and expressions, and checks that it builds no Intl formatter for UTC.

import { replaceExactly } from "./replace-exactly.mjs";

/** In UTC the parts from Date's UTC getters (en-US's short weekday, offset Z), shaped as buildDateParts returns them. */
const UTC_DATE_PARTS = `const UTC_WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
function utcDateParts(date) {
    return {
        day: date.getUTCDate(),
        month: date.getUTCMonth() + 1,
        year: date.getUTCFullYear(),
        hour: date.getUTCHours(),
        minute: date.getUTCMinutes(),
        second: date.getUTCSeconds(),
        millisecond: date.getMilliseconds(),
        weekday: UTC_WEEKDAYS[date.getUTCDay()],
        gmt: 'Z',
    };
}
`;

/** node-cron's _shared.js with the UTC shortcut in buildDateParts and getTimezoneGMT. */
export function nodeCronUtcWithoutIntl(source, file = "node-cron/dist/_shared.js") {
  return replaceExactly("node-cron-utc", source, file, [
    [
      "function buildDateParts(date, timezone) {\n",
      `${UTC_DATE_PARTS}function buildDateParts(date, timezone) {\n    if (timezone === 'UTC') return utcDateParts(date);\n`,
      1,
    ],
    [
      "function getTimezoneGMT(date, timezone) {\n",
      "function getTimezoneGMT(date, timezone) {\n    if (timezone === 'UTC') return 'Z';\n",
      1,
    ],
  ]);
}
