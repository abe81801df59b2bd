// An esbuild plugin of scripts/bundle.mjs: node-cron reads the time of a UTC schedule (the
// member's heartbeat, src/announce/heartbeat.ts) from the Date's UTC fields instead of from
// Intl.DateTimeFormat.
//
// node-cron builds every date it matches through `new Intl.DateTimeFormat('en-US', ...)`, with
// or without a time zone. The first DateTimeFormat of a process makes ICU open its locale,
// calendar and time zone data: ~6.5 MiB of the node binary's pages (the embedded ICU data)
// become resident, and ~8 MiB of RSS in all (a bare `node`, measured with /proc/self/status),
// for good. That was most of the member's RSS above Antrea's member (issue 31; the leader has
// no cron). For the time zone 'UTC' in 'en-US' the answer needs no data at all: the same parts
// (weekday, month, day, year, hour, minute, second; the offset "GMT") come from getUTC*(). Any
// other time zone, locale or option still goes to Intl.
//
// The source is patched where node-cron constructs its two formatters; when node-cron changes
// so that they are not found, the build fails rather than bundle a cron that would silently
// load ICU again.

/** The module of node-cron's ES build (the bundle's: its package is `"type": "module"`) that holds its formatters. */
const NODE_CRON_SHARED = /[\\/]node_modules[\\/]node-cron[\\/]dist[\\/]_shared\.js$/;
const CONSTRUCT = "new Intl.DateTimeFormat('en-US',";
/** How many formatters node-cron 4.x constructs: the date parts and the zone's offset. */
const EXPECTED = 2;

/**
 * The stand-in's source, prepended to node-cron's module: `utcDateTimeFormat(locale, options)`
 * answers formatToParts() for 'en-US' in 'UTC' with exactly the options node-cron passes, and
 * returns a real Intl.DateTimeFormat for anything else.
 */
export const UTC_DATE_TIME_FORMAT = `
const __csaWeekdays = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const __csaPad2 = (n) => String(n).padStart(2, '0');
const __csaPartsOptions = 'year=numeric,month=2-digit,day=2-digit,hour=2-digit,minute=2-digit,second=2-digit,weekday=short,hour12=false,timeZone=UTC';
const __csaOffsetOptions = 'timeZone=UTC,timeZoneName=shortOffset';
function __csaUtcDateTimeFormat(locale, options) {
  const key = Object.entries(options).map(([k, v]) => k + '=' + String(v)).join(',');
  if (locale !== 'en-US' || (key !== __csaPartsOptions && key !== __csaOffsetOptions)) return new Intl.DateTimeFormat(locale, options);
  if (key === __csaOffsetOptions) {
    return { formatToParts: (date) => [
      { type: 'month', value: String(date.getUTCMonth() + 1) }, { type: 'literal', value: '/' },
      { type: 'day', value: String(date.getUTCDate()) }, { type: 'literal', value: '/' },
      { type: 'year', value: String(date.getUTCFullYear()) }, { type: 'literal', value: ', ' },
      { type: 'timeZoneName', value: 'GMT' },
    ] };
  }
  return { formatToParts: (date) => [
    { type: 'weekday', value: __csaWeekdays[date.getUTCDay()] }, { type: 'literal', value: ', ' },
    { type: 'month', value: __csaPad2(date.getUTCMonth() + 1) }, { type: 'literal', value: '/' },
    { type: 'day', value: __csaPad2(date.getUTCDate()) }, { type: 'literal', value: '/' },
    { type: 'year', value: String(date.getUTCFullYear()) }, { type: 'literal', value: ', ' },
    { type: 'hour', value: __csaPad2(date.getUTCHours()) }, { type: 'literal', value: ':' },
    { type: 'minute', value: __csaPad2(date.getUTCMinutes()) }, { type: 'literal', value: ':' },
    { type: 'second', value: __csaPad2(date.getUTCSeconds()) },
  ] };
}
`;

/** Files the plugin patched, for scripts/bundle.mjs to check that node-cron's was among them. */
export const patched = new Set();

export const cronUtcWithoutIcu = {
  name: 'cron-utc-without-icu',
  setup(b) {
    b.onLoad({ filter: NODE_CRON_SHARED }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(args.path, 'utf8');
      const found = source.split(CONSTRUCT).length - 1;
      if (found !== EXPECTED) {
        throw new Error(`cron-utc-without-icu: ${args.path} constructs ${String(found)} formatters as ${JSON.stringify(CONSTRUCT)}, not ${String(EXPECTED)}: node-cron changed, see scripts/cron-utc-without-icu.mjs`);
      }
      patched.add(args.path);
      return { contents: UTC_DATE_TIME_FORMAT + source.replaceAll(CONSTRUCT, "__csaUtcDateTimeFormat('en-US',"), loader: 'js' };
    });
  },
};
