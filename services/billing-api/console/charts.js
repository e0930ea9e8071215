// Charts, drawn by the vendored Apache ECharts (vendor/echarts.min.js, the global `echarts`).
// Tooltips are drawn on the canvas (renderMode 'richText'): ECharts' HTML tooltips carry
// inline styles, which the console's Content-Security-Policy refuses. No animation: a page
// shows its figures at once, and screenshots are the same every time.

import { lang, t } from './i18n.js';

const live = new Set();

window.addEventListener('resize', () => {
  for (const c of live) {
    c.resize();
  }
});

/** Disposes every chart (a page is about to be replaced). */
export function disposeAll() {
  for (const c of live) {
    c.dispose();
  }
  live.clear();
}

function init(el) {
  const chart = window.echarts.init(el, null, {
    renderer: 'canvas',
    locale: lang() === 'zh' ? 'ZH' : 'EN',
  });
  live.add(chart);
  return chart;
}

const PALETTE = [
  '#2563eb', '#16a34a', '#f59e0b', '#dc2626', '#7c3aed', '#0891b2',
  '#db2777', '#65a30d', '#ea580c', '#4f46e5', '#0d9488', '#a16207', '#94a3b8',
];

const base = {
  animation: false,
  color: PALETTE,
  textStyle: { fontFamily: 'system-ui, "Noto Sans CJK SC", "Noto Sans", sans-serif' },
  tooltip: { renderMode: 'richText', confine: true },
};

/**
 * Usage over time, stacked by group: `categories` the bucket labels, `series` [{ name, values
 * (unit-hours, floats for drawing) }], all of one unit (`axisName`): units never share an axis.
 */
export function usageChart(el, { categories, series }, axisName = t('usage.axis_hours')) {
  const chart = init(el);
  // A month whose usage fills a few days opens zoomed on them (the slider shows the month).
  let first = categories.length;
  let last = -1;
  for (const s of series) {
    s.values.forEach((v, i) => {
      if (v > 0) {
        first = Math.min(first, i);
        last = Math.max(last, i);
      }
    });
  }
  const zoom = { xAxisIndex: 0, filterMode: 'none' };
  if (last >= 0 && last - first + 1 < categories.length / 2) {
    const pad = Math.max(2, Math.round((last - first + 1) / 10));
    zoom.startValue = Math.max(0, first - pad);
    zoom.endValue = Math.min(categories.length - 1, last + pad);
  }
  chart.setOption({
    ...base,
    tooltip: { ...base.tooltip, trigger: 'axis', axisPointer: { type: 'shadow' } },
    legend: { type: 'scroll', top: 0, left: 56, right: 16 },
    grid: { left: 56, right: 16, top: 60, bottom: 64 },
    xAxis: { type: 'category', data: categories, axisLabel: { hideOverlap: true } },
    yAxis: { type: 'value', name: axisName, nameGap: 12 },
    dataZoom: [{ type: 'inside', ...zoom }, { type: 'slider', height: 18, bottom: 8, ...zoom }],
    series: series.map((s) => ({
      name: s.name,
      type: 'bar',
      stack: 'usage',
      barCategoryGap: '10%',
      data: s.values,
    })),
  });
  return chart;
}

/** Horizontal bars of money figures: [{ name, value (float), color? }]. */
export function moneyBars(el, bars, currency) {
  const chart = init(el);
  chart.setOption({
    ...base,
    tooltip: { ...base.tooltip, trigger: 'item' },
    grid: { left: 8, right: 72, top: 8, bottom: 24, containLabel: true },
    xAxis: { type: 'value', name: currency, nameGap: 8 },
    yAxis: { type: 'category', data: bars.map((b) => b.name), inverse: true },
    series: [
      {
        type: 'bar',
        barWidth: '55%',
        label: { show: true, position: 'right' },
        data: bars.map((b, i) => ({
          value: b.value,
          itemStyle: { color: b.color || PALETTE[i % PALETTE.length] },
        })),
      },
    ],
  });
  return chart;
}

/** Vertical bars, one per category: [{ name, value, color? }]; `counts`: whole numbers. */
export function columns(el, bars, axisName, { counts = false } = {}) {
  const chart = init(el);
  chart.setOption({
    ...base,
    tooltip: { ...base.tooltip, trigger: 'item' },
    grid: { left: 8, right: 16, top: 28, bottom: 8, containLabel: true },
    xAxis: { type: 'category', data: bars.map((b) => b.name), axisLabel: { interval: 0, hideOverlap: true } },
    yAxis: { type: 'value', name: axisName, minInterval: counts ? 1 : 0 },
    series: [
      {
        type: 'bar',
        barMaxWidth: 48,
        label: { show: true, position: 'top' },
        data: bars.map((b, i) => ({
          value: b.value,
          itemStyle: { color: b.color || PALETTE[i % PALETTE.length] },
        })),
      },
    ],
  });
  return chart;
}
