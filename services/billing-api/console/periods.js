// Billing periods are calendar months in the price book's timezone; the API names instants in
// UTC. An invoiced month's bounds are the invoice's own `period`; any other month's are
// found from the open period's (`GET /v1/cost/current`): its start is local midnight of the
// 1st, so start minus UTC midnight of the 1st is the price book's offset from UTC. (A zone
// with daylight saving time can be an hour off in months of the other season.)

const LABEL = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function isLabel(text) {
  return typeof text === 'string' && LABEL.test(text);
}

/** The UTC instant as the API writes them: "2026-10-31T16:00:00Z". */
export function iso(ms) {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function utcStart(label) {
  const m = LABEL.exec(label);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, 1);
}

/** "2026-11" moved by n months. */
export function shift(label, n) {
  const d = new Date(utcStart(label));
  d.setUTCMonth(d.getUTCMonth() + n);
  return d.toISOString().slice(0, 7);
}

/** The month (UTC) of the browser's clock, less `back` months. */
export function thisMonth(back = 0) {
  return shift(new Date().toISOString().slice(0, 7), -back);
}

/** An invoice's period label: the UTC month of its period's middle (a month is longer than
 * any UTC offset, so the middle lies inside it wherever the price book's zone is). */
export function labelOf(invoice) {
  const p = invoice.period || {};
  const mid = (Date.parse(p.start) + Date.parse(p.end)) / 2;
  return Number.isNaN(mid) ? null : new Date(mid).toISOString().slice(0, 7);
}

/** The price book's offset (ms) from the open period, 0 when there is none. */
export function offsetOf(cost) {
  const start = cost?.invoice?.period?.start;
  if (!start || !isLabel(cost.period_label)) {
    return 0;
  }
  return utcStart(cost.period_label) - Date.parse(start);
}

/** [from, to) of a month as RFC 3339 UTC texts. */
export function bounds(label, invoices, offsetMs) {
  const invoiced = (invoices || []).find((i) => i.kind === 'invoice' && labelOf(i) === label);
  if (invoiced) {
    return { from: invoiced.period.start, to: invoiced.period.end };
  }
  return {
    from: iso(utcStart(label) - offsetMs),
    to: iso(utcStart(shift(label, 1)) - offsetMs),
  };
}
