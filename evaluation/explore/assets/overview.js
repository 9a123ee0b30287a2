/* overview.js: the runs table with health marks, the judge-sensitivity matrix, the charts. */
function groupName(d, g) { return d.group_names[g] ? d.group_names[g] + " (" + g + ")" : g; }

function labelBar(counts, n) {  // the run's failure labels as one stacked bar (HTML, widths in %)
  const bar = h("div", { class: "labelbar", title: LABELS.map(function (l) { return l + " " + (counts[l] || 0); }).join(", ") });
  LABELS.forEach(function (l) {
    if (counts[l]) add(bar, h("span", { class: "l-" + l, style: "width:" + (100 * counts[l] / n) + "%;background:var(--" + l + ", #aab1bd)" }));
  });
  return bar;
}

function renderOverview(d, params) {
  add(main, h("h2", { text: d.dataset + ": " + d.methods.length + " runs" }));
  d.provenance.forEach(function (line) { add(main, h("p", { class: "prov", text: line })); });
  d.notes.forEach(function (line) { add(main, h("p", { class: "note", text: line })); });
  // A stratified subset (EpBench's cue buckets): the population-weighted overall, the papers' headline, beside the plain mean.
  const weighted = d.methods.some(function (m) { return m.weighted; });
  const head = ["method", "health", d.label + (weighted ? " unweighted" : "") + " (95% interval)", "n"]
    .concat(weighted ? [d.label + " weighted by population share (95% interval)"] : []).concat(d.groups.map(function (g) { return groupName(d, g); }))
    .concat(["failure labels", "correct / all questions", "context tokens / q", "query tokens / correct", "USD / correct"]);
  const t = h("table", { id: "runs" }, h("thead", null, h("tr", null, head.map(function (x, i) {
    return h("th", { class: i > 1 && x !== "failure labels" ? "num" : null, text: x }); }))));
  const body = h("tbody");
  d.methods.forEach(function (m) {
    const hl = m.headline;
    const qp = new URLSearchParams({ d: params.get("d") || 0, sort: "m" + d.methods.indexOf(m) });
    const hv = m.health;
    add(body, h("tr", { "data-method": m.label },
      h("td", null, h("a", { href: "#/questions?" + qp, class: "method", title: "questions, sorted by this method's score", text: m.label }),
        h("div", { class: "folder", title: m.path, text: m.path.split("/").pop() })),
      h("td", null, healthBadge(hv), hv && hv.status !== "ok" ? h("div", { class: "muted", text: hv.mark }) : null,
        hv && hv.checks.length ? h("details", null, h("summary", { class: "muted", text: hv.checks.length + (hv.checks.length === 1 ? " check" : " checks") }),
          h("table", { class: "checks" }, hv.checks.map(function (c) {
            return h("tr", null, h("td", null, healthBadge({ status: c.status, mark: c.message })), h("td", { text: c.scope }),
              h("td", { text: c.name }), h("td", { text: c.message }));
          }))) : null),
      h("td", { class: "num", title: hl.interval }, num(hl.value), h("span", { class: "muted", text: " [" + num(hl.lo) + ", " + num(hl.hi) + "]" })),
      h("td", { class: "num", text: hl.n === null ? "–" : hl.n }),
      weighted ? (m.weighted ? h("td", { class: "num", title: m.weighted.interval }, num(m.weighted.value),
        h("span", { class: "muted", text: " [" + num(m.weighted.lo) + ", " + num(m.weighted.hi) + "]" })) : h("td", { class: "num", text: "–" })) : null,
      d.groups.map(function (g) { const c = m.groups[g] || {}; return h("td", { class: "num", title: "n " + c.n + "; " + (c.interval || ""), text: num(c.value) }); }),
      h("td", null, labelBar(m.labels, m.n_questions)),
      h("td", { class: "num", text: m.correct + " / " + m.n_questions }),
      h("td", { class: "num", text: big(m.context_tokens) }),
      h("td", { class: "num", text: big(m.query_tokens_per_correct) }),
      h("td", { class: "num", text: m.usd_per_correct === null ? "–" : m.usd_per_correct.toPrecision(3) })));
  });
  add(t, body);
  add(main, h("div", { class: "scroll" }, t));
  add(main, h("p", { class: "legend muted" }, "Failure labels: ", LABELS.filter(function (l) { return d.methods.some(function (m) { return m.labels[l]; }); }).map(function (l) { return badge(l); }),
    " — " + d.correct_means + ". Interval: a saved 95% interval, else ±1.96 bootstrap std."));
  if (d.judge_matrix) add(main, judgeMatrix(d.judge_matrix));
  add(main, h("h3", { text: "Charts" }));
  const box = h("div", { class: "charts" });
  add(main, box);
  const specs = Object.keys(d.charts);
  specs.forEach(function (k) { add(box, h("div", { class: "chart", id: "chart-" + k, text: "drawing…" })); });
  vega().then(function (embed) {
    return Promise.all(specs.map(function (k) {
      const el = document.getElementById("chart-" + k);
      if (!el) return null;
      el.textContent = "";
      return embed(el, d.charts[k], { actions: false, renderer: "canvas" }).catch(function (e) { el.textContent = "chart failed: " + e; });
    }));
  }).then(function () { window.__explorerCharts = performance.now(); })  // scripts/bench_explore.py
    .catch(function (e) { box.textContent = String(e); });
  const tables = h("details", null, h("summary", { text: "The report's tables (" + d.tables.length + ")" }));
  d.tables.forEach(function (tb) {
    add(tables, h("h3", { text: tb.title }));
    tb.provenance.forEach(function (p) { add(tables, h("p", { class: "prov", text: p })); });
    add(tables, h("table", null, h("thead", null, h("tr", null, tb.header.map(function (x) { return h("th", { text: x }); }))),
      h("tbody", null, tb.rows.map(function (row) { return h("tr", null, row.map(function (c) { return h("td", { text: c }); })); }))));
    tb.notes.forEach(function (n) { add(tables, h("p", { class: "note", text: n })); });
  });
  add(main, h("h3", { text: "Tables" }), tables);
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

