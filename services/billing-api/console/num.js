// Exact decimal arithmetic on the API's decimal strings. Money and quantities come as strings
// ("806.85", "2250", "0.25") and every figure the console shows is computed from them with
// BigInt, never with floating point: a total on a page equals the API's to the last digit.
// Floats appear only in what the charts draw (toNumber).

const GRAMMAR = /^(-?)(\d+)(?:\.(\d+))?$/;

/** "-12.340" -> { units: -12340n, scale: 3 } */
function parse(text) {
  const m = GRAMMAR.exec(String(text).trim());
  if (!m) {
    throw new Error(`not a decimal: ${JSON.stringify(text)}`);
  }
  const frac = m[3] || '';
  const units = BigInt(m[2] + frac);
  return { units: m[1] === '-' ? -units : units, scale: frac.length };
}

function rescale(d, scale) {
  return d.units * 10n ** BigInt(scale - d.scale);
}

function format(units, scale) {
  const negative = units < 0n;
  let digits = (negative ? -units : units).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return (negative ? '-' : '') + digits;
}

/** Without trailing zeros: "21650.000" -> "21650", "0.250" -> "0.25", "-0" -> "0". */
export function normalize(text) {
  const d = parse(text);
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return format(units, scale);
}

/** The exact sum of decimal strings, normalized ("0" for none). */
export function sum(list) {
  let units = 0n;
  let scale = 0;
  for (const text of list) {
    const d = parse(text);
    if (d.scale > scale) {
      units *= 10n ** BigInt(d.scale - scale);
      scale = d.scale;
    }
    units += rescale(d, scale);
  }
  return normalize(format(units, scale));
}

/** a - b, normalized. */
export function sub(a, b) {
  const d = parse(b);
  return sum([a, format(-d.units, d.scale)]);
}

/** -1, 0 or 1. */
export function cmp(a, b) {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const l = rescale(x, scale);
  const r = rescale(y, scale);
  return l < r ? -1 : l > r ? 1 : 0;
}

/** Whether two decimal strings are the same number ("21650.0" and "21650" are). */
export function same(a, b) {
  return cmp(a, b) === 0;
}

/** text / divisor (a positive integer), rounded half away from zero to `places` decimals. */
export function divRound(text, divisor, places) {
  const d = parse(text);
  const div = BigInt(divisor);
  // units / 10^scale / div, to `places`: (units * 10^places) / (10^scale * div), rounded.
  const num = d.units * 10n ** BigInt(places);
  const den = 10n ** BigInt(d.scale) * div;
  const negative = num < 0n;
  const abs = negative ? -num : num;
  let q = abs / den;
  if ((abs % den) * 2n >= den) {
    q += 1n;
  }
  return format(negative ? -q : q, places);
}

/** Unit-seconds as unit-hours with two decimals, for reading ("7200" -> "2.00"). */
export function hours(unitSeconds) {
  return divRound(unitSeconds, 3600, 2);
}

/** For drawing only: a float. */
export function toNumber(text) {
  return Number(text);
}
