// gpubill's web console (issue 13): served by `gpubill serve` at `/`, everything it loads
// served by the binary. A customer signs in with an API key, the admin with the admin token;
// every figure comes from the API routes customers use (api.js), with that key as the bearer.
//
// Pages are routes of the URL's fragment (`#/overview?period=2026-11`); each renders into
// <main id="page">, which says `data-state` (loading, ready, error) and `data-route` so that
// the browser tests know when a page is drawn.

import * as admin from './admin.js';
import * as api from './api.js';
import { ApiError } from './api.js';
import * as charts from './charts.js';
import * as customer from './customer.js';
import { card, h } from './dom.js';
import { lang, setLang, t } from './i18n.js';
import * as notifications from './notifications.js';

const CUSTOMER_NAV = [
  ['overview', 'nav.overview'],
  ['balance', 'nav.balance'],
  ['quota', 'nav.quota'],
  ['invoices', 'nav.invoices'],
  ['prices', 'nav.prices'],
  ['notifications', 'nav.notifications'],
];

/** Pages only some keys' roles may read: the organization (issue 27) is owner's and finance's. */
const ORGANIZATION_ROLES = ['owner', 'finance'];

function customerNav(s) {
  return ORGANIZATION_ROLES.includes(s.key_role) ? [...CUSTOMER_NAV, ['organization', 'nav.organization']] : CUSTOMER_NAV;
}

const ADMIN_NAV = [
  ['admin/accounts', 'nav.accounts'],
  ['admin/dead-letters', 'nav.dead_letters'],
  ['admin/adjustments', 'nav.adjustments'],
  ['admin/close', 'nav.close'],
  ['admin/invoices', 'nav.period_invoices'],
];

function home(s) {
  if (!s) {
    return '#/signin';
  }
  return s.role === 'admin' ? '#/admin/accounts' : '#/overview';
}

/** `#/invoices/inv_1?x=y` -> { hash, segments: ['invoices', 'inv_1'], params } */
function route(hash) {
  const text = hash.replace(/^#\/?/, '');
  const at = text.indexOf('?');
  const path = at < 0 ? text : text.slice(0, at);
  const query = at < 0 ? '' : text.slice(at + 1);
  const segments = path.split('/').filter((x) => x !== '').map((x) => {
    try {
      return decodeURIComponent(x);
    } catch {
      return x;
    }
  });
  return { hash: `#/${text}`, segments, params: new URLSearchParams(query) };
}

export function navigate(hash) {
  if (location.hash === hash) {
    render();
  } else {
    location.hash = hash;
  }
}

function refused(needs) {
  return () => [
    h('h1', null, t('refused.title')),
    card(
      null,
      h('p', { class: 'error', testid: 'page-refused', 'data-needs': needs }, t(needs === 'admin' ? 'refused.admin' : 'refused.customer')),
      h('p', null, h('a', { href: '#/signin', onclick: signOut }, t('refused.switch'))),
    ),
  ];
}

function notFound() {
  return [h('h1', null, t('error.not_found')), card(null, h('p', { class: 'error', testid: 'page-error', 'data-status': '404' }, t('error.no_page')))];
}

/** The page of a route for who is signed in; admin pages for the admin only, and customer
 * pages (the `/v1` routes that take a customer key) for customers only. */
function pageOf(segments, s) {
  const [first, second, third] = segments;
  if (first === 'signin' || !s) {
    return signinPage;
  }
  if (first === 'admin') {
    if (s.role !== 'admin') {
      return refused('admin');
    }
    switch (second) {
      case 'accounts':
        if (third && segments[3] === 'notifications') {
          return notifications.admin;
        }
        return third ? admin.account : admin.accounts;
      case 'dead-letters':
        return admin.deadLetters;
      case 'adjustments':
        return admin.adjustments;
      case 'close':
        return admin.close;
      case 'invoices':
        return admin.periodInvoices;
      default:
        return notFound;
    }
  }
  if (s.role !== 'customer') {
    return refused('customer');
  }
  switch (first) {
    case 'overview':
      return customer.overview;
    case 'balance':
      return customer.balance;
    case 'quota':
      return customer.quota;
    case 'invoices':
      return second ? customer.invoice : customer.invoices;
    case 'prices':
      return customer.prices;
    case 'organization':
      return customer.organization;
    case 'notifications':
      return notifications.customer;
    default:
      return notFound;
  }
}

function errorPage(e) {
  const status = e instanceof ApiError ? e.status : 0;
  const title = status === 404 ? t('error.not_found') : status === 403 ? t('error.forbidden') : t('error.title');
  return [
    h('h1', null, title),
    card(
      null,
      h('p', { class: 'error', testid: 'page-error', 'data-status': String(status) }, `${status ? `${status} ` : ''}${e.message}`),
    ),
  ];
}

function signOut(e) {
  if (e) {
    e.preventDefault();
  }
  api.clearSession();
  navigate('#/signin');
}

function renderTop(s) {
  const top = document.getElementById('top');
  const other = lang() === 'zh' ? 'en' : 'zh';
  top.replaceChildren(
    h('a', { class: 'brand', href: home(s) }, h('span', { class: 'logo' }), 'gpubill', h('span', { class: 'sub' }, t('app.console'))),
    h('span', { class: 'spacer' }),
    s
      ? h('span', { class: 'who', testid: 'signed-in-as', 'data-role': s.role }, s.role === 'admin' ? t('top.admin') : t('top.customer', { account: s.account || '' }))
      : null,
    h('button', {
      type: 'button',
      class: 'ghost',
      testid: 'lang-switch',
      'data-lang': lang(),
      title: t('top.language'),
      onclick: () => {
        setLang(other);
        render();
      },
    }, other === 'zh' ? '中文' : 'English'),
    s ? h('button', { type: 'button', class: 'ghost', testid: 'signout', onclick: signOut }, t('top.signout')) : null,
  );
}

function renderNav(s, r) {
  const nav = document.getElementById('nav');
  if (!s) {
    nav.replaceChildren();
    nav.hidden = true;
    return;
  }
  nav.hidden = false;
  const items = s.role === 'admin' ? ADMIN_NAV : customerNav(s);
  const current = r.segments.slice(0, items[0][0].split('/').length).join('/');
  nav.replaceChildren(
    ...items.map(([path, key]) =>
      h('a', { href: `#/${path}`, class: current === path ? 'active' : '', testid: `nav-${path.replace('/', '-')}` }, t(key)),
    ),
  );
}

function signinPage(ctx) {
  const input = h('input', {
    type: 'password',
    testid: 'signin-key',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: t('signin.placeholder'),
  });
  const error = h('p', { class: 'error', testid: 'signin-error', hidden: true });
  const submit = h('button', { type: 'submit', testid: 'signin-submit' }, t('signin.submit'));
  const form = h(
    'form',
    {
      class: 'signin',
      onsubmit: async (e) => {
        e.preventDefault();
        const token = input.value.trim();
        if (!token) {
          return;
        }
        submit.disabled = true;
        error.hidden = true;
        try {
          const s = await api.whoIs(token);
          api.setSession(s);
          const next = ctx.params.get('next');
          navigate(next && next.startsWith('#/') && !next.startsWith('#/signin') ? next : home(s));
        } catch (err) {
          const status = err instanceof ApiError ? err.status : 0;
          error.textContent =
            status === 401 ? t('signin.unknown') : err.code === 'ingest_token' ? t('signin.ingest') : `${t('error.api')} ${status} ${err.message}`;
          error.hidden = false;
          form.dataset.state = 'failed';
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('h1', null, t('signin.title')),
    h('p', { class: 'muted' }, t('signin.explain')),
    h('label', null, h('span', null, t('signin.key')), input),
    submit,
    error,
    h('p', { class: 'muted small' }, t('signin.storage')),
  );
  ctx.later(() => input.focus());
  return [form];
}

let renders = 0;

async function render() {
  const mine = ++renders;
  const s = api.session();
  if (!location.hash || location.hash === '#' || location.hash === '#/') {
    navigate(home(s));
    return;
  }
  const r = route(location.hash);
  if (!s && r.segments[0] !== 'signin') {
    navigate(`#/signin?${new URLSearchParams({ next: r.hash })}`);
    return;
  }
  const main = document.getElementById('page');
  main.dataset.state = 'loading';
  main.dataset.route = r.hash;
  document.documentElement.lang = lang() === 'zh' ? 'zh-CN' : 'en';
  document.title = `${t('app.title')}`;
  renderTop(s);
  renderNav(s, r);
  const later = [];
  const ctx = {
    params: r.params,
    segments: r.segments,
    lang: lang(),
    later: (fn) => later.push(fn),
    navigate,
  };
  const page = pageOf(r.segments, s);
  let content;
  let state = 'ready';
  try {
    content = await page(ctx);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401 && s) {
      // The key was revoked or the server's admin token changed: sign in again.
      api.clearSession();
      navigate(`#/signin?${new URLSearchParams({ next: r.hash })}`);
      return;
    }
    content = errorPage(e);
    state = 'error';
  }
  if (mine !== renders) {
    return;
  }
  charts.disposeAll();
  main.replaceChildren(...[content].flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  for (const fn of later) {
    fn();
  }
  main.dataset.state = state;
}

window.addEventListener('hashchange', render);
render();
