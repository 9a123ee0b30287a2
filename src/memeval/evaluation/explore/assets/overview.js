/* overview.js: the runs table with health marks, the judge-sensitivity matrix, the charts. */
function groupName(d, g) { return d.group_names[g] ? d.group_names[g] + " (" + g + ")" : g; }

function labelBar(counts, n) {  // the run's failure labels as one stacked bar (HTML, widths in %)
  const bar = h("div", { class: "labelbar", title: LABELS.map(function (l) { return l + " " + (counts[l] || 0); }).join(", ") });
  LABELS.forEach(function (l) {
    if (counts[l]) add(bar, h("span", { class: "l-" + l, style: "width:" + (100 * counts[l] / n) + "%;background:var(--" + l + ", #aab1bd)" }));
  });
  return bar;
}

function pmCell(c, title) {  // "value ± std", as the report's tables print a cell
  if (!c || c.value === null) return h("td", { class: "num", text: "–" });
  return h("td", { class: "num", title: title || null }, num(c.value), c.std !== null ? h("span", { class: "muted", text: " ± " + num(c.std) }) : null);
}

function onlyMethods(spec, names) {
  // the chart of the picked methods only: data rows of other methods dropped, and the method color
  // scale's domain and range cut together, so each method keeps the color it has in every view
  const all = new Set(D.datasets.reduce(function (a, x) { return a.concat(x.methods.map(function (m) { return m.label; })); }, []));
  const want = new Set(names);
  const out = function (v) { return typeof v === "string" && all.has(v) && !want.has(v); };
  (function walk(o) {
    if (Array.isArray(o)) { o.forEach(walk); return; }
    if (!o || typeof o !== "object") return;
    if (Array.isArray(o.values)) o.values = o.values.filter(function (r) { return !(r && typeof r === "object" && out(r.method)); });
    if (Array.isArray(o.domain) && Array.isArray(o.range) && o.domain.length === o.range.length) {
      const k = o.domain.map(function (v) { return !out(v); });
      o.domain = o.domain.filter(function (_, i) { return k[i]; });
      o.range = o.range.filter(function (_, i) { return k[i]; });
    }
    if (Array.isArray(o.sort)) o.sort = o.sort.filter(function (v) { return !out(v); });
    Object.keys(o).forEach(function (key) { if (key !== "values") walk(o[key]); });
  })(spec);
  return spec;
}

function renderOverview(d, params) {
  const shown = eligible(d, params);
  add(main, h("h2", { text: d.dataset + ": " + d.methods.length + " runs" + (shown.length < d.methods.length ? ", " + shown.length + " shown" : "") }));
  d.provenance.forEach(function (line) { add(main, h("p", { class: "prov", text: line })); });
  d.notes.forEach(function (line) { add(main, h("p", { class: "note", text: line })); });
  add(main, methodPicker(d, params, "overview"));
  if (!shown.length) { add(main, noneShown(d, params), overviewLegend(d)); return; }
  // A stratified subset (EpBench's cue buckets): the population-weighted overall, the papers' headline, beside the plain mean.
  const weighted = d.methods.some(function (m) { return m.weighted; });
  const head = ["method", "health", d.label + (weighted ? " unweighted" : "") + " ± bootstrap std", "n"]
    .concat(weighted ? [d.label + " weighted by population share ± stratified bootstrap std"] : []).concat(d.groups.map(function (g) { return groupName(d, g); }))
    .concat(["failure labels", "correct / all questions", "context tokens / q", "query tokens / correct", "USD / correct"]);
  const t = h("table", { id: "runs" }, h("thead", null, h("tr", null, head.map(function (x, i) {
    return h("th", { class: i > 1 && x !== "failure labels" ? "num" : null, text: x }); }))));
  const body = h("tbody");
  shown.forEach(function (i) {
    const m = d.methods[i];
    const qp = keep(params, { sort: "m-" + m.label });
    const hv = m.health;
    add(body, h("tr", { "data-method": m.label, class: m.failed ? "failed" : null },
      h("td", null, h("a", { href: "#/questions?" + qp, class: "method", title: "questions, sorted by this method's score", text: m.label }),
        h("div", { class: "folder", title: m.path, text: m.path.split("/").pop() })),
      h("td", null, healthBadge(hv), hv && hv.status !== "ok" ? h("div", { class: "muted", text: hv.mark }) : null,
        hv && hv.checks.length ? h("details", null, h("summary", { class: "muted", text: hv.checks.length + (hv.checks.length === 1 ? " check" : " checks") }),
          h("table", { class: "checks" }, hv.checks.map(function (c) {
            return h("tr", null, h("td", null, healthBadge({ status: c.status, mark: c.message })), h("td", { text: c.scope }),
              h("td", { text: c.name }), h("td", { text: c.message }));
          }))) : null),
      pmCell(m.headline, m.headline.interval),
      h("td", { class: "num", text: m.headline.n === null ? "–" : m.headline.n }),
      weighted ? pmCell(m.weighted, "stratified bootstrap std") : null,
      d.groups.map(function (g) { const c = m.groups[g] || {}; return h("td", { class: "num", title: "n " + c.n + (c.std !== null && c.std !== undefined ? "; ± " + num(c.std) + " bootstrap std" : ""), text: num(c.value) }); }),
      h("td", null, labelBar(m.labels, m.n_questions)),
      h("td", { class: "num", text: m.correct + " / " + m.n_questions }),
      h("td", { class: "num", text: big(m.context_tokens) }),
      h("td", { class: "num", text: big(m.query_tokens_per_correct) }),
      h("td", { class: "num", text: m.usd_per_correct === null ? "–" : m.usd_per_correct.toPrecision(3) })));
  });
  add(t, body);
  add(main, h("div", { class: "scroll" }, t));
  add(main, h("p", { class: "note", id: "interval-note", text: d.interval_note }));
  if (d.judge_matrix) add(main, judgeMatrix(d.judge_matrix));
  add(main, h("h3", { text: "Charts" }));
  const box = h("div", { class: "charts" });
  add(main, box);
  const names = shown.map(function (i) { return d.methods[i].label; });
  const specs = Object.keys(d.charts);
  specs.forEach(function (k) { add(box, h("div", { class: "chart", id: "chart-" + k, text: "drawing…" })); });
  vega().then(function (embed) {
    return Promise.all(specs.map(function (k) {
      const el = document.getElementById("chart-" + k);
      if (!el) return null;
      el.textContent = "";
      const spec = onlyMethods(JSON.parse(JSON.stringify(d.charts[k])), names);
      return embed(el, spec, { actions: false, renderer: "canvas" }).catch(function (e) { el.textContent = "chart failed: " + e; });
    }));
  }).then(function () { window.__explorerCharts = performance.now(); })  // scripts/bench_explore.py
    .catch(function (e) { box.textContent = String(e); });
  add(main, overviewLegend(d));
  const tables = h("details", null, h("summary", { text: "The report's tables (" + d.tables.length + ", every run)" }));
  d.tables.forEach(function (tb) {
    add(tables, h("h3", { text: tb.title }));
    tb.provenance.forEach(function (p) { add(tables, h("p", { class: "prov", text: p })); });
    add(tables, h("div", { class: "scroll" }, h("table", null, h("thead", null, h("tr", null, tb.header.map(function (x) { return h("th", { text: x }); }))),
      h("tbody", null, tb.rows.map(function (row) { return h("tr", null, row.map(function (c) { return h("td", { text: c }); })); })))));
    tb.notes.forEach(function (n) { add(tables, h("p", { class: "note", text: n })); });
  });
  add(main, h("h3", { text: "Tables" }), tables);
}

function overviewLegend(d) {
  const bar = h("div", { class: "labelbar" }, LABELS.slice(0, 4).map(function (l) { return h("span", { class: "l-" + l, style: "width:25%" }); }));
  return legendBox(healthLegend().concat([
    [h("span", { class: "rowmark" }), "a runs-table row with a red left edge: that run failed a health check (kept, marked; the picker can hide it)"],
    [h("span", { class: "badge fail mini", text: "fail" }), "beside a method's name: that run failed a health check"],
    [bar, "failure labels: each label's share of the run's questions, in the label colors below"],
  ]).concat(labelLegend(d)).concat([
    [h("span", { class: "num", text: "0.375 ± 0.031" }), d.interval_note],
    [h("span", { class: "rule-sample" }), "charts: the vertical rule on a bar or point is that value ± 1 bootstrap std (the ± above)"],
    [[h("span", { class: "swatch", style: "background:#4c78a8" }), h("span", { class: "swatch", style: "background:#f58518" })], "charts: one color per method, the same in every chart and whichever methods are picked (each chart's own legend names them; click a name there to fade the others)"],
    [h("span", { class: "swatch faded" }), "charts: a faded fill with a dashed outline is a run that failed a health check (the charts' \u201chealth\u201d legend; the report fades and hatches it)"],
    [h("span", { text: "–" }), "no value: no question of that group in the run, or nothing recorded"],
  ]));
}

function judgeMatrix(jm) {
  const box = h("div", { id: "judge-matrix" }, h("h3", { text: "Judge sensitivity (" + jm.source + ")" }));
  if (jm.error) { add(box, h("p", { class: "note", text: jm.error }), jm.raw !== undefined ? json(jm.raw) : null); return box; }
  add(box, h("table", null, h("thead", null, h("tr", null, h("th", { text: "method" }), jm.criteria.map(function (c) { return h("th", { class: "num", text: c }); }))),
    h("tbody", null, jm.methods.map(function (m, i) {
      return h("tr", null, h("td", { text: m }), jm.scores[i].map(function (v) { return h("td", { class: "num", text: num(v) }); }));
    }))));
  (jm.notes || []).forEach(function (n) { add(box, h("p", { class: "note", text: n })); });
  if (jm.tau !== undefined) add(box, h("p", { class: "note", text: "Rank correlation between the criteria's method rankings (Kendall tau):" }), tauEl(jm.tau));
  return box;
}

function tauEl(tau) {  // {pair: x}, {a: {b: x}}, or anything else as saved
  if (tau && typeof tau === "object" && !Array.isArray(tau)) {
    const keys = Object.keys(tau);
    if (keys.every(function (k) { return typeof tau[k] === "number"; })) {
      return h("table", null, keys.map(function (k) { return h("tr", null, h("td", { text: k }), h("td", { class: "num", text: num(tau[k], 2) })); }));
    }
    if (keys.every(function (k) { return tau[k] && typeof tau[k] === "object"; })) {
      const cols = Array.from(new Set([].concat.apply([], keys.map(function (k) { return Object.keys(tau[k]); }))));
      return h("table", null, h("tr", null, h("th"), cols.map(function (c) { return h("th", { text: c }); })),
        keys.map(function (k) { return h("tr", null, h("th", { text: k }), cols.map(function (c) { return h("td", { class: "num", text: num(tau[k][c], 2) }); })); }));
    }
  }
  return json(tau);
}

