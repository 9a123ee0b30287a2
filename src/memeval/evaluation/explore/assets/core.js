/* core.js: data, lazy loading of chunks (classic scripts: file:// allows no fetch), DOM helpers,
   routing (#/overview, #/questions?..., #/q?d=0&id=...). Reads window.MEMEVAL_EXPLORER (data.js). */
const D = window.MEMEVAL_EXPLORER;
const LABELS = D.labels, FLAGS = D.flags;
const PAGE = 100;  // table rows rendered at a time (more on scroll)
const main = document.getElementById("main");
const loaded = { q: {}, t: {} }, waiting = {};
let vegaReady = null;

window.MEMEVAL_EXPLORER_LOAD = function (kind, stem, data) {  // data: JSON, or gzip+base64 of it
  (typeof data === "string" ? unpack(data) : Promise.resolve(data)).then(function (d) {
    loaded[kind][stem] = d;
    (waiting[kind + stem] || []).forEach(function (w) { w[0](d); });
    delete waiting[kind + stem];
  }, function (e) {
    (waiting[kind + stem] || []).forEach(function (w) { w[1](new Error("cannot read " + kind + "/" + stem + ".js: " + e)); });
    delete waiting[kind + stem];
  });
};
function unpack(b64) {
  const bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const text = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(text).text().then(JSON.parse);
}

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
const SHORT = { correct: "✓", generation_miss: "gen", partial_retrieval: "part", retrieval_miss: "ret", unjudged: "?", wrong_unseen: "✗" };
function pill(label) { return h("span", { class: "badge l-" + label, title: label, text: SHORT[label] || "–" }); }
function healthBadge(hv) {
  if (!hv) return h("span", { class: "badge none", title: "no health.json: run `memeval health RUN_DIR`", text: "–" });
  return h("span", { class: "badge " + hv.status, title: hv.mark, text: hv.status.replace("_", " ") });  // not_measured: "not measured"
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
  const p = keep(r.params, { d: d });  // the picked methods, health filter and A/B follow the user
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

