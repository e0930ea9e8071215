// The customer's pages: overview (usage and cost as charts), balance, quota decisions,
// invoices. Every figure comes from the API answer of the route named beside it and carries a
// data-testid; totals are summed exactly (num.js) from the same answer the chart draws.

import * as api from './api.js';
import { ApiError } from './api.js';
import * as charts from './charts.js';
import { card, figure, h, row, table, when } from './dom.js';
import { t } from './i18n.js';
import * as num from './num.js';
import { bounds, isLabel, labelOf, offsetOf, shift, thisMonth } from './periods.js';

/** Most usage pages one chart follows (`next_group_after`, `next_from`). */
const MAX_USAGE_PAGES = 200;
/** Groups drawn one by one; the rest are drawn together as "other". */
const MAX_DRAWN_GROUPS = 12;
const STEP_SECONDS = { hour: 3600, day: 86_400 };

/** A failed secondary answer is shown where its figures would be (a 401 ends the session). */
export function keep(e) {
  if (e instanceof ApiError && e.status !== 401) {
    return e;
  }
  throw e;
}

export function failed(v) {
  return v instanceof ApiError;
}

export function errorNote(e, testid = 'section-error') {
  return h('p', { class: 'error', testid }, `${t('error.api')} ${e.status || ''} ${e.message}`);
}

function choice(value, allowed, fallback) {
  return allowed.includes(value) ? value : fallback;
}

/** Whether an invoice (or the open period's) has metered usage: a unit-seconds line. */
function hasUsage(inv) {
  return inv.lines.some((l) => l.unit === 'unit_seconds' && num.cmp(l.quantity, '0') > 0);
}

/** The month shown first: the open period when it has usage, else the last invoiced month
 * that had some, else the open period. */
function defaultPeriod(cost, invoices) {
  const open = failed(cost) ? null : cost;
  if (open && hasUsage(open.invoice)) {
    return open.period_label;
  }
  const labels = invoices
    .filter((i) => i.kind === 'invoice' && hasUsage(i))
    .map(labelOf)
    .filter(Boolean)
    .sort();
  if (labels.length > 0) {
    return labels[labels.length - 1];
  }
  return open?.period_label || thisMonth();
}

/**
 * Every bucket of `GET /v1/usage` for [from, to): follows `next_group_after` within a window
 * and `next_from` across windows. A bucket is set, not added, so a bucket answered twice
 * (group pages of one window may end at different times) counts once.
 */
export async function fetchUsage({ from, to, granularity, groupBy, family }) {
  const cells = new Map(); // group -> Map(start -> unit_seconds)
  let answeredFrom = null;
  let cursor = from;
  let pages = 0;
  while (cursor) {
    let groupAfter = null;
    let windowEnd = null;
    let next = null;
    do {
      pages += 1;
      if (pages > MAX_USAGE_PAGES) {
        throw new ApiError(0, 'too_many_pages', t('usage.too_many_pages'));
      }
      const q = new URLSearchParams({ from: cursor, to, granularity, group_by: groupBy, group_limit: '1000' });
      if (groupAfter) {
        q.set('group_after', groupAfter);
      }
      if (family) {
        q.set('family', family);
      }
      const a = await api.get(`/v1/usage?${q}`);
      answeredFrom = answeredFrom || a.from;
      for (const g of a.groups) {
        let series = cells.get(g.key);
        if (!series) {
          series = new Map();
          cells.set(g.key, series);
        }
        for (const b of g.buckets) {
          series.set(b.start, b.unit_seconds);
        }
      }
      if (windowEnd === null || Date.parse(a.to) < Date.parse(windowEnd)) {
        windowEnd = a.to;
        next = a.next_from;
      }
      groupAfter = a.next_group_after;
    } while (groupAfter);
    cursor = next;
  }
  return { from: answeredFrom || from, to, cells };
}

function bucketLabel(startIso, granularity) {
  return granularity === 'day' ? startIso.slice(5, 10) : startIso.slice(5, 16).replace('T', ' ');
}

/** An sku's family: its name up to the first `.` (billing_core::prices::sku_family). */
export function familyOf(sku) {
  return String(sku).split('.')[0];
}

/** What one unit-hour of a family is (billing_core::prices::sku_unit): GPUs in cards,
 * storage in GB, any other family in its own units. */
export function unitOf(family) {
  return family === 'gpu' ? 'card_hour' : family === 'storage' ? 'gb_hour' : 'unit_hour';
}

/** The chart's categories and series, and the exact totals, from one usage answer. */
export function usageSeries(usage, granularity) {
  const step = STEP_SECONDS[granularity] * 1000;
  const starts = [];
  for (let at = Date.parse(usage.from); at < Date.parse(usage.to); at += step) {
    starts.push(new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  }
  const groups = [...usage.cells.entries()].map(([key, series]) => ({
    key,
    series,
    total: num.sum(series.values()),
  }));
  groups.sort((a, b) => num.cmp(b.total, a.total) || (a.key < b.key ? -1 : 1));
  const drawn = groups.slice(0, MAX_DRAWN_GROUPS);
  const rest = groups.slice(MAX_DRAWN_GROUPS);
  const values = (series) => starts.map((s) => num.toNumber(series.get(s) || '0') / 3600);
  const series = drawn.map((g) => ({ name: g.key, values: values(g.series) }));
  if (rest.length > 0) {
    series.push({
      name: t('usage.other', { n: rest.length }),
      values: starts.map((s) => rest.reduce((acc, g) => acc + num.toNumber(g.series.get(s) || '0') / 3600, 0)),
    });
  }
  return {
    categories: starts.map((s) => bucketLabel(s, granularity)),
    series,
    groups,
    total: num.sum(groups.map((g) => g.total)),
  };
}

function select(testid, value, options, onchange) {
  return h(
    'select',
    { testid, onchange },
    options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)),
  );
}

function usageCard(ctx, { period, granularity, groupBy, usage, units }) {
  const go = (changes) => {
    const q = new URLSearchParams({ period, granularity, group_by: groupBy, ...changes });
    ctx.navigate(`#/overview?${q}`);
  };
  const controls = h(
    'div',
    { class: 'controls' },
    h('button', { type: 'button', class: 'ghost', testid: 'usage-prev', title: t('usage.prev'), onclick: () => go({ period: shift(period, -1) }) }, '‹'),
    h('label', null, h('span', null, t('usage.period')), h('input', {
      type: 'month',
      testid: 'usage-period',
      value: period,
      required: true,
      onchange: (e) => isLabel(e.target.value) && go({ period: e.target.value }),
    })),
    h('button', { type: 'button', class: 'ghost', testid: 'usage-next', title: t('usage.next'), onclick: () => go({ period: shift(period, 1) }) }, '›'),
    h('label', null, h('span', null, t('usage.granularity')), select('usage-granularity', granularity, [
      ['hour', t('usage.hour')],
      ['day', t('usage.day')],
    ], (e) => go({ granularity: e.target.value }))),
    h('label', null, h('span', null, t('usage.group_by')), select('usage-group-by', groupBy, [
      ['sku', t('usage.sku')],
      ['lease', t('usage.lease')],
      ['resource', t('usage.resource')],
    ], (e) => go({ group_by: e.target.value }))),
  );
  if (failed(usage)) {
    return card(t('usage.title'), controls, errorNote(usage, 'usage-error'));
  }
  if (failed(units)) {
    return card(t('usage.title'), controls, errorNote(units, 'usage-error'));
  }
  // One chart per unit (issue 24.12): a family's unit-hours never stack on another's.
  const sections = units.map((u) => {
    const drawn = usageSeries(u.usage, granularity);
    const unitName = t(`usage.unit.${u.unit}`);
    const title = `${t(`family.${u.family}`, null, u.family)} · ${unitName}`;
    const chartEl = h('div', { class: 'chart tall', testid: 'usage-chart', 'data-family': u.family, 'data-unit': u.unit, role: 'img', 'aria-label': `${t('usage.title')}: ${title}` });
    ctx.later(() => charts.usageChart(chartEl, drawn, unitName));
    const rows = drawn.groups.map((g) =>
      row({ testid: 'usage-group-row', 'data-group': g.key, 'data-family': u.family }, [
        g.key,
        [{ class: 'num', testid: 'usage-group-hours' }, num.hours(g.total)],
        [{ class: 'num', testid: 'usage-group-seconds' }, g.total],
      ]),
    );
    return h(
      'div',
      { class: 'unit-usage', testid: 'usage-unit', 'data-family': u.family, 'data-unit': u.unit },
      h('h3', null, title),
      h(
        'div',
        { class: 'figures' },
        figure(t('usage.unit_total', { unit: unitName }), num.hours(drawn.total), 'usage-unit-hours'),
        figure(t('usage.total_seconds'), drawn.total, 'usage-unit-seconds'),
        figure(t('usage.groups'), String(drawn.groups.length), 'usage-unit-groups'),
      ),
      chartEl,
      h('details', { class: 'groups' }, h('summary', null, t('usage.by_group')),
        table([t(`usage.${groupBy}`), [{ class: 'num' }, unitName], [{ class: 'num' }, t('usage.unit_seconds')]], rows, { testid: 'usage-groups-table' })),
    );
  });
  return card(
    t('usage.title'),
    controls,
    h(
      'div',
      { class: 'figures' },
      figure(t('usage.units'), String(units.length), 'usage-units'),
      figure(t('usage.range'), `${when(usage.from)} – ${when(usage.to)}`, 'usage-range', t('usage.utc_note')),
    ),
    h('span', { hidden: true, testid: 'usage-range-raw', 'data-from': usage.from, 'data-to': usage.to }),
    units.length === 0 ? h('p', { class: 'muted', testid: 'usage-empty' }, t('usage.empty')) : null,
    sections,
  );
}

function linesTable(lines, testid) {
  const rows = lines.map((l) =>
    row({ testid }, [
      t(`component.${l.component}`, null, l.component),
      l.sku || l.dest || '',
      [{ class: 'num' }, String(l.tier)],
      [{ class: 'num' }, l.multiplier || ''],
      [{ class: 'num' }, l.quantity],
      t(`unit.${l.unit}`, null, l.unit),
      [{ class: 'num', testid: `${testid}-amount` }, l.amount],
    ]),
  );
  return table(
    [
      t('invoice.component'),
      t('invoice.item'),
      [{ class: 'num' }, t('invoice.tier')],
      [{ class: 'num' }, t('invoice.multiplier')],
      [{ class: 'num' }, t('invoice.quantity')],
      t('invoice.unit'),
      [{ class: 'num' }, t('invoice.amount')],
    ],
    rows,
  );
}

function totals(inv, prefix) {
  // Each figure says the invoice's own currency (a regional invoice's is its region's).
  const c = inv.currency;
  return h(
    'div',
    { class: 'figures compact' },
    figure(t('invoice.subtotal'), inv.subtotal, `${prefix}-subtotal`, c),
    figure(t('invoice.discount'), inv.discount, `${prefix}-discount`, c),
    figure(t('invoice.credit'), inv.credit, `${prefix}-credit`, c),
    figure(t('invoice.tax'), inv.tax, `${prefix}-tax`, c),
    figure(t('invoice.total'), inv.total, `${prefix}-total`, c),
  );
}

function costCard(ctx, cost, balance) {
  if (failed(cost)) {
    return card(t('cost.title'), errorNote(cost, 'cost-error'));
  }
  const inv = cost.invoice;
  const b = failed(balance) ? null : balance;
  const limit = b?.quotas?.spend_limit ?? null;
  const prepaid = b?.prepaid_balance ?? null;
  const bars = [{ name: t('cost.to_date'), value: num.toNumber(inv.total), color: '#2563eb' }];
  if (limit !== null) {
    bars.push({ name: t('cost.spend_limit'), value: num.toNumber(limit), color: '#dc2626' });
  }
  if (prepaid !== null) {
    bars.push({ name: t('cost.prepaid_balance'), value: num.toNumber(prepaid), color: '#16a34a' });
  }
  if (b?.available !== undefined && b?.available !== null) {
    bars.push({ name: t('cost.available'), value: num.toNumber(b.available), color: '#0891b2' });
  }
  const chartEl = h('div', { class: 'chart short', testid: 'cost-chart', role: 'img', 'aria-label': t('cost.title') });
  ctx.later(() => charts.moneyBars(chartEl, bars, inv.currency));
  const used = limit !== null ? `${inv.total} / ${limit}` : null;
  return card(
    t('cost.title'),
    h(
      'div',
      { class: 'figures' },
      figure(t('cost.to_date'), inv.total, 'cost-to-date', inv.currency),
      figure(t('cost.period'), cost.period_label, 'cost-period', `${t('cost.as_of')} ${when(cost.as_of)}`),
      figure(t('cost.spend_limit'), limit ?? t('cost.none'), 'spend-limit', used),
      figure(t('cost.prepaid_balance'), prepaid ?? t('cost.none'), 'prepaid-balance'),
      figure(t('cost.available'), b?.available ?? t('cost.none'), 'available'),
      figure(t('balance.wallet'), b ? b.wallet.balance : t('cost.none'), 'wallet-balance'),
    ),
    b ? null : errorNote(balance, 'balance-error'),
    chartEl,
    h('details', { class: 'groups' }, h('summary', null, t('cost.lines')), linesTable(inv.lines, 'cost-line'), totals(inv, 'cost')),
  );
}

function historyCard(ctx, cost, invoices) {
  // Home-region invoices only (issue 26): they share the home currency of the open period's
  // cost; a regional invoice is in its region's currency and never stacks on them.
  const bars = invoices
    .filter((i) => i.kind === 'invoice' && isHome(i))
    .map((i) => ({ name: labelOf(i), value: num.toNumber(i.total) }));
  // The open period, unless it is invoiced already (a close ahead of the server's clock).
  if (!failed(cost) && !bars.some((b) => b.name === cost.period_label)) {
    bars.push({ name: `${cost.period_label} (${t('cost.open')})`, value: num.toNumber(cost.invoice.total), color: '#94a3b8' });
  }
  const chartEl = h('div', { class: 'chart short', testid: 'cost-history-chart', role: 'img', 'aria-label': t('cost.history') });
  ctx.later(() => charts.columns(chartEl, bars, failed(cost) ? '' : cost.invoice.currency));
  return card(t('cost.history'), chartEl);
}

/** `#/overview?period=YYYY-MM&granularity=hour|day&group_by=sku|lease|resource` */
export async function overview(ctx) {
  const p = ctx.params;
  const granularity = choice(p.get('granularity'), ['hour', 'day'], 'hour');
  const groupBy = choice(p.get('group_by'), ['sku', 'lease', 'resource'], 'sku');
  const [cost, invoices, balance] = await Promise.all([
    api.get('/v1/cost/current').catch(keep),
    api.get('/v1/invoices'),
    api.get('/v1/balance').catch(keep),
  ]);
  const period = isLabel(p.get('period')) ? p.get('period') : defaultPeriod(cost, invoices);
  const { from, to } = bounds(period, invoices, failed(cost) ? 0 : offsetOf(cost));
  // By sku first: its groups name the families (units) there are; grouped by lease or
  // resource, each family's usage is asked for on its own (`family=`), as a lease's
  // GPU-seconds and its volume's GB-seconds never add up.
  const usage = await fetchUsage({ from, to, granularity, groupBy: 'sku' }).catch(keep);
  let units = [];
  if (!failed(usage)) {
    const families = [...new Set([...usage.cells.keys()].map(familyOf))].sort();
    units = await Promise.all(
      families.map(async (family) => ({
        family,
        unit: unitOf(family),
        usage:
          groupBy === 'sku'
            ? { ...usage, cells: new Map([...usage.cells].filter(([sku]) => familyOf(sku) === family)) }
            : await fetchUsage({ from, to, granularity, groupBy, family }),
      })),
    ).catch(keep);
  }
  return [
    h('h1', null, t('nav.overview')),
    usageCard(ctx, { period, granularity, groupBy, usage, units }),
    h('div', { class: 'two' }, costCard(ctx, cost, balance), historyCard(ctx, cost, invoices)),
  ];
}

/** The figures and tables of `GET /v1/balance` (a customer's own; the admin's `?account=`). */
export function balanceView(b) {
  const q = b.quotas || {};
  const quotaRows = [];
  const quotaRow = (name, key, value) =>
    quotaRows.push(row({ testid: 'quota-row', 'data-quota': key }, [name, [{ class: 'num', testid: 'quota-limit' }, value]]));
  if (q.spend_limit !== undefined) quotaRow(t('cost.spend_limit'), 'spend_limit', q.spend_limit);
  if (q.prepaid_balance !== undefined) quotaRow(t('cost.prepaid_balance'), 'prepaid_balance', q.prepaid_balance);
  for (const [sku, v] of Object.entries(q.gpu_hours || {})) quotaRow(`${t('quota.gpu_hours')} ${sku}`, `gpu_hours:${sku}`, v);
  for (const [sku, v] of Object.entries(q.max_concurrent || {})) quotaRow(`${t('quota.max_concurrent')} ${sku}`, `max_concurrent:${sku}`, v);
  if (q.warn_at !== undefined) quotaRow(t('quota.warn_at'), 'warn_at', q.warn_at);
  const none = (testid) => h('p', { class: 'muted', testid }, t('balance.none'));
  const section = (title, rows, head, testid) =>
    card(title, rows.length ? table(head, rows, { testid }) : none(`${testid}-none`));
  return [
    card(
      t('balance.title'),
      h(
        'div',
        { class: 'figures' },
        figure(t('balance.wallet'), b.wallet.balance, 'wallet-balance'),
        figure(t('balance.outstanding'), b.wallet.outstanding, 'wallet-outstanding'),
        figure(t('cost.prepaid_balance'), b.prepaid_balance ?? t('cost.none'), 'prepaid-balance'),
        figure(t('cost.available'), b.available ?? t('cost.none'), 'available'),
        figure(t('balance.held'), b.held, 'held'),
        figure(t('balance.period_cost'), b.period_cost, 'period-cost', b.period_label || ''),
        figure(t('balance.sla_credited'), b.sla_compensation_credited, 'sla-credited'),
        figure(t('balance.sla_left'), b.sla_compensation_left, 'sla-left'),
      ),
    ),
    section(t('balance.quotas'), quotaRows, [t('balance.quota'), [{ class: 'num' }, t('balance.limit')]], 'quotas-table'),
    section(
      t('balance.packages'),
      b.packages.map((p) =>
        row({ testid: 'package-row' }, [p.id, p.sku, [{ class: 'num' }, num.hours(p.remaining_unit_seconds)], `${when(p.from)} – ${when(p.to)}`]),
      ),
      [t('balance.id'), t('usage.sku'), [{ class: 'num' }, t('balance.remaining_hours')], t('balance.valid')],
      'packages-table',
    ),
    section(
      t('balance.credits'),
      b.credits.map((c) =>
        row({ testid: 'credit-row' }, [c.id || '—', [{ class: 'num' }, c.amount], [{ class: 'num' }, c.remaining], `${when(c.from)} – ${when(c.to)}`]),
      ),
      [t('balance.id'), [{ class: 'num' }, t('invoice.amount')], [{ class: 'num' }, t('balance.remaining')], t('balance.valid')],
      'credits-table',
    ),
    section(
      t('balance.subscriptions'),
      b.subscriptions.map((s) =>
        row({ testid: 'subscription-row', 'data-subscription': s.id, 'data-next-cycle': s.next_cycle_start || '' }, [
          s.id,
          s.sku,
          s.current_cycle === null ? '—' : String(s.current_cycle),
          s.cycle_start === null ? '—' : `${when(s.cycle_start)} – ${when(s.cycle_end)}`,
          // Section 17: a plan that renews has no count; one with `end` stops there.
          [{ class: 'num' }, s.auto_renew ? t('balance.renews') : `${s.cycles_left} / ${s.cycles}`],
          [{ testid: 'subscription-next' }, s.next_cycle_start ? `${when(s.next_cycle_start)}${s.auto_renew ? ` (${t('balance.renewal')})` : ''}` : s.end ? `${t('balance.ends')} ${when(s.end)}` : '—'],
          [{ class: 'num', testid: 'subscription-refund' }, s.refund === 'prorata' ? s.refund_if_ended_now : t('balance.no_refund')],
        ]),
      ),
      [
        t('balance.id'),
        t('usage.sku'),
        t('balance.cycle'),
        t('balance.cycle_dates'),
        [{ class: 'num' }, t('balance.cycles_left')],
        t('balance.next_cycle'),
        [{ class: 'num' }, t('balance.refund_if_ended')],
      ],
      'subscriptions-table',
    ),
    section(
      t('balance.holds'),
      b.holds.map((x) =>
        row({ testid: 'hold-row' }, [x.id, x.sku, x.lease || '—', [{ class: 'num' }, x.amount], when(x.expires_at_ms / 1000)]),
      ),
      [t('balance.id'), t('usage.sku'), t('usage.lease'), [{ class: 'num' }, t('invoice.amount')], t('balance.expires')],
      'holds-table',
    ),
    section(
      t('balance.movements'),
      b.wallet.movements.map((m) =>
        row({ testid: 'movement-row' }, [String(m.seq), when(m.at), t(`movement.${m.kind}`, null, m.kind), [{ class: 'num' }, m.amount], m.reference, m.document_id || '']),
      ),
      ['#', t('balance.at'), t('balance.kind'), [{ class: 'num' }, t('invoice.amount')], t('balance.reference'), t('balance.document')],
      'movements-table',
    ),
  ];
}

/** `#/balance` */
export async function balance() {
  const b = await api.get('/v1/balance');
  return [h('h1', null, t('nav.balance')), balanceView(b)];
}

/** Rows of quota decisions (customer: its own; admin: `account` may name one). */
export function decisionRows(list) {
  return list.map((d) =>
    row({ testid: 'decision-row', 'data-kind': d.kind }, [
      when(d.at_ms / 1000),
      d.account,
      d.quota,
      d.period,
      [{ class: `kind ${d.kind}` }, t(`decision.${d.kind}`, null, d.kind)],
      [{ class: 'num' }, d.used],
      [{ class: 'num' }, d.limit],
    ]),
  );
}

export function decisionsTable(first, query) {
  const body = h('tbody', null, decisionRows(first.decisions));
  let after = first.next_after;
  const more = h('button', {
    type: 'button',
    class: 'ghost',
    testid: 'decisions-more',
    hidden: after === null || after === undefined,
    onclick: async () => {
      const next = await api.get(`/v1/quota/decisions?${new URLSearchParams({ ...query, after: String(after) })}`);
      body.append(...decisionRows(next.decisions));
      after = next.next_after;
      more.hidden = after === null || after === undefined;
    },
  }, t('common.more'));
  const head = [t('balance.at'), t('decision.account'), t('balance.quota'), t('invoice.period'), t('balance.kind')].map((x) => h('th', null, x));
  head.push(h('th', { class: 'num' }, t('decision.used')), h('th', { class: 'num' }, t('balance.limit')));
  return [
    first.decisions.length === 0 ? h('p', { class: 'muted', testid: 'decisions-none' }, t('decision.none')) : null,
    h('table', { class: 'grid', testid: 'decisions-table' }, h('thead', null, h('tr', null, head)), body),
    more,
  ];
}

/** `#/quota` */
export async function quota() {
  const query = { limit: '200' };
  const first = await api.get(`/v1/quota/decisions?${new URLSearchParams(query)}`);
  return [h('h1', null, t('nav.quota')), card(null, h('p', { class: 'muted' }, t('decision.explain')), decisionsTable(first, query))];
}

function downloads(doc, lang) {
  const id = doc.id;
  const name = doc.number || id;
  const button = (testid, label, path, file) =>
    h('button', {
      type: 'button',
      class: 'ghost small',
      testid,
      onclick: async (e) => {
        const b = e.currentTarget;
        b.disabled = true;
        b.dataset.state = 'busy';
        try {
          await api.download(path, file);
          b.dataset.state = 'done';
        } catch (err) {
          b.dataset.state = 'failed';
          b.title = `${err.status || ''} ${err.message}`;
          b.after(errorNote(err, 'download-error'));
        } finally {
          b.disabled = false;
        }
      },
    }, label);
  const enc = encodeURIComponent(id);
  return h(
    'span',
    { class: 'downloads' },
    button('download-csv', 'CSV', `/v1/invoices/${enc}.csv`, `${name}.csv`),
    doc.kind === 'invoice' ? button('download-html', 'HTML', `/v1/invoices/${enc}.html?lang=${lang}`, `${name}.html`) : null,
    doc.kind === 'invoice' ? button('download-pdf', 'PDF', `/v1/invoices/${enc}.pdf?lang=${lang}`, `${name}.pdf`) : null,
  );
}

/** Whether a document is of the home region (`region` null or absent; issue 26). */
export function isHome(d) {
  return d.region === null || d.region === undefined;
}

/** A document's region as shown: its name, or "home". */
export function regionOf(d) {
  return isHome(d) ? t('invoice.home') : d.region;
}

/** An amount with the currency it is in: `123.45 USD` (the figure itself in its own span). */
export function money(amount, currency, testid) {
  if (amount === '' || amount === null || amount === undefined) {
    return '';
  }
  return h('span', { class: 'money' }, h('span', { testid }, amount), currency ? h('span', { class: 'currency' }, ` ${currency}`) : null);
}

/** `#/invoices` */
export async function invoices(ctx) {
  const list = await api.get('/v1/invoices');
  const rows = list.map((d) =>
    row({ testid: 'invoice-row', 'data-invoice-id': d.id, 'data-kind': d.kind }, [
      h('a', { href: `#/invoices/${encodeURIComponent(d.id)}`, testid: 'invoice-number' }, d.number),
      d.kind === 'invoice' ? t('invoice.kind_invoice') : t('invoice.kind_credit_note'),
      d.kind === 'invoice' ? labelOf(d) : d.period,
      [{ testid: 'invoice-region', 'data-region': isHome(d) ? '' : d.region }, regionOf(d)],
      [{ testid: 'invoice-currency' }, d.currency || ''],
      [{ class: `status ${d.status}`, testid: 'invoice-status' }, t(`status.${d.status}`, null, d.status)],
      [{ class: 'num' }, money(d.kind === 'invoice' ? d.total : d.amount, d.currency, 'invoice-total')],
      [{ class: 'num' }, money(d.kind === 'invoice' ? d.amount_due : '', d.currency, 'invoice-amount-due')],
      [{ class: 'num' }, money(d.kind === 'invoice' ? d.paid : '', d.currency)],
      downloads(d, ctx.lang),
    ]),
  );
  return [
    h('h1', null, t('nav.invoices')),
    card(
      null,
      list.length === 0
        ? h('p', { class: 'muted', testid: 'invoices-none' }, t('invoice.none'))
        : table(
            [t('invoice.number'), t('invoice.kind'), t('invoice.period'), t('invoice.region'), t('invoice.currency'), t('invoice.status'), [{ class: 'num' }, t('invoice.total')], [{ class: 'num' }, t('invoice.amount_due')], [{ class: 'num' }, t('invoice.paid')], t('invoice.downloads')],
            rows,
            { testid: 'invoices-table' },
          ),
    ),
  ];
}

/** `#/invoices/{id}`: another account's id is answered 404 by the API, like a missing one. */
export async function invoice(ctx) {
  const id = ctx.segments[1];
  const d = await api.get(`/v1/invoices/${encodeURIComponent(id)}`);
  const head = h(
    'div',
    { class: 'figures' },
    figure(t('invoice.number'), d.number, 'invoice-detail-number'),
    figure(t('invoice.status'), t(`status.${d.status}`, null, d.status), 'invoice-detail-status'),
    figure(t('invoice.issued_at'), when(d.issued_at), 'invoice-detail-issued'),
    d.kind === 'invoice'
      ? figure(t('invoice.period'), `${when(d.period.start)} – ${when(d.period.end)}`, 'invoice-detail-period')
      : figure(t('invoice.period'), d.period, 'invoice-detail-period'),
    figure(t('invoice.region'), regionOf(d), 'invoice-detail-region'),
    figure(t('invoice.currency'), d.currency, 'invoice-detail-currency'),
    d.kind === 'invoice'
      ? figure(t('invoice.amount_due'), d.amount_due, 'invoice-detail-amount-due', d.currency)
      : figure(t('invoice.amount'), d.amount, 'invoice-detail-amount', d.currency),
  );
  const body = [];
  if (d.kind === 'invoice') {
    body.push(card(t('invoice.lines'), linesTable(d.lines, 'invoice-line'), totals(d, 'invoice-detail')));
    if (d.adjustments && d.adjustments.length) {
      body.push(card(t('invoice.adjustments'), table(
        [t('invoice.original'), t('invoice.period'), t('invoice.component'), [{ class: 'num' }, t('invoice.amount')]],
        d.adjustments.map((a) => row({ testid: 'invoice-adjustment' }, [a.invoice_number || '—', a.period, a.component, [{ class: 'num' }, money(a.amount, d.currency)]])),
      )));
    }
    body.push(card(null, h('div', { class: 'figures compact' }, figure(t('invoice.paid'), d.paid, 'invoice-detail-paid', d.currency), d.credit_note ? figure(t('invoice.kind_credit_note'), d.credit_note, 'invoice-detail-credit-note') : null)));
  } else {
    body.push(card(t('invoice.references'), table(
      [t('invoice.original'), t('invoice.period'), [{ class: 'num' }, t('invoice.amount')]],
      d.references.map((r) => row({ testid: 'credit-note-reference' }, [r.invoice_number || '—', r.period, [{ class: 'num' }, money(r.amount, d.currency)]])),
    )));
  }
  return [
    h('p', null, h('a', { href: '#/invoices', class: 'back' }, `← ${t('nav.invoices')}`)),
    h('h1', null, `${d.kind === 'invoice' ? t('invoice.kind_invoice') : t('invoice.kind_credit_note')} ${d.number}`, ' ', downloads(d, ctx.lang)),
    card(null, head),
    body,
  ];
}

function tierText(up, rate, key, bound) {
  return up === null || up === undefined ? `${t('prices.beyond')} ${rate}` : `${t(key, { [bound]: up })}: ${rate}`;
}

/** One region's price tables (the home region's: `region` null), in its own currency. */
function regionPrices(r, region) {
  const rates = (tiers) =>
    tiers.length === 1 && (tiers[0].up_to_hours === null || tiers[0].up_to_hours === undefined)
      ? tiers[0].rate_per_hour
      : tiers.map((x) => tierText(x.up_to_hours, x.rate_per_hour, 'prices.up_to', 'hours')).join('; ');
  const days = (d) => (d.length === 7 ? t('prices.days_all') : d.join(' '));
  const rows = r.skus.map((s) =>
    row({ testid: 'price-row', 'data-sku': s.sku, 'data-unit': s.unit }, [
      s.sku,
      t(`usage.unit.${s.unit}`, null, s.unit),
      [{ class: 'num', testid: 'price-on-demand' }, s.on_demand.length ? rates(s.on_demand) : t('prices.none')],
      [
        { testid: 'price-offpeak' },
        s.offpeak.length
          ? s.offpeak.map((w) => `${w.from}–${w.to} ${days(w.days)} ×${w.multiplier}: ${w.rates_per_hour.join(' / ')}`).join('; ')
          : t('prices.none'),
      ],
      [{ class: 'num', testid: 'price-spot' }, s.spot_rate_per_hour ?? t('prices.none')],
      [{ class: 'num', testid: 'price-minimum' }, s.minimum_seconds === null ? t('prices.none') : t('prices.minimum_seconds', { n: s.minimum_seconds })],
      [
        { testid: 'price-states' },
        Object.keys(s.state_rates).length
          ? Object.entries(s.state_rates).map(([state, rate]) => `${state}: ${rate}`).join('; ')
          : t('prices.none'),
      ],
    ]),
  );
  const egress = r.egress.map((e) =>
    row({ testid: 'egress-row', 'data-dest': e.dest }, [
      e.dest,
      [
        { class: 'num', testid: 'egress-rates' },
        e.tiers.map((x) => tierText(x.up_to_gb, x.rate_per_gb, 'prices.up_to_gb', 'gb')).join('; '),
      ],
    ]),
  );
  const per = (key) => `${t(key)} (${r.currency})`;
  return h(
    'section',
    { class: 'card', testid: 'prices-region', 'data-region': region || '', 'data-currency': r.currency },
    h('h2', { testid: 'prices-region-title' }, region ? t('prices.region_title', { region }) : t('prices.home')),
    h(
      'div',
      { class: 'figures compact' },
      figure(t('prices.currency'), r.currency, 'prices-currency'),
      figure(t('prices.timezone'), r.timezone, 'prices-timezone'),
      figure(t('prices.tax'), r.tax_rate, 'prices-tax'),
    ),
    rows.length === 0
      ? h('p', { class: 'muted', testid: 'prices-empty' }, t('prices.empty'))
      : table(
          [t('prices.sku'), t('prices.unit'), [{ class: 'num' }, per('prices.on_demand')], per('prices.offpeak'), [{ class: 'num' }, per('prices.spot')], [{ class: 'num' }, t('prices.minimum')], t('prices.states')],
          rows,
          { testid: 'prices-table' },
        ),
    egress.length
      ? [h('h3', null, t('prices.egress')), table([t('prices.dest'), [{ class: 'num' }, per('prices.per_gb')]], egress, { testid: 'egress-table' })]
      : null,
  );
}

/** `#/prices`: `GET /v1/prices`, what each sku costs now (issue 24.15), the home region's
 * first, then every other region's in its own currency (issue 26). */
export async function prices() {
  const p = await api.get('/v1/prices');
  return [
    h('h1', null, t('prices.title')),
    card(
      null,
      h('p', { class: 'muted' }, t('prices.explain')),
      h(
        'div',
        { class: 'figures' },
        figure(t('prices.period'), p.period_label, 'prices-period', `${t('prices.as_of')} ${when(p.as_of)}`),
        figure(t('prices.discount'), `${p.discount_percent} %`, 'prices-discount'),
      ),
    ),
    regionPrices(p, null),
    (p.regions || []).map((r) => regionPrices(r, r.region)),
  ];
}

/**
 * The organization (issue 27), for owner and finance keys: the tree of the key's scope from
 * `GET /v1/organization` (each node's own cost to date, its subtree's, its budget and how much
 * of it is used), the cost by project per account as a stacked chart, and, for the account
 * clicked (`?account=`), its rows of `GET /v1/allocation`.
 */
export async function organization(ctx) {
  const p = ctx.params;
  const asked = isLabel(p.get('period')) ? p.get('period') : null;
  const o = await api.get(`/v1/organization${asked ? `?${new URLSearchParams({ period: asked })}` : ''}`);
  const period = o.period;
  const ids = new Set(o.nodes.map((n) => n.id));
  const focus = ids.has(p.get('account')) ? p.get('account') : null;
  const go = (params) => ctx.navigate(`#/organization?${new URLSearchParams({ period, ...params })}`);
  // The tree, depth first from the root(s), children in id order (the answer's order).
  const children = new Map();
  for (const n of o.nodes) {
    const up = n.parent && ids.has(n.parent) ? n.parent : '';
    children.set(up, [...(children.get(up) || []), n]);
  }
  const ordered = [];
  const walk = (up, depth) => {
    for (const n of children.get(up) || []) {
      ordered.push([n, depth]);
      walk(n.id, depth + 1);
    }
  };
  walk('', 0);
  const used = (n) => {
    if (n.budget === null || num.toNumber(n.budget) <= 0) {
      return '—';
    }
    return `${((num.toNumber(n.subtree_cost) / num.toNumber(n.budget)) * 100).toFixed(1)} %`;
  };
  const rows = ordered.map(([n, depth]) =>
    row({ testid: 'org-node', 'data-account': n.id, 'data-depth': String(depth), class: n.id === focus ? 'active' : '' }, [
      [
        { class: `depth-${Math.min(depth, 8)}` },
        h('a', { href: `#/organization?${new URLSearchParams({ period, account: n.id })}`, testid: 'org-node-link' }, n.id),
      ],
      [{ testid: 'org-payer' }, n.payer === n.id ? t('org.self') : n.payer],
      [{ class: 'num', testid: 'org-cost' }, n.cost],
      [{ class: 'num', testid: 'org-subtree-cost' }, n.subtree_cost],
      [{ class: 'num', testid: 'org-budget' }, n.budget ?? '—'],
      [{ class: 'num', testid: 'org-used' }, used(n)],
    ]),
  );
  // Cost by project per account: one stacked series per project (tag value).
  const categories = ordered.map(([n]) => n.id);
  const tags = [...new Set(o.by_project.map((r) => r.tag))].sort();
  const series = tags.map((tag) => ({
    name: tag === '' ? t('org.untagged') : tag,
    values: categories.map((a) =>
      num.toNumber(num.sum(o.by_project.filter((r) => r.account === a && r.tag === tag).map((r) => r.total))),
    ),
  }));
  const chartEl = h('div', { class: 'chart', testid: 'org-chart', role: 'img', 'aria-label': t('org.by_project') });
  if (series.length) {
    ctx.later(() => charts.usageChart(chartEl, { categories, series }, o.currency || ''));
  }
  let drill = null;
  if (focus) {
    const a = await api
      .get(`/v1/allocation?${new URLSearchParams({ period, account: focus })}`)
      .catch(keep);
    const mine = failed(a) ? [] : a.rows.filter((r) => r.account === focus);
    drill = card(
      t('org.drill', { account: focus }),
      mine.length
        ? table(
            [t('org.project'), [{ class: 'num' }, t('invoice.subtotal')], [{ class: 'num' }, t('invoice.discount')], [{ class: 'num' }, t('invoice.credit')], [{ class: 'num' }, t('invoice.tax')], [{ class: 'num' }, t('invoice.total')]],
            mine.map((r) =>
              row({ testid: 'org-alloc-row', 'data-tag': r.tag }, [
                r.tag === '' ? t('org.untagged') : r.tag,
                [{ class: 'num' }, r.subtotal],
                [{ class: 'num' }, r.discount],
                [{ class: 'num' }, r.credit],
                [{ class: 'num' }, r.tax],
                [{ class: 'num', testid: 'org-alloc-total' }, r.total],
              ]),
            ),
            { testid: 'org-alloc-table', 'data-account': focus },
          )
        : h('p', { class: 'muted', testid: 'org-alloc-none' }, t('org.no_rows')),
    );
  }
  return [
    h('h1', null, t('nav.organization')),
    card(
      null,
      h(
        'div',
        { class: 'figures' },
        figure(t('org.period'), period, 'org-period'),
        figure(t('org.total'), o.total, 'org-total', o.currency || ''),
        h('span', null,
          h('button', { type: 'button', class: 'ghost', testid: 'org-prev', onclick: () => go({ period: shift(period, -1) }) }, '‹'),
          h('button', { type: 'button', class: 'ghost', testid: 'org-next', onclick: () => go({ period: shift(period, 1) }) }, '›'),
        ),
      ),
    ),
    card(
      t('org.tree'),
      table(
        [t('org.account'), t('org.payer'), [{ class: 'num' }, t('org.cost')], [{ class: 'num' }, t('org.subtree_cost')], [{ class: 'num' }, t('org.budget')], [{ class: 'num' }, t('org.used')]],
        rows,
        { testid: 'org-table' },
      ),
    ),
    card(t('org.by_project'), series.length ? chartEl : h('p', { class: 'muted', testid: 'org-chart-none' }, t('org.no_rows'))),
    drill,
  ];
}
