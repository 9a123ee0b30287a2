/* memeval explorer: the page of `memeval explore` (evaluation/explore/). Reads window.MEMEVAL_EXPLORER
   (data.js); loads question pages (q/*.js), context blocks (t/*.js) and the charting library
   (vendor/vega-bundle.js) as classic scripts when first needed, so it runs from file://. */
(function () {
  "use strict";
  const D = window.MEMEVAL_EXPLORER;
  const LABELS = D.labels, FLAGS = D.flags;
  const PAGE = 100;  // table rows rendered at a time (more on scroll)
  const main = document.getElementById("main");
  const loaded = { q: {}, t: {} }, waiting = {};
  let vegaReady = null;

  window.MEMEVAL_EXPLORER_LOAD = function (kind, stem, data) {
    loaded[kind][stem] = data;
    (waiting[kind + stem] || []).forEach(function (w) { w[0](data); });
    delete waiting[kind + stem];
  };

  function script(src, onerror) {
    const s = document.createElement("script");
    s.src = src;
    s.onerror = onerror;
    document.head.appendChild(s);
  }
  function chunk(kind, stem) {
    if (loaded[kind][stem]) return Promise.resolve(loaded[kind][stem]);
    return new Promise(function (resolve, reject) {
      const first = !waiting[kind + stem];
      (waiting[kind + stem] = waiting[kind + stem] || []).push([resolve, reject]);
      if (first) script(kind + "/" + stem + ".js", function () {
        (waiting[kind + stem] || []).forEach(function (w) { w[1](new Error("cannot load " + kind + "/" + stem + ".js")); });
        delete waiting[kind + stem];
      });
    });
  }
  function vega() {
    if (!vegaReady) vegaReady = new Promise(function (resolve, reject) {
      if (window.vegaEmbed) return resolve(window.vegaEmbed);
      const s = document.createElement("script");
      s.src = "vendor/vega-bundle.js";
      s.onload = function () { resolve(window.vegaEmbed); };
      s.onerror = function () { reject(new Error("cannot load vendor/vega-bundle.js")); };
      document.head.appendChild(s);
    });
    return vegaReady;
  }

  // -- small DOM helpers ------------------------------------------------------------------------
  function h(tag, attrs) {
    const el = document.createElement(tag);
    for (const k in attrs || {}) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") el.textContent = v;
      else if (k === "html") el.innerHTML = v;
      else if (k.slice(0, 2) === "on") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (let i = 2; i < arguments.length; i++) add(el, arguments[i]);
    return el;
  }
  function add(el) {  // add(el, child, child, ...): nodes, text, arrays of them; null/false skipped
    for (let i = 1; i < arguments.length; i++) {
      const c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) c.forEach(function (x) { add(el, x); });
      else el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
  }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function num(x, d) {
    if (x === null || x === undefined || Number.isNaN(x)) return "–";
    return Number(x).toFixed(d === undefined ? 3 : d);
  }
  function big(x) { return x === null || x === undefined ? "–" : Math.round(x).toLocaleString("en-US"); }
  function badge(label) { return h("span", { class: "badge l-" + label, text: label }); }
  const SHORT = { correct: "✓", generation_miss: "gen", partial_retrieval: "part", retrieval_miss: "ret", unjudged: "?" };
  function pill(label) { return h("span", { class: "badge l-" + label, title: label, text: SHORT[label] || "–" }); }
  function healthBadge(hv) {
    if (!hv) return h("span", { class: "badge none", title: "no health.json: run `memeval health RUN_DIR`", text: "–" });
    return h("span", { class: "badge " + hv.status, title: hv.mark, text: hv.status });
  }
  function json(x) { return h("pre", { class: "json", text: JSON.stringify(x, null, 1) }); }

  // -- routing: #/overview, #/questions?..., #/q?d=0&id=... ---------------------------------------
  function route() {
    const raw = location.hash.replace(/^#\/?/, "");
    const cut = raw.indexOf("?");
    return { view: (cut < 0 ? raw : raw.slice(0, cut)) || "overview",
             params: new URLSearchParams(cut < 0 ? "" : raw.slice(cut + 1)) };
  }
  function go(view, params) { location.hash = "#/" + view + (params && params.toString() ? "?" + params : ""); }
  function ds(params) { return D.datasets[Math.min(+(params.get("d") || 0), D.datasets.length - 1)] || null; }

  function nav(r) {
    const el = document.getElementById("nav");
    el.innerHTML = "";
    const d = +(r.params.get("d") || 0);
    const p = new URLSearchParams({ d: d });
    add(el, h("a", { href: "#/overview?" + p, class: r.view === "overview" ? "on" : null, text: "Overview" }));
    add(el, h("a", { href: "#/questions?" + p, class: r.view !== "overview" ? "on" : null, text: "Questions" }));
    if (D.datasets.length > 1) {
      const sel = h("select", { "aria-label": "dataset", onchange: function () { go(r.view === "q" ? "questions" : r.view, new URLSearchParams({ d: sel.value })); } });
      D.datasets.forEach(function (x, i) { add(sel, h("option", { value: i, selected: i === d, text: x.dataset })); });
      add(el, sel);
    }
  }

  function render() {
    const r = route();
    nav(r);
    main.innerHTML = "";
    const d = ds(r.params);
    if (!d) { add(main, h("p", { text: "No runs in this explorer." })); return; }
    if (r.view === "questions") renderQuestions(d, r.params);
    else if (r.view === "q") renderQuestion(d, r.params);
    else renderOverview(d, r.params);
    window.scrollTo(0, 0);
    window.__explorerRendered = performance.now();  // when the view is in the DOM (scripts/bench_explore.py)
  }

  // -- overview ---------------------------------------------------------------------------------
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
    const head = ["method", "health", d.label + " (95% interval)", "n"].concat(d.groups.map(function (g) { return groupName(d, g); }))
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
            h("table", null, hv.checks.map(function (c) {
              return h("tr", null, h("td", null, healthBadge({ status: c.status, mark: c.message })), h("td", { text: c.scope }),
                h("td", { text: c.name }), h("td", { text: c.message }));
            }))) : null),
        h("td", { class: "num", title: hl.interval }, num(hl.value), h("span", { class: "muted", text: " [" + num(hl.lo) + ", " + num(hl.hi) + "]" })),
        h("td", { class: "num", text: hl.n === null ? "–" : hl.n }),
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

  // -- the question table -----------------------------------------------------------------------
  const RELATIONS = { rw: "A right, B wrong", wr: "A wrong, B right", rr: "both right", ww: "both wrong", gt: "A scores higher", lt: "B scores higher" };

  function filtered(d, params) {
    const q = (params.get("q") || "").toLowerCase().trim();
    const label = params.get("label"), lm = params.get("lm") || "any";
    const rel = params.get("rel"), a = params.get("a"), b = params.get("b");
    const flag = params.get("flag"), fm = params.get("fm") || "any";
    const attrWant = d.attrs.map(function (x) { return params.get("attr." + x); });
    const li = label ? LABELS.indexOf(label) : -1;
    const fbit = flag ? FLAGS[flag] : 0;
    const rows = d.rows.filter(function (row) {
      for (let i = 0; i < attrWant.length; i++) if (attrWant[i] !== null && String(row[1][i]) !== attrWant[i]) return false;
      const cells = row[4];
      if (li >= 0) {
        const hit = function (c) { return c && c[1] === li; };
        if (lm === "any" ? !cells.some(hit) : lm === "all" ? !cells.every(hit) : !hit(cells[+lm])) return false;
      }
      if (fbit) {
        const fl = function (c) { return c && (c[2] & fbit); };
        if (fm === "any" ? !cells.some(fl) : !fl(cells[+fm])) return false;
      }
      if (rel && a !== null && b !== null && a !== "" && b !== "") {
        const ca = cells[+a], cb = cells[+b];
        if (!ca || !cb) return false;
        const ra = ca[1] === 0, rb = cb[1] === 0;  // LABELS[0] is "correct": full credit
        const ok = { rw: ra && !rb, wr: !ra && rb, rr: ra && rb, ww: !ra && !rb,
                     gt: (ca[0] || 0) > (cb[0] || 0), lt: (ca[0] || 0) < (cb[0] || 0) }[rel];
        if (!ok) return false;
      }
      if (q && !(row[2].toLowerCase().includes(q) || row[3].toLowerCase().includes(q) || row[0].toLowerCase().includes(q) ||
                 cells.some(function (c) { return c && c[4].toLowerCase().includes(q); }))) return false;
      return true;
    });
    const sort = params.get("sort"), asc = params.get("dir") === "asc";
    if (sort) {
      let key;
      if (sort[0] === "m") { const i = +sort.slice(1); key = function (r) { const c = r[4][i]; return c && c[0] !== null ? c[0] : -1; }; }
      else if (sort[0] === "a") { const i = +sort.slice(1); key = function (r) { return String(r[1][i]); }; }
      else if (sort === "question") key = function (r) { return r[2]; };
      else key = function (r) { return r[0]; };
      const cmp = new Intl.Collator("en", { numeric: true }).compare;
      rows.sort(function (x, y) {
        const kx = key(x), ky = key(y);
        const c = typeof kx === "number" ? kx - ky : cmp(kx, ky);
        return asc ? c : -c;
      });
    }
    return rows;
  }

  function select(name, label, options, value, onchange) {
    const sel = h("select", { name: name, onchange: onchange });
    options.forEach(function (o) { add(sel, h("option", { value: o[0], selected: String(o[0]) === String(value), text: o[1] })); });
    return h("label", null, label, sel);
  }

  function renderQuestions(d, params) {
    const methods = d.methods.map(function (m, i) { return [i, m.label]; });
    function set(key) {
      return function (ev) {
        const p = new URLSearchParams(params);
        if (ev.target.value === "" || ev.target.value === null) p.delete(key); else p.set(key, ev.target.value);
        go("questions", p);
      };
    }
    const bar = h("div", { class: "filters" });
    d.attrs.forEach(function (a, i) {
      const values = Array.from(new Set(d.rows.map(function (r) { return String(r[1][i]); })));
      values.sort(new Intl.Collator("en", { numeric: true }).compare);
      add(bar, select("attr." + a, a === d.group_field ? d.group_label : a,
        [["", "all"]].concat(values.map(function (v) { return [v, groupNameIf(d, a, v)]; })), params.get("attr." + a) || "", set("attr." + a)));
    });
    add(bar, select("label", "failure label", [["", "any"]].concat(LABELS.map(function (l) { return [l, l]; })), params.get("label") || "", set("label")));
    add(bar, select("lm", "… of method", [["any", "any method"], ["all", "every method"]].concat(methods), params.get("lm") || "any", set("lm")));
    add(bar, select("a", "method A", [["", "–"]].concat(methods), params.get("a") || "", set("a")));
    add(bar, select("rel", "outcome", [["", "any"]].concat(Object.keys(RELATIONS).map(function (k) { return [k, RELATIONS[k]]; })), params.get("rel") || "", set("rel")));
    add(bar, select("b", "method B", [["", "–"]].concat(methods), params.get("b") || "", set("b")));
    add(bar, select("flag", "flag", [["", "any"]].concat(Object.keys(FLAGS).map(function (f) { return [f, f]; })), params.get("flag") || "", set("flag")));
    add(bar, select("fm", "… of method", [["any", "any method"]].concat(methods), params.get("fm") || "any", set("fm")));
    const search = h("input", { type: "search", name: "q", placeholder: "question, gold or answer text", value: params.get("q") || "" });
    let timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { const p = new URLSearchParams(params); if (search.value) p.set("q", search.value); else p.delete("q"); history.replaceState(null, "", "#/questions?" + p); params = p; draw(); }, 200);
    });
    add(bar, h("label", null, "search", search));
    add(bar, h("a", { href: "#/questions?d=" + (params.get("d") || 0), text: "reset" }));
    add(main, bar);
    const count = h("p", null, h("span", { id: "count" }), " of " + d.rows.length + " questions",
      h("span", { class: "muted", text: " · click a header to sort · right = label correct (the protocol's full credit) · " }),
      h("span", { class: "legend" }, LABELS.filter(function (l) { return SHORT[l]; }).map(function (l) { return [pill(l), h("span", { class: "muted", text: l + "  " })]; })));
    add(main, count);
    const table = h("table", { class: "q", id: "qtable" });
    const sort = params.get("sort"), asc = params.get("dir") === "asc";
    function th(key, text) {
      return h("th", { class: sort === key ? "sorted" + (asc ? " asc" : "") : null, text: text, onclick: function () {
        const p = new URLSearchParams(params);
        p.set("sort", key);
        p.set("dir", sort === key && !asc ? "asc" : "desc");
        if (sort !== key && key[0] !== "m") p.set("dir", "asc");
        go("questions", p);
      } });
    }
    add(table, h("thead", null, h("tr", null, th("id", "question id"), d.attrs.length ? th("a0", d.attrs[0] === d.group_field ? d.group_label : d.attrs[0]) : null,
      th("question", "question"), h("th", { text: "gold" }), d.methods.map(function (m, i) { return th("m" + i, m.label); }))));
    const body = h("tbody");
    add(table, body);
    add(main, table);
    const more = h("button", { class: "more", text: "show more" });
    add(main, more);
    let rows = [], shown = 0;
    function drawMore() {
      const frag = document.createDocumentFragment();
      const end = Math.min(rows.length, shown + PAGE);
      for (let i = shown; i < end; i++) frag.appendChild(rowEl(d, rows[i], params));
      body.appendChild(frag);
      shown = end;
      more.style.display = shown < rows.length ? "" : "none";
    }
    function draw() {
      const t0 = performance.now();
      rows = filtered(d, params);
      window.__explorerList = rows.map(function (r) { return r[0]; });
      document.getElementById("count").textContent = rows.length;
      body.innerHTML = "";
      shown = 0;
      drawMore();
      window.__explorerDrawn = { at: performance.now(), ms: performance.now() - t0, rows: rows.length };  // scripts/bench_explore.py
    }
    more.addEventListener("click", drawMore);
    if ("IntersectionObserver" in window) new IntersectionObserver(function (e) { if (e[0].isIntersecting && shown < rows.length) drawMore(); }).observe(more);
    draw();
  }

  function groupNameIf(d, attr, v) { return attr === d.group_field && d.group_names[v] ? d.group_names[v] + " (" + v + ")" : v; }

  function rowEl(d, row, params) {
    const p = new URLSearchParams(params);
    p.set("id", row[0]);
    const href = "#/q?" + p;
    const flagNames = Object.keys(FLAGS);
    return h("tr", { "data-qid": row[0] },
      h("td", null, h("a", { href: href, text: row[0] })),
      d.attrs.length ? h("td", { text: groupNameIf(d, d.attrs[0], String(row[1][0])) }) : null,
      h("td", { class: "qtext" }, h("a", { href: href, text: row[2], style: "color:inherit;text-decoration:none" }),
        d.attrs.length > 1 ? h("div", { class: "muted", text: d.attrs.slice(1).map(function (a, i) { return a + " " + row[1][i + 1]; }).join(" · ") }) : null),
      h("td", { class: "gold", text: row[3] }),
      row[4].map(function (c) {
        if (!c) return h("td", { class: "muted", text: "–" });
        const flags = flagNames.filter(function (f) { return c[2] & FLAGS[f]; });
        return h("td", { class: "cell t-" + LABELS[c[1]], title: LABELS[c[1]] + "\n" + c[4] + (c[3] !== null ? "\n[" + c[3] + " context tokens]" : "") },
          pill(LABELS[c[1]]), h("span", { class: "s", text: num(c[0], 2) }),
          flags.length ? h("span", { class: "flag", title: flags.join(", "), text: "!" }) : null);
      }));
  }

  // -- the question page ------------------------------------------------------------------------
  function textFile(id) {
    const starts = D.text_files;
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= id) lo = mid; else hi = mid - 1; }
    return lo;
  }
  function pad(n) { return ("000" + n).slice(-4); }
  function text(id) { const f = loaded.t[pad(textFile(id))]; return f.texts[id - f.start]; }

  function renderQuestion(d, params) {
    const id = params.get("id");
    const idx = d.rows.findIndex(function (r) { return r[0] === id; });
    if (idx < 0) { add(main, h("p", { class: "err", text: "No question " + id + " in " + d.dataset + "." })); return; }
    add(main, h("p", { text: "loading question…", id: "qloading" }));
    const stem = d.prefix + "-" + pad(Math.floor(idx / d.chunk));
    chunk("q", stem).then(function (c) {
      const q = c[id];
      const files = new Set();
      q.methods.forEach(function (m) { if (m) m.context.blocks.forEach(function (b) { files.add(pad(textFile(b[0]))); }); });
      return Promise.all(Array.from(files).map(function (f) { return chunk("t", f); })).then(function () { return q; });
    }).then(function (q) { main.innerHTML = ""; questionPage(d, q, params); window.__explorerQuestion = performance.now(); })
      .catch(function (e) { main.innerHTML = ""; add(main, h("p", { class: "err", text: String(e) })); });
  }

  function questionPage(d, q, params) {
    const back = new URLSearchParams(params);
    back.delete("id");
    const list = window.__explorerList || filtered(d, back).map(function (r) { return r[0]; });
    const at = list.indexOf(q.id);
    function link(i, label) {
      if (i < 0 || i >= list.length) return h("span", { class: "muted", text: label });
      const p = new URLSearchParams(params); p.set("id", list[i]);
      return h("a", { href: "#/q?" + p, text: label });
    }
    add(main, h("div", { class: "pager" }, h("a", { href: "#/questions?" + back, text: "← question table" }),
      link(at - 1, "‹ previous"), h("span", { class: "muted", text: at >= 0 ? (at + 1) + " of " + list.length + " in the table" : "" }), link(at + 1, "next ›")));
    const gold = new Set(q.gold_units);
    const head = h("div", { class: "qhead" },
      h("div", { class: "muted", text: q.id + (q.corpus_id ? " · " + q.corpus_id : "") + " · " +
        d.attrs.map(function (a, i) { return (a === d.group_field ? d.group_label : a) + " " + groupNameIf(d, a, String(q.attrs[i])); }).join(" · ") }),
      h("div", { class: "qt", text: q.question }),
      h("div", { class: "kv" }, h("b", { text: "gold items: " }), (Array.isArray(q.gold) ? q.gold : [q.gold]).map(function (g) { return h("span", { class: "chip", text: String(g) }); })),
      h("div", { class: "kv", id: "gold-units" }, h("b", { text: "gold units: " }), q.gold_units.length ? q.gold_units.map(function (u) { return h("span", { class: "chip gold", text: u }); }) : "none (nothing to retrieve)"),
      Object.keys(q.extra).map(function (k) { return h("div", { class: "kv" }, h("b", { text: k + ": " }), JSON.stringify(q.extra[k])); }));
    add(main, head);
    add(main, glance(d, q, gold));
    const cards = h("div", { class: "cards" });
    q.methods.forEach(function (m, i) { if (m) add(cards, methodCard(d, d.methods[i], m, q, gold, i)); });
    add(main, cards);
  }

  function glance(d, q, gold) {  // every method on one line each, before the cards
    return h("table", { class: "glance" }, h("tr", null, ["method", "label", d.label, "context tokens", "units sent", "gold recall", "answer"].map(function (x) { return h("th", { text: x }); })),
      q.methods.map(function (m, i) {
        if (!m) return null;
        return h("tr", null, h("td", null, h("a", { href: "#card-" + i, text: d.methods[i].label })), h("td", null, badge(m.label)),
          h("td", { class: "num", text: num(m.score) }), h("td", { class: "num", text: big(m.context.tokens) }),
          h("td", null, m.context.units.map(function (u) { return h("span", { class: "chip" + (gold.has(u) ? " gold" : ""), text: u }); })),
          h("td", { class: "num", text: num(m.diag.gold_recall, 2) }), h("td", { class: "ans", text: m.answer.length > 160 ? m.answer.slice(0, 160) + "…" : m.answer }));
      }));
  }

  function goldItemRegex(q) {
    const items = (Array.isArray(q.gold) ? q.gold : [q.gold]).map(String).filter(function (g) { return g.length >= 3; });
    if (!items.length) return null;
    return new RegExp("(" + items.map(function (g) { return esc(g).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }).join("|") + ")", "gi");
  }

  function blockEl(b, re, collapse) {
    const t = text(b[0]);
    const nl = t.indexOf("\n");
    const headTxt = t.startsWith("### ") ? (nl < 0 ? t : t.slice(0, nl)) : "";
    const bodyTxt = headTxt ? (nl < 0 ? "" : t.slice(nl + 1)) : t;
    let html = esc(bodyTxt);
    if (re) html = html.replace(re, '<mark class="gold-item">$1</mark>');
    const cls = "block" + (b[2] ? " gold-unit" : "");
    const attrs = { class: cls, "data-unit": b[1] === null ? null : b[1] };
    if (collapse && !b[2] && headTxt) {
      return h("div", attrs, h("details", null, h("summary", { text: headTxt }), h("span", { html: html })));
    }
    return h("div", attrs, headTxt ? h("div", { class: "bh", text: headTxt }) : null, h("span", { html: html }));
  }

  function methodCard(d, run, m, q, gold, i) {
    const card = h("div", { class: "card", id: "card-" + i, "data-method": run.label });
    add(card, h("h3", null, run.label, badge(m.label), h("span", { class: "muted", text: d.label + " " + num(m.score) })));
    if (m.flags.length) add(card, h("div", { class: "kv flags" }, h("span", { class: "flag", text: "! " }), m.flags.join(" · ") +
      (m.health.length ? " (" + m.health.join(", ") + ")" : "")));
    add(card, h("div", { class: "answer", text: m.answer || "(empty answer)" }));
    if (m.answered_by && m.answered_by !== "shared") add(card, h("div", { class: "muted", text: "answered by " + m.answered_by }));
    add(card, judgeEl(m.judge));
    const c = m.context;
    const units = c.units.map(function (u) { return h("span", { class: "chip" + (gold.has(u) ? " gold" : ""), text: u }); });
    const audit = c.cap_audit || {};
    add(card, h("h4", { text: "Context" }),
      h("div", { class: "kv" }, h("b", { text: "units sent: " }), units.length ? units : "none",
        h("span", { class: "muted", text: " · " + big(c.tokens) + " tokens · gold recall " + num(m.diag.gold_recall, 2) +
          " · gold token share " + num(m.diag.gold_token_share, 2) })),
      h("div", { class: "kv" }, h("b", { text: "cap: " }), c.cap || "–",
        c.dropped.length ? h("span", { class: "err", text: " · dropped at the cap: " + c.dropped.join(", ") }) : h("span", { class: "muted", text: " · nothing dropped" }),
        c.truncated ? h("span", { class: "err", text: " (truncated)" }) : null),
      audit && Object.keys(audit).length ? h("div", { class: "kv" }, h("b", { text: "cap audit: " }),
        "verbatim text of units " + JSON.stringify(audit.verbatim_units || []) + "; of units the method did not report " +
        JSON.stringify(audit.verbatim_beyond_units || []) + (audit.uncapped_tokens !== null && audit.uncapped_tokens !== undefined ?
          "; " + audit.uncapped_tokens + " tokens not traceable to a unit (" + num(audit.uncapped_share, 2) + " of the context)" : "")) : null);
    const re = goldItemRegex(q);
    const ctx = h("div", { class: "ctx" });
    const collapse = c.blocks.length > 6;
    c.blocks.forEach(function (b) { add(ctx, blockEl(b, re, collapse)); });
    if (!c.blocks.length) add(ctx, h("span", { class: "muted", text: "(empty context)" }));
    if (c.blocks.length && !c.blocks.some(function (b) { return b[1] !== null; })) {
      add(card, h("div", { class: "note", text: "This context names no unit in its block headers: gold units are marked in the unit list above only." }));
    }
    add(card, ctx);
    const u = m.usage || {};
    add(card, h("h4", { text: "Tokens" }), h("table", { class: "credits" }, h("tr", null, ["stage", "calls", "fresh", "prompt", "completion"].map(function (x) { return h("th", { text: x }); })),
      Object.keys(u).map(function (st) { const s = u[st]; return h("tr", null, h("td", { text: st }), [s.calls, s.fresh_calls, s.prompt_tokens, s.completion_tokens].map(function (x) { return h("td", { class: "num", text: x === undefined ? "–" : x }); })); })));
    add(card, h("div", { class: "muted", text: "Cost: this run's " + (run.usd ? "USD " + run.usd.toPrecision(3) + " over " + run.n_questions + " questions (all stages)" : "models are unpriced (0 USD)") }));
    if (m.index && (Object.keys(m.index.units || {}).length || Object.keys(m.index.files || {}).length)) {
      add(card, h("h4", { text: "Index" }), h("div", { class: "kv" },
        Object.keys(m.index.units).map(function (k) { return h("a", { class: "chip" + (gold.has(k) ? " gold" : ""), href: m.index.units[k], target: "_blank", text: "unit " + k }); }),
        Object.keys(m.index.files).map(function (k) { return h("a", { class: "chip", href: m.index.files[k], target: "_blank", text: k }); })));
    }
    add(card, h("details", null, h("summary", { class: "muted", text: "retrieval record" }), h("pre", { class: "json", text: m.retrieval })));
    return card;
  }

  function creditCls(v) { return v === 1 ? "c1" : v === 0 ? "c0" : "cp"; }

  function judgeEl(j) {
    const box = h("div", null, h("h4", { text: "Judges" }));
    if (j.missing) { add(box, h("p", { class: "err", text: "no judgment for this question" })); return box; }
    if (j.credits.length) {
      const items = j.gold || [];
      const n = Math.max.apply(null, j.credits.map(function (c) { return c.per_item.length; }));
      add(box, h("table", { class: "credits" },
        h("tr", null, h("th", { text: "gold item" }), j.credits.map(function (c) { return h("th", { text: c.name, title: c.note || "" }); })),
        Array.from({ length: n }, function (_, i) {
          return h("tr", null, h("td", { text: items[i] !== undefined ? items[i] : "#" + (i + 1) }),
            j.credits.map(function (c) { const v = c.per_item[i]; return h("td", { class: "num " + creditCls(v), text: v === undefined ? "–" : v }); }));
        })));
      j.credits.forEach(function (c) {
        if (c.claimed) add(box, h("div", { class: "kv" }, h("b", { text: c.name + " claimed: " }), c.claimed.length ? c.claimed.map(function (x) { return h("span", { class: "chip", text: String(x) }); }) : "nothing"));
      });
    }
    j.verdicts.forEach(function (v) {
      add(box, h("div", { class: "kv" }, h("b", { text: v.name + ": " }), h("span", { class: "badge " + (v.value ? "ok" : "fail"), text: v.label || String(v.value) }),
        v.reason ? " " + v.reason : ""));
    });
    if (Object.keys(j.scores).length) add(box, h("div", { class: "kv" }, h("b", { text: "scores (raw credit): " }), Object.keys(j.scores).map(function (k) { return k + " " + num(j.scores[k]) + "  "; })));
    Object.keys(j.reasons).forEach(function (k) {
      const v = j.reasons[k];
      add(box, h("div", { class: "kv" }, h("b", { text: k.replace(/_/g, " ") + ": " }), Array.isArray(v) ? v.join("; ") : String(v)));
    });
    if (Object.keys(j.order).length) {
      add(box, h("div", { class: "kv" }, h("b", { text: "order judge: " }), "mapping " + JSON.stringify(j.order.mapping) + " · items " + JSON.stringify(j.order.items) +
        (j.order.explanation ? " · " + j.order.explanation : "") + (j.order.prompt ? " (" + j.order.prompt + ")" : "")));
    }
    if (Object.keys(j.other).length) add(box, h("details", null, h("summary", { class: "muted", text: "other judgment fields" }), json(j.other)));
    return box;
  }

  window.addEventListener("hashchange", render);
  render();
})();
