/* methods.js: which methods a view shows, by name in the URL (methods=a,b,c; hide=failed; a=, b=,
   lm=, fm=, sort=m-NAME; an index from an older URL still resolves), the method picker, and the
   legend box every view ends its marks with. */
function methodIndex(d, v) {  // a method's label, its method name, or (older URLs) its index; -1 if none
  if (v === null || v === undefined || v === "") return -1;
  let i = d.methods.findIndex(function (m) { return m.label === v; });
  if (i < 0) i = d.methods.findIndex(function (m) { return m.method === v; });
  if (i < 0 && /^\d+$/.test(v) && +v < d.methods.length) i = +v;
  return i;
}
function methodName(d, i) { return d.methods[i].label; }
function hideFailed(params) { return params.get("hide") === "failed"; }
function picked(d, params) {  // methods named by methods=..., in the runs' order; null when not set
  const raw = params.get("methods");
  if (raw === null) return null;
  const want = new Set(raw.split(",").map(function (v) { return methodIndex(d, v.trim()); }));
  return d.methods.map(function (_, i) { return i; }).filter(function (i) { return want.has(i); });
}
function eligible(d, params) {  // what the picker allows: its choice (or every run), failed runs out if hidden
  const chosen = picked(d, params) || d.methods.map(function (_, i) { return i; });
  return chosen.filter(function (i) { return !(hideFailed(params) && d.methods[i].failed); });
}
function keep(params, extra) {  // the parameters every view carries over (dataset, methods, health, A and B)
  const p = new URLSearchParams();
  ["d", "methods", "hide", "a", "b"].forEach(function (k) { if (params.get(k) !== null) p.set(k, params.get(k)); });
  for (const k in extra || {}) p.set(k, extra[k]);
  return p;
}
function nameNodes(label) {  // a method name that may wrap after its underscores (narrow columns)
  return label.split("_").map(function (part, i, all) { return i < all.length - 1 ? [part + "_", h("wbr")] : part; });
}
function failedMark(m) {
  return m.failed ? h("span", { class: "badge fail mini", title: "this run failed a health check: " + (m.health ? m.health.mark : ""), text: "fail" }) : null;
}

function methodPicker(d, params, view, status, current) {
  // checkboxes choosing the methods shown (current: the ones the view shows, if it cut its columns
  // to fit); no methods= parameter: the view shows every run, or what fits
  const chosen = current || picked(d, params);
  const on = new Set(chosen || eligible(d, new URLSearchParams()));
  function goWith(p) { go(view, p); }
  const box = h("div", { class: "picker", id: "picker" });
  add(box, h("span", { class: "picker-title", text: "Methods shown:" }));
  d.methods.forEach(function (m, i) {
    const hidden = hideFailed(params) && m.failed;
    const cb = h("input", { type: "checkbox", name: "method", value: m.label, checked: on.has(i) && !hidden, disabled: hidden,
      onchange: function () {
        const now = new Set((chosen || d.methods.map(function (_, k) { return k; })));
        if (cb.checked) now.add(i); else now.delete(i);
        const p = new URLSearchParams(params);
        p.set("methods", d.methods.map(function (_, k) { return k; }).filter(function (k) { return now.has(k); }).map(function (k) { return methodName(d, k); }).join(","));
        goWith(p);
      } });
    add(box, h("label", { class: "pick" + (m.failed ? " failed" : ""), title: m.failed ? "failed a health check" : null }, cb, " " + m.label, failedMark(m)));
  });
  const all = new URLSearchParams(params);
  all.set("methods", d.methods.map(function (m) { return m.label; }).join(","));
  const fit = new URLSearchParams(params);
  fit.delete("methods");
  add(box, h("a", { href: "#/" + view + "?" + all, text: "all" }),
    h("a", { href: "#/" + view + "?" + fit, text: view === "questions" ? "what fits" : "reset", title: "no methods= in the URL: " +
      (view === "questions" ? "as many columns as fit the window (A and B first)" : "every run") }));
  const nFailed = d.methods.filter(function (m) { return m.failed; }).length;
  const hide = h("input", { type: "checkbox", name: "hide-failed", checked: hideFailed(params), onchange: function () {
    const p = new URLSearchParams(params);
    if (hide.checked) p.set("hide", "failed"); else p.delete("hide");
    goWith(p);
  } });
  add(box, h("label", { class: "pick hide", title: "health.json status fail (`memeval health RUN_DIR`)" }, hide,
    " hide runs that failed a health check (" + nFailed + " of " + d.methods.length + ")"));
  if (status) add(box, h("span", { class: "muted picker-status", text: status }));
  return box;
}

function noneShown(d, params) {
  return h("p", { class: "err", id: "none-shown", text: hideFailed(params) && d.methods.every(function (m) { return m.failed; })
    ? "Every run of " + d.dataset + " failed a health check: untick \u201chide runs that failed\u201d to see them (marked)."
    : "No method is picked: tick one above." });
}

function legendBox(items) {  // [[a sample of the mark (node or array), what it means], ...]
  return h("div", { class: "legend-box" }, h("b", { text: "What the marks mean" }),
    h("ul", null, items.map(function (it) { return h("li", null, h("span", { class: "sample" }, it[0]), " " + it[1]); })));
}
function healthLegend() {
  return [
    [healthBadge({ status: "ok", mark: "" }), "every health check passed (`memeval health RUN_DIR`, health.json)"],
    [healthBadge({ status: "warn", mark: "" }), "a check warned; none failed"],
    [healthBadge({ status: "fail", mark: "" }), "a check failed: this run's numbers may mean nothing (the report stars none of its differences)"],
    [healthBadge({ status: "not_measured", mark: "" }), "a check had nothing to measure"],
    [healthBadge(null), "no health.json: not checked"],
  ];
}
function labelLegend(d) {
  return LABELS.filter(function (l) { return l !== "no label"; }).map(function (l) {
    return [[pill(l), " ", badge(l)], l === "correct" ? d.correct_means : LABEL_MEANS[l] || l];
  });
}
const LABEL_MEANS = {
  generation_miss: "not full credit although the context held every gold unit (or the question has none): the answer missed",
  partial_retrieval: "not full credit; the context held some of the gold units",
  retrieval_miss: "not full credit; the context held none of the gold units",
  unjudged: "no verdict for this question",
  wrong_unseen: "not full credit; the context was not published, so retrieval cannot be told from generation",
};
