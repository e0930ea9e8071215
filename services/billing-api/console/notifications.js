// Notifications of one account (issue 28): its budgets and alert settings, where its arrears
// sequence is and what happens next (and when), the notifications written, and its webhook
// endpoints with their delivery logs. A customer sees its own account (`#/notifications`),
// the admin any account (`#/admin/accounts/{id}/notifications`); both through the same routes,
// `/v1/accounts/{id}/...` and `/v1/notifications`. A change goes to the API and the page is
// drawn again from what the API answers then; a refusal shows the API's own message.

import * as api from './api.js';
import { ApiError } from './api.js';
import { errorNote, failed, keep } from './customer.js';
import { card, figure, h, row, table, when } from './dom.js';
import { lang, t } from './i18n.js';

/** Notifications shown, newest first. */
const SHOWN_NOTIFICATIONS = 100;
/** Pages of 1,000 followed to find the newest (the list is oldest first). */
const MAX_NOTIFICATION_PAGES = 20;
/** Deliveries shown per endpoint. */
const DELIVERY_LOG = 50;

/**
 * What to show once after the next drawing: a secret just made (`{endpoint, secret}`), a test
 * event just sent (`{endpoint, seq}`). Kept in memory only, never in storage: a secret is shown
 * once, as the API answers it once.
 */
let flash = null;


/** "50, 80 , 100" -> ["50", "80", "100"] */
function list(text) {
  return String(text || '')
    .split(/[,，\s]+/)
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** Unix seconds in the browser's own time zone, with how long from now. */
function localTime(secs) {
  const d = new Date(secs * 1000);
  const text = d.toLocaleString(lang() === 'zh' ? 'zh-CN' : 'en-GB', {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
  return text;
}

/** How long from `now` (seconds) to `at` (seconds): "in 59 min", "3 h ago". */
function relative(at, now) {
  const d = at - now;
  const a = Math.abs(d);
  const amount = a < 3600 ? t('notify.minutes', { n: Math.max(1, Math.round(a / 60)) }) : a < 172_800 ? t('notify.hours', { n: Math.round(a / 360) / 10 }) : t('notify.days', { n: Math.round(a / 8640) / 10 });
  // Past due: the next tick takes the step (at the instant it was due).
  return d >= 0 ? t('notify.in', { d: amount }) : t('notify.due', { d: amount });
}

function duration(secs) {
  if (secs % 86_400 === 0) {
    return t('notify.days', { n: secs / 86_400 });
  }
  if (secs % 3600 === 0) {
    return t('notify.hours', { n: secs / 3600 });
  }
  return t('notify.seconds', { n: secs });
}

/** A form's failure: the API's message as it answered it. */
function failure(slot, err) {
  slot.textContent = err instanceof ApiError && err.status ? `${err.status} ${err.message}` : String(err.message || err);
  slot.hidden = false;
}

/** A button that calls the API, then draws the page again (or shows the API's message). */
function actionButton(ctx, { testid, label, run, attrs = {} }) {
  const slot = h('span', { class: 'error small', testid: `${testid}-error`, hidden: true });
  const b = h('button', {
    type: 'button',
    class: 'ghost small',
    testid,
    ...attrs,
    onclick: async () => {
      b.disabled = true;
      slot.hidden = true;
      try {
        await run();
        ctx.navigate(location.hash);
      } catch (err) {
        failure(slot, err);
        b.disabled = false;
      }
    },
  }, label);
  return h('span', { class: 'action' }, b, slot);
}

function field(label, input) {
  return h('label', null, h('span', null, label), input);
}

/** A form whose submit calls `run(values)`; on success the page is drawn again. */
function apiForm(ctx, testid, fields, submitLabel, run) {
  const error = h('p', { class: 'error', testid: `${testid}-error`, hidden: true });
  const submit = h('button', { type: 'submit', testid: `${testid}-submit` }, submitLabel);
  const form = h(
    'form',
    {
      class: 'controls',
      testid,
      onsubmit: async (e) => {
        e.preventDefault();
        submit.disabled = true;
        error.hidden = true;
        form.dataset.state = 'busy';
        try {
          await run();
          form.dataset.state = 'done';
          ctx.navigate(location.hash);
        } catch (err) {
          failure(error, err);
          form.dataset.state = 'failed';
        } finally {
          submit.disabled = false;
        }
      },
    },
    fields,
    submit,
  );
  return [form, error];
}

function scopeText(scope) {
  if (!scope || typeof scope !== 'object') {
    return '—';
  }
  const [kind, id] = Object.entries(scope)[0] || [];
  return kind ? `${t(`notify.scope_${kind}`, null, kind)} ${typeof id === 'string' ? id : JSON.stringify(id)}` : '—';
}

function budgetsCard(ctx, account, view) {
  const base = `/v1/accounts/${encodeURIComponent(account)}/budgets`;
  const budgets = Object.values(view.settings?.budgets || {}).sort((a, b) => (a.id < b.id ? -1 : 1));
  const states = new Map((view.states || []).map((s) => [s.subject, s]));
  const input = {
    id: h('input', { testid: 'budget-id', required: true, autocomplete: 'off', placeholder: 'b1', size: 10 }),
    amount: h('input', { testid: 'budget-amount', required: true, inputmode: 'decimal', placeholder: '1000', size: 10 }),
    thresholds: h('input', { testid: 'budget-thresholds', required: true, placeholder: '50, 80, 100', size: 14 }),
    node: h('input', { testid: 'budget-node', placeholder: t('notify.node_placeholder'), size: 12 }),
    forecast: h('input', { type: 'checkbox', testid: 'budget-forecast' }),
    action: h(
      'select',
      { testid: 'budget-action' },
      h('option', { value: 'notify' }, t('notify.action_notify')),
      h('option', { value: 'stop' }, t('notify.action_stop')),
    ),
  };
  const edit = (b) => {
    input.id.value = b.id;
    input.amount.value = b.amount;
    input.thresholds.value = (b.thresholds || []).join(', ');
    input.node.value = b.scope && b.scope.node ? b.scope.node : '';
    input.forecast.checked = Boolean(b.forecast);
    input.action.value = b.action || 'notify';
    input.amount.focus();
  };
  const rows = budgets.map((b) => {
    const state = states.get(`budget:${b.id}`);
    return row({ testid: 'budget-row', 'data-budget': b.id }, [
      [{ testid: 'budget-row-id' }, b.id],
      [{ testid: 'budget-scope' }, scopeText(b.scope)],
      [{ class: 'num', testid: 'budget-row-amount' }, b.amount],
      [{ testid: 'budget-row-thresholds' }, (b.thresholds || []).map((x) => `${x} %`).join(', ')],
      [{ testid: 'budget-row-forecast' }, b.forecast ? t('notify.yes') : t('notify.no')],
      [{ testid: 'budget-row-action', 'data-action': b.action }, t(`notify.action_${b.action}`, null, b.action)],
      [{ testid: 'budget-row-state', class: state && state.block ? 'kind limit' : '' }, state ? stateText(state) : '—'],
      h(
        'span',
        { class: 'downloads' },
        h('button', { type: 'button', class: 'ghost small', testid: 'budget-edit', onclick: () => edit(b) }, t('notify.edit')),
        actionButton(ctx, {
          testid: 'budget-remove',
          label: t('notify.remove'),
          run: () => api.send('DELETE', `${base}/${encodeURIComponent(b.id)}`),
        }),
      ),
    ]);
  });
  const [form, error] = apiForm(
    ctx,
    'budget-form',
    [
      field(t('notify.budget_id'), input.id),
      field(t('notify.amount'), input.amount),
      field(t('notify.thresholds'), input.thresholds),
      field(t('notify.node'), input.node),
      h('label', { class: 'check' }, h('span', null, t('notify.forecast')), input.forecast),
      field(t('notify.action'), input.action),
    ],
    t('notify.save_budget'),
    () => {
      const body = {
        amount: input.amount.value.trim(),
        thresholds: list(input.thresholds.value),
        forecast: input.forecast.checked,
        action: input.action.value,
      };
      const node = input.node.value.trim();
      if (node) {
        body.scope = { node };
      }
      return api.send('PUT', `${base}/${encodeURIComponent(input.id.value.trim())}`, body);
    },
  );
  return card(
    t('notify.budgets'),
    h('p', { class: 'muted small' }, t('notify.budgets_explain')),
    budgets.length
      ? table(
          [t('notify.budget_id'), t('notify.scope'), [{ class: 'num' }, t('notify.amount')], t('notify.thresholds_col'), t('notify.forecast'), t('notify.action'), t('notify.state'), ''],
          rows,
          { testid: 'budgets-table' },
        )
      : h('p', { class: 'muted', testid: 'budgets-none' }, t('notify.no_budgets')),
    h('h3', null, t('notify.set_budget')),
    form,
    error,
  );
}

/** A budget's remembered state, in short: its cost, the thresholds crossed, whether it
 * blocks (other rules' states: the JSON the API answers, on one line). */
function stateText(s) {
  const st = s.state;
  let text;
  if (st && typeof st === 'object' && Array.isArray(st.marks)) {
    const crossed = st.marks
      .filter((m) => m.crossed)
      .map((m) => `${m.threshold} %${m.measure === 'forecast' ? ` (${t('notify.forecast')})` : ''}`);
    text = [
      st.period && st.period.label ? st.period.label : null,
      st.cost !== undefined ? `${t('notify.cost')} ${st.cost}` : null,
      `${t('notify.crossed')} ${crossed.length ? crossed.join(', ') : t('notify.none_crossed')}`,
      st.limited ? t('notify.limited') : null,
    ]
      .filter(Boolean)
      .join(' · ');
  } else {
    text = typeof st === 'string' ? st : JSON.stringify(st);
  }
  return s.block ? `${text} · ${t('notify.blocks')} ${JSON.stringify(s.block)}` : text;
}

function alertsCard(ctx, account, view) {
  const st = view.settings || {};
  const input = {
    lowAmount: h('input', { testid: 'alert-low-amount', inputmode: 'decimal', size: 10, value: st.balance?.low_amount ?? '' }),
    lowHours: h('input', { testid: 'alert-low-hours', inputmode: 'decimal', size: 8, value: st.balance?.low_hours ?? '' }),
    days: h('input', { testid: 'alert-reminder-days', placeholder: '7, 3, 1', size: 10, value: (st.reminders?.days || []).join(', ') }),
  };
  const [form, error] = apiForm(
    ctx,
    'alerts-form',
    [
      field(t('notify.low_amount'), input.lowAmount),
      field(t('notify.low_hours'), input.lowHours),
      field(t('notify.reminder_days'), input.days),
    ],
    t('notify.save_alerts'),
    () => {
      const body = {};
      const balance = {};
      if (input.lowAmount.value.trim()) {
        balance.low_amount = input.lowAmount.value.trim();
      }
      if (input.lowHours.value.trim()) {
        balance.low_hours = input.lowHours.value.trim();
      }
      if (Object.keys(balance).length) {
        body.balance = balance;
      }
      const days = list(input.days.value);
      if (days.length) {
        // A day that is not a whole number is sent as it is: the API says what is wrong.
        body.reminders = { days: days.map((d) => (/^\d+$/.test(d) ? Number(d) : d)) };
      }
      return api.send('PUT', `/v1/accounts/${encodeURIComponent(account)}/alerts`, body);
    },
  );
  return card(
    t('notify.alerts'),
    h(
      'div',
      { class: 'figures compact' },
      figure(t('notify.low_amount'), st.balance?.low_amount ?? t('notify.off'), 'alert-low-amount-set'),
      figure(t('notify.low_hours'), st.balance?.low_hours ?? t('notify.off'), 'alert-low-hours-set'),
      figure(t('notify.reminder_days'), st.reminders?.days?.length ? st.reminders.days.join(', ') : t('notify.off'), 'alert-reminder-days-set'),
    ),
    h('p', { class: 'muted small' }, t('notify.alerts_explain')),
    form,
    error,
  );
}

function arrearsCard(view, now) {
  const a = view.arrears;
  const policy = view.settings?.arrears;
  const phase = a ? a.phase : 'clear';
  const next = a && Array.isArray(a.next) ? a.next : null;
  const inArrears = phase !== 'clear';
  let nextText;
  if (next) {
    const [step, at] = next;
    nextText = h(
      'p',
      { testid: 'arrears-next', 'data-step': step, 'data-at': String(at) },
      t(`notify.next_${step}`, null, step),
      ' ',
      h('strong', { testid: 'arrears-next-time' }, localTime(at)),
      ` (${relative(at, now)})`,
    );
  } else if (phase === 'released') {
    nextText = h('p', { testid: 'arrears-next', 'data-step': '' }, t('notify.next_none_released'));
  } else {
    nextText = null;
  }
  return card(
    t('notify.arrears'),
    h(
      'div',
      { class: 'figures compact' },
      h('div', { class: 'figure' },
        h('span', { class: 'label' }, t('notify.phase')),
        h('strong', { class: `value ${inArrears ? 'kind limit' : 'kind clear'}`, testid: 'arrears-phase', 'data-phase': phase }, inArrears ? t(`notify.phase_${phase}`, null, phase) : t('notify.no_arrears')),
      ),
      a ? figure(t('notify.episode'), String(a.episode), 'arrears-episode') : null,
      policy ? figure(t('notify.grace'), duration(policy.grace_secs), 'arrears-grace') : null,
      policy ? figure(t('notify.release_after'), duration(policy.release_after_secs), 'arrears-release-after') : null,
    ),
    nextText,
    policy ? h('p', { class: 'muted small' }, t('notify.arrears_explain')) : h('p', { class: 'muted small', testid: 'arrears-off' }, t('notify.arrears_off')),
  );
}

/** A notification's data in short: its scalar fields as `name value`. */
function dataText(n) {
  const data = n.body && typeof n.body.data === 'object' && n.body.data ? n.body.data : {};
  const parts = [];
  for (const [k, v] of Object.entries(data)) {
    if (v === null || v === undefined) {
      continue;
    }
    if (typeof v === 'object') {
      if (k === 'next' && v.step) {
        parts.push(`next ${v.step} ${v.at}`);
      } else if (k === 'period' && v.label) {
        parts.push(`period ${v.label}`);
      }
      continue;
    }
    parts.push(`${k} ${v}`);
  }
  return parts.join(' · ');
}

function notificationsCard(notes) {
  if (failed(notes)) {
    return card(t('notify.recent'), errorNote(notes, 'notifications-error'));
  }
  const shown = notes.slice(-SHOWN_NOTIFICATIONS).reverse();
  return card(
    t('notify.recent'),
    shown.length
      ? table(
          [[{ class: 'num' }, t('notify.seq')], t('notify.type'), t('notify.at'), t('notify.data'), t('notify.key')],
          shown.map((n) =>
            row({ testid: 'notification-row', 'data-type': n.type, 'data-seq': String(n.seq), 'data-id': String(n.id) }, [
              [{ class: 'num', testid: 'notification-seq' }, String(n.seq)],
              [{ testid: 'notification-type', class: `kind ${/resolved|cleared/.test(n.type) ? 'clear' : n.type === 'test' ? '' : 'warn'}` }, t(`event.${n.type}`, null, n.type)],
              when(n.at_s),
              [{ testid: 'notification-data', class: 'small' }, dataText(n)],
              [{ class: 'small muted' }, n.key],
            ]),
          ),
          { testid: 'notifications-table' },
        )
      : h('p', { class: 'muted', testid: 'notifications-none' }, t('notify.no_notifications')),
    notes.length > SHOWN_NOTIFICATIONS ? h('p', { class: 'muted small' }, t('notify.shown_of', { n: SHOWN_NOTIFICATIONS, total: notes.length })) : null,
  );
}

function attemptsText(d) {
  return (d.attempts || []).map((a) =>
    h(
      'div',
      { testid: 'delivery-attempt', 'data-status-code': a.status_code === null || a.status_code === undefined ? '' : String(a.status_code) },
      `#${a.attempt} ${when(a.at_ms / 1000)} · `,
      a.status_code !== null && a.status_code !== undefined ? h('strong', null, `HTTP ${a.status_code}`) : h('span', { class: 'error' }, a.error || t('notify.no_answer')),
      ` · ${a.latency_ms} ms`,
    ),
  );
}

function endpointCard(ctx, account, ep, log) {
  const base = `/v1/accounts/${encodeURIComponent(account)}/webhooks/${encodeURIComponent(ep.id)}`;
  const shown = flash && flash.endpoint === ep.id ? flash : null;
  const deliveries = failed(log)
    ? errorNote(log, 'deliveries-error')
    : log.deliveries.length === 0
      ? h('p', { class: 'muted', testid: 'deliveries-none' }, t('notify.no_deliveries'))
      : table(
          [[{ class: 'num' }, t('notify.seq')], t('notify.type'), t('notify.delivery_status'), [{ class: 'num' }, t('notify.attempts')], t('notify.attempt_log'), ''],
          log.deliveries.map((d) =>
            row({ testid: 'delivery-row', 'data-notification': String(d.notification), 'data-status': d.status, 'data-type': d.type }, [
              [{ class: 'num' }, String(d.seq)],
              t(`event.${d.type}`, null, d.type),
              [
                { testid: 'delivery-status', class: `status ${d.status === 'delivered' ? 'paid' : d.status === 'failed' ? 'overdue' : ''}` },
                [t(`notify.delivery_${d.status}`, null, d.status), d.status === 'pending' && d.next_attempt_at_ms ? ` · ${t('notify.next_attempt')} ${when(d.next_attempt_at_ms / 1000)}` : ''],
              ],
              [{ class: 'num', testid: 'delivery-attempts' }, String(d.attempts_total)],
              [{ class: 'small' }, attemptsText(d)],
              d.status === 'pending'
                ? ''
                : actionButton(ctx, {
                    testid: 'delivery-resend',
                    label: t('notify.resend'),
                    run: () => api.send('POST', `${base}/deliveries/${encodeURIComponent(d.notification)}/resend`),
                  }),
            ]),
          ),
          { testid: 'deliveries-table' },
        );
  return h(
    'section',
    { class: 'card', testid: 'endpoint', 'data-endpoint': ep.id, 'data-enabled': String(ep.enabled) },
    h('h3', { testid: 'endpoint-url' }, ep.url),
    h(
      'div',
      { class: 'figures compact' },
      figure(t('notify.endpoint_id'), ep.id, 'endpoint-id'),
      figure(t('notify.description'), ep.description || '—', 'endpoint-description'),
      figure(t('notify.event_types'), ep.event_types && ep.event_types.length ? ep.event_types.join(', ') : t('notify.every_type'), 'endpoint-event-types'),
      figure(
        t('notify.endpoint_status'),
        ep.enabled ? (ep.failing_since_ms ? t('notify.failing_since', { at: when(ep.failing_since_ms / 1000) }) : t('notify.enabled')) : t('notify.disabled_at', { at: when(ep.disabled_at_ms / 1000) }),
        'endpoint-status',
      ),
    ),
    shown && shown.secret
      ? h('p', { class: 'secret', testid: 'endpoint-secret' }, t('notify.secret_once'), ' ', h('code', { testid: 'endpoint-secret-value' }, shown.secret))
      : null,
    shown && shown.seq !== undefined ? h('p', { class: 'muted', testid: 'test-sent', 'data-seq': String(shown.seq) }, t('notify.test_sent', { seq: shown.seq })) : null,
    h(
      'div',
      { class: 'controls' },
      actionButton(ctx, {
        testid: 'endpoint-test',
        label: t('notify.send_test'),
        run: async () => {
          const sent = await api.send('POST', `${base}/test`);
          flash = { endpoint: ep.id, seq: sent.seq };
        },
      }),
      ep.enabled
        ? null
        : actionButton(ctx, { testid: 'endpoint-enable', label: t('notify.enable'), run: () => api.send('POST', `${base}/enable`) }),
      actionButton(ctx, {
        testid: 'endpoint-rotate',
        label: t('notify.rotate'),
        run: async () => {
          const made = await api.send('POST', `${base}/rotate`);
          flash = { endpoint: ep.id, secret: made.secret };
        },
      }),
    ),
    h('h3', null, t('notify.delivery_log')),
    deliveries,
  );
}

function webhooksCard(ctx, account, hooks, logs) {
  const input = {
    url: h('input', { testid: 'webhook-url', type: 'url', required: true, placeholder: 'https://example.com/hooks/gpubill', size: 36 }),
    types: h('input', { testid: 'webhook-event-types', placeholder: 'budget.crossed, test', size: 24 }),
    description: h('input', { testid: 'webhook-description', size: 16 }),
  };
  const [form, error] = apiForm(
    ctx,
    'webhook-form',
    [field(t('notify.url'), input.url), field(t('notify.event_types'), input.types), field(t('notify.description'), input.description)],
    t('notify.add_endpoint'),
    async () => {
      const body = { url: input.url.value.trim() };
      const types = list(input.types.value);
      if (types.length) {
        body.event_types = types;
      }
      if (input.description.value.trim()) {
        body.description = input.description.value.trim();
      }
      const made = await api.send('POST', `/v1/accounts/${encodeURIComponent(account)}/webhooks`, body);
      flash = { endpoint: made.id, secret: made.secret };
    },
  );
  const endpoints = failed(hooks) ? [] : hooks.endpoints;
  return [
    card(
      t('notify.webhooks'),
      h('p', { class: 'muted small' }, t('notify.webhooks_explain')),
      failed(hooks) ? errorNote(hooks, 'webhooks-error') : null,
      !failed(hooks) && endpoints.length === 0 ? h('p', { class: 'muted', testid: 'endpoints-none' }, t('notify.no_endpoints')) : null,
      h('h3', null, t('notify.add_endpoint')),
      form,
      error,
    ),
    endpoints.map((ep, i) => endpointCard(ctx, account, ep, logs[i])),
  ];
}

/** Every notification of the account (oldest first), following `after` (its seq). */
async function allNotifications(account) {
  const out = [];
  let after = 0;
  for (let i = 0; i < MAX_NOTIFICATION_PAGES; i += 1) {
    const q = new URLSearchParams({ account, after: String(after), limit: '1000' });
    const page = await api.get(`/v1/notifications?${q}`);
    out.push(...page.notifications);
    if (page.notifications.length < 1000) {
      break;
    }
    after = page.notifications[page.notifications.length - 1].seq;
  }
  return out;
}

/** The view of `account` (a customer's own, or the one the admin opened). */
export async function view(ctx, account) {
  const enc = encodeURIComponent(account);
  const [notify, notes, hooks] = await Promise.all([
    api.get(`/v1/accounts/${enc}/notify`),
    allNotifications(account).catch(keep),
    api.get(`/v1/accounts/${enc}/webhooks`).catch(keep),
  ]);
  const logs = failed(hooks)
    ? []
    : await Promise.all(
        hooks.endpoints.map((ep) =>
          api.get(`/v1/accounts/${enc}/webhooks/${encodeURIComponent(ep.id)}/deliveries?limit=${DELIVERY_LOG}`).catch(keep),
        ),
      );
  const now = Date.now() / 1000;
  const content = [
    h('div', { class: 'two' }, arrearsCard(notify, now), alertsCard(ctx, account, notify)),
    budgetsCard(ctx, account, notify),
    notificationsCard(notes),
    webhooksCard(ctx, account, hooks, logs),
  ];
  // Shown once: the next drawing no longer has it.
  flash = null;
  return content;
}

/** `#/notifications`: the signed-in customer's account. */
export async function customer(ctx) {
  const account = api.session()?.account;
  return [h('h1', null, t('nav.notifications')), await view(ctx, account)];
}

/** `#/admin/accounts/{id}/notifications` */
export async function admin(ctx) {
  const id = ctx.segments[2];
  return [
    h('p', null, h('a', { href: `#/admin/accounts/${encodeURIComponent(id)}`, class: 'back' }, `← ${t('admin.account')} ${id}`)),
    h('h1', { testid: 'account-title' }, `${t('nav.notifications')} · ${id}`),
    await view(ctx, id),
  ];
}
