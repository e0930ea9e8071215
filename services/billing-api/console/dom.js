// Building the page. Text from the API only ever becomes text nodes (never HTML), and no
// element gets a style attribute: the Content-Security-Policy allows neither inline scripts
// nor inline styles, and this keeps it so.

/**
 * h('td', { testid: 'invoice-total', class: 'num' }, '806.85')
 * Attributes: `class`, `testid` (data-testid), `on<event>` (listeners), anything else as an
 * attribute (true: present, false/null/undefined: absent).
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) {
      continue;
    }
    if (k === 'class') {
      el.className = v;
    } else if (k === 'testid') {
      el.dataset.testid = v;
    } else if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A table: `head` labels, `rows` arrays of cells (a cell is text, a Node, or [attrs, content]). */
export function table(head, rows, attrs = {}) {
  const cell = (tag, c) =>
    Array.isArray(c) && c.length === 2 && c[0] && typeof c[0] === 'object' && !(c[0] instanceof Node)
      ? h(tag, c[0], c[1])
      : h(tag, null, c);
  return h(
    'table',
    { class: 'grid', ...attrs },
    h('thead', null, h('tr', null, head.map((c) => cell('th', c)))),
    h('tbody', null, rows),
  );
}

/** A row for `table`: cells as for `table`, `attrs` on the tr. */
export function row(attrs, cells) {
  return h(
    'tr',
    attrs,
    cells.map((c) =>
      Array.isArray(c) && c.length === 2 && c[0] && typeof c[0] === 'object' && !(c[0] instanceof Node)
        ? h('td', c[0], c[1])
        : h('td', null, c),
    ),
  );
}

/** A labelled figure: <div class="figure"><span>label</span><strong data-testid>value</strong></div>. */
export function figure(label, value, testid, extra) {
  return h(
    'div',
    { class: 'figure' },
    h('span', { class: 'label' }, label),
    h('strong', { testid, class: 'value' }, value ?? '—'),
    extra ? h('span', { class: 'extra' }, extra) : null,
  );
}

export function card(title, ...children) {
  return h('section', { class: 'card' }, title ? h('h2', null, title) : null, children);
}

/** Unix seconds or an RFC 3339 text as "2026-11-02 05:00 UTC". */
export function when(t) {
  if (t === null || t === undefined || t === '') {
    return '—';
  }
  const d = typeof t === 'number' ? new Date(t * 1000) : new Date(t);
  if (Number.isNaN(d.getTime())) {
    return String(t);
  }
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
