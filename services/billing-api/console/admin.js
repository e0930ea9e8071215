// The admin's pages: accounts and their quotas (and one account's balance), dead letters with
// their reasons, pending adjustments, closing a period, a period's invoices and the finance
// exports. Everything through the admin routes of the API, with the admin token.

import * as api from './api.js';
import * as charts from './charts.js';
import { balanceView, decisionsTable, errorNote } from './customer.js';
import { card, figure, h, row, table, when } from './dom.js';
import { t } from './i18n.js';
import * as num from './num.js';
import { isLabel, thisMonth } from './periods.js';

/** Accounts per page of the list (the route takes up to 1,000). */
const ACCOUNTS_PAGE = 200;
/** Dead letters per page of the list. */
const DEAD_LETTERS_PAGE = 200;

function quotaText(q) {
  if (!q) {
    return '—';
  }
  const parts = [];
  for (const [sku, v] of Object.entries(q.gpu_hours || {})) parts.push(`${sku} ${v} h`);
  for (const [sku, v] of Object.entries(q.max_concurrent || {})) parts.push(`${sku} ≤ ${v}`);
  return parts.join(', ') || '—';
}

function accountRows(list) {
  return list.map((a) =>
    row({ testid: 'account-row', 'data-account-id': a.id }, [
      h('a', { href: `#/admin/accounts/${encodeURIComponent(a.id)}`, testid: 'account-id' }, a.id),
      when(a.created_at),
      [{ class: 'num', testid: 'account-spend-limit' }, a.quotas?.spend_limit ?? '—'],
      [{ class: 'num', testid: 'account-prepaid-balance' }, a.quotas?.prepaid_balance ?? '—'],
      [{ testid: 'account-gpu-quotas' }, quotaText(a.quotas)],
      [{ class: 'num' }, a.quotas?.warn_at ?? '—'],
      a.quotas_updated_at ? when(a.quotas_updated_at) : '—',
    ]),
  );
}

/** A list that pages with `after` through a "more" button. */
function paged(first, items, next, fetchPage, rowsOf, head, testid) {
  const body = h('tbody', null, rowsOf(items(first)));
  let after = next(first);
  const more = h('button', {
    type: 'button',
    class: 'ghost',
    testid: `${testid}-more`,
    hidden: after === null || after === undefined,
    onclick: async () => {
      const page = await fetchPage(after);
      body.append(...rowsOf(items(page)));
      after = next(page);
      more.hidden = after === null || after === undefined;
    },
  }, t('common.more'));
  return [
    h('table', { class: 'grid', testid }, h('thead', null, h('tr', null, head.map((x) => (x instanceof Node ? x : h('th', null, x))))), body),
    more,
  ];
}

/** `#/admin/accounts` */
export async function accounts() {
  const page = (after) =>
    api.get(`/v1/admin/accounts?${new URLSearchParams({ limit: String(ACCOUNTS_PAGE), ...(after ? { after } : {}) })}`);
  const first = await page(null);
  return [
    h('h1', null, t('nav.accounts')),
    card(
      null,
      first.accounts.length === 0 ? h('p', { class: 'muted', testid: 'accounts-none' }, t('admin.no_accounts')) : null,
      paged(
        first,
        (p) => p.accounts,
        (p) => p.next_after,
        page,
        accountRows,
        [
          t('admin.account'),
          t('admin.created_at'),
          h('th', { class: 'num' }, t('cost.spend_limit')),
          h('th', { class: 'num' }, t('cost.prepaid_balance')),
          t('admin.gpu_quotas'),
          h('th', { class: 'num' }, t('quota.warn_at')),
          t('admin.quotas_set'),
        ],
        'accounts-table',
      ),
    ),
  ];
}

/** `#/admin/accounts/{id}`: the account's balance and quota decisions. */
export async function account(ctx) {
  const id = ctx.segments[2];
  const query = { account: id, limit: '200' };
  const [b, decisions] = await Promise.all([
    api.get(`/v1/balance?${new URLSearchParams({ account: id })}`),
    api.get(`/v1/quota/decisions?${new URLSearchParams(query)}`),
  ]);
  return [
    h('p', null, h('a', { href: '#/admin/accounts', class: 'back' }, `← ${t('nav.accounts')}`)),
    h('h1', { testid: 'account-title' }, `${t('admin.account')} ${b.account}`),
    h('p', null, h('a', { href: `#/admin/accounts/${encodeURIComponent(id)}/notifications`, testid: 'account-notifications' }, t('nav.notifications'))),
    balanceView(b),
    card(t('nav.quota'), decisionsTable(decisions, query)),
  ];
}

function deadLetterRows(list) {
  return list.map((d) =>
    row({ testid: 'dead-letter-row', 'data-seq': String(d.seq) }, [
      String(d.seq),
      when(d.created_at_ms / 1000),
      [{ class: 'kind limit', testid: 'dead-letter-reason' }, d.reason],
      [{ testid: 'dead-letter-detail' }, d.detail],
      d.source || '—',
      d.event_id || '—',
      h('details', null, h('summary', null, t('admin.payload')), h('pre', { class: 'payload' }, d.payload)),
    ]),
  );
}

/** `#/admin/dead-letters` */
export async function deadLetters(ctx) {
  const page = (after) =>
    api.get(`/v1/admin/dead-letters?${new URLSearchParams({ limit: String(DEAD_LETTERS_PAGE), after: String(after || 0) })}`);
  const first = await page(0);
  const counts = new Map();
  for (const d of first.dead_letters) {
    counts.set(d.reason, (counts.get(d.reason) || 0) + 1);
  }
  const chartEl = h('div', { class: 'chart short', testid: 'dead-letters-chart', role: 'img', 'aria-label': t('admin.by_reason') });
  const bars = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([name, value]) => ({ name, value }));
  if (bars.length) {
    ctx.later(() => charts.columns(chartEl, bars, t('admin.records'), { counts: true }));
  }
  return [
    h('h1', null, t('nav.dead_letters')),
    card(
      t('admin.by_reason'),
      h('p', { class: 'muted' }, t('admin.dead_letters_explain')),
      bars.length ? chartEl : h('p', { class: 'muted', testid: 'dead-letters-none' }, t('admin.no_dead_letters')),
    ),
    card(
      null,
      paged(
        first,
        (p) => p.dead_letters,
        (p) => p.next_after,
        page,
        deadLetterRows,
        ['#', t('balance.at'), t('admin.reason'), t('admin.detail'), t('admin.source'), t('admin.event_id'), t('admin.payload')],
        'dead-letters-table',
      ),
    ),
  ];
}

/** `#/admin/adjustments` */
export async function adjustments() {
  const a = await api.get('/v1/admin/adjustments');
  const list = a.pending_adjustments;
  return [
    h('h1', null, t('nav.adjustments')),
    card(
      null,
      h('p', { class: 'muted' }, t('admin.adjustments_explain')),
      list.length === 0
        ? h('p', { class: 'muted', testid: 'adjustments-none' }, t('admin.no_adjustments'))
        : table(
            [t('admin.account'), t('invoice.period'), t('invoice.original'), [{ class: 'num' }, t('admin.issued_total')], [{ class: 'num' }, t('admin.recomputed_total')], [{ class: 'num' }, t('admin.difference')], t('invoice.lines')],
            list.map((x) =>
              row({ testid: 'adjustment-row', 'data-account': x.account, 'data-period': x.period }, [
                x.account,
                x.period,
                x.original_number || '—',
                [{ class: 'num' }, x.issued_total],
                [{ class: 'num' }, x.recomputed_total],
                [{ class: 'num', testid: 'adjustment-difference' }, x.difference],
                x.lines.map((l) => `${l.component} ${l.amount}`).join(', ') || '—',
              ]),
            ),
            { testid: 'adjustments-table' },
          ),
    ),
  ];
}

/** Rows of issued invoices; `prefix` names their test ids (`closed-invoice`, `period-invoice`). */
function issuedRows(list, prefix) {
  return list.map((i) =>
    row({ testid: `${prefix}-row`, 'data-invoice-id': i.id, 'data-account': i.account, 'data-region': i.region ?? '' }, [
      [{ testid: `${prefix}-account` }, i.account],
      [{ testid: `${prefix}-number` }, i.number],
      [{ testid: `${prefix}-region` }, i.region ?? t('invoice.home')],
      [{ testid: `${prefix}-currency` }, i.currency],
      [{ class: `status ${i.status}` }, t(`status.${i.status}`, null, i.status)],
      [{ class: 'num', testid: `${prefix}-total` }, i.total],
      [{ class: 'num' }, i.amount_due],
      [{ class: 'num' }, i.paid],
    ]),
  );
}

const issuedHead = () => [
  t('admin.account'),
  t('invoice.number'),
  t('invoice.region'),
  t('invoice.currency'),
  t('invoice.status'),
  [{ class: 'num' }, t('invoice.total')],
  [{ class: 'num' }, t('invoice.amount_due')],
  [{ class: 'num' }, t('invoice.paid')],
];

/** `#/admin/close?period=YYYY-MM`: closing is idempotent (again: the same invoices). */
export async function close(ctx) {
  const period = isLabel(ctx.params.get('period')) ? ctx.params.get('period') : thisMonth(1);
  const input = h('input', { type: 'month', testid: 'close-period', value: period, required: true });
  const result = h('div', { testid: 'close-result', 'data-state': 'idle' });
  const submit = h('button', {
    type: 'submit',
    testid: 'close-submit',
    onclick: async (e) => {
      e.preventDefault();
      const p = input.value;
      if (!isLabel(p)) {
        return;
      }
      submit.disabled = true;
      result.dataset.state = 'busy';
      result.replaceChildren(h('p', { class: 'muted' }, t('common.loading')));
      try {
        const issued = await api.post(`/v1/admin/invoices/close?${new URLSearchParams({ period: p })}`);
        // One total per currency (issue 26): invoices of different regions are never added up.
        const currencies = [...new Set(issued.map((i) => i.currency))];
        const sums = currencies.map((c) =>
          figure(t('admin.invoices_total'), num.sum(issued.filter((i) => i.currency === c).map((i) => i.total)), 'closed-total', c));
        result.replaceChildren(
          h('p', { testid: 'close-done' }, t('admin.closed', { period: p, n: issued.length })),
          h('div', { class: 'figures compact' }, sums, figure(t('admin.invoices_count'), String(issued.length), 'closed-count')),
          table(issuedHead(), issuedRows(issued, 'closed-invoice'), { testid: 'closed-invoices' }),
          h('p', null, h('a', { href: `#/admin/invoices?period=${p}`, testid: 'close-see-invoices' }, t('admin.see_invoices'))),
        );
        result.dataset.state = 'done';
      } catch (err) {
        result.replaceChildren(errorNote(err, 'close-error'));
        result.dataset.state = 'failed';
      } finally {
        submit.disabled = false;
      }
    },
  }, t('admin.close_button'));
  return [
    h('h1', null, t('nav.close')),
    card(
      null,
      h('p', { class: 'muted' }, t('admin.close_explain')),
      h('form', { class: 'controls' }, h('label', null, h('span', null, t('invoice.period')), input), submit),
      result,
    ),
  ];
}

function parseJsonl(text) {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

/** `#/admin/invoices?period=YYYY-MM`: the period's invoices (from the JSONL export) and the
 * finance exports as downloads. */
export async function periodInvoices(ctx) {
  const period = isLabel(ctx.params.get('period')) ? ctx.params.get('period') : thisMonth(1);
  const res = await api.request('GET', `/v1/admin/exports/invoices?${new URLSearchParams({ period, format: 'jsonl' })}`);
  const docs = parseJsonl(await res.text());
  const issued = docs.filter((d) => d.kind === 'invoice');
  const notes = docs.filter((d) => d.kind === 'credit_note');
  const picker = h('input', {
    type: 'month',
    testid: 'exports-period',
    value: period,
    onchange: (e) => isLabel(e.target.value) && ctx.navigate(`#/admin/invoices?period=${e.target.value}`),
  });
  const exportButton = (testid, label, path, file) =>
    h('button', {
      type: 'button',
      class: 'ghost small',
      testid,
      onclick: async (e) => {
        const b = e.currentTarget;
        b.dataset.state = 'busy';
        try {
          await api.download(path, file);
          b.dataset.state = 'done';
        } catch (err) {
          b.dataset.state = 'failed';
          b.after(errorNote(err, 'export-error'));
        }
      },
    }, label);
  const q = (format) => new URLSearchParams({ period, format });
  const chartEl = h('div', { class: 'chart short', testid: 'period-invoices-chart', role: 'img', 'aria-label': t('admin.totals_by_account') });
  // Issue 26: invoices of different regions are in different currencies and are never added
  // up: one total per currency, and the chart draws the home region's invoices only (those
  // of the first currency when there are none at home).
  const currencies = [...new Set(issued.map((i) => i.currency))];
  const home = issued.filter((i) => i.region === null || i.region === undefined);
  const drawn = home.length ? home : issued.filter((i) => i.currency === currencies[0]);
  if (drawn.length) {
    ctx.later(() => charts.columns(chartEl, drawn.map((i) => ({ name: i.account, value: num.toNumber(i.total) })), drawn[0].currency));
  }
  return [
    h('h1', null, t('nav.period_invoices')),
    card(
      null,
      h('div', { class: 'controls' },
        h('label', null, h('span', null, t('invoice.period')), picker),
        exportButton('export-invoices-csv', t('admin.export_invoices_csv'), `/v1/admin/exports/invoices?${q('csv')}`, `invoices-${period}.csv`),
        exportButton('export-invoices-jsonl', t('admin.export_invoices_jsonl'), `/v1/admin/exports/invoices?${q('jsonl')}`, `invoices-${period}.jsonl`),
        exportButton('export-journal-csv', t('admin.export_journal_csv'), `/v1/admin/exports/journal?${q('csv')}`, `journal-${period}.csv`),
        exportButton('export-journal-jsonl', t('admin.export_journal_jsonl'), `/v1/admin/exports/journal?${q('jsonl')}`, `journal-${period}.jsonl`),
      ),
      issued.length === 0
        ? h('p', { class: 'muted', testid: 'period-invoices-none' }, t('admin.no_invoices', { period }))
        : [
            h('div', { class: 'figures compact' },
              figure(t('admin.invoices_count'), String(issued.length), 'period-invoices-count'),
              currencies.map((c) =>
                figure(t('admin.invoices_total'), num.sum(issued.filter((i) => i.currency === c).map((i) => i.total)), 'period-invoices-total', c))),
            chartEl,
            table(issuedHead(), issuedRows(issued, 'period-invoice'), { testid: 'period-invoices-table' }),
          ],
      notes.length
        ? table(
            [t('admin.account'), t('invoice.number'), t('invoice.original'), [{ class: 'num' }, t('invoice.amount')]],
            notes.map((n) => row({ testid: 'period-credit-note-row' }, [n.account, n.number, n.invoice_number, [{ class: 'num' }, n.amount]])),
          )
        : null,
    ),
  ];
}
