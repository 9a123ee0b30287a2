/* question.js: a question page, every method side by side (context, answer, judges). */
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

function pairOf(d, q, params) {  // method A and B of this page: the URL's, else the first two shown that answered
  const shown = eligible(d, params).filter(function (i) { return q.methods[i]; });
  let a = methodIndex(d, params.get("a")), b = methodIndex(d, params.get("b"));
  if (!shown.includes(a)) a = shown.find(function (i) { return i !== b; });
  if (!shown.includes(b) || b === a) b = shown.find(function (i) { return i !== a; });
  return { shown: shown, a: a === undefined ? -1 : a, b: b === undefined ? -1 : b };
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
  add(main, methodPicker(d, params, "q"));
  const pair = pairOf(d, q, params);
  if (!pair.shown.length) { add(main, noneShown(d, params), questionLegend(d)); return; }
  const answered = pair.shown.map(function (i) { return [methodName(d, i), d.methods[i].label + (d.methods[i].failed ? " (fail)" : "")]; });
  function choose(key) {
    return function (ev) { const p = new URLSearchParams(params); p.set(key, ev.target.value); go("q", p); };
  }
  add(main, h("div", { class: "filters pair-pick" },
    select("a", "method A (left)", answered, pair.a >= 0 ? methodName(d, pair.a) : "", choose("a")),
    select("b", "method B (right)", answered, pair.b >= 0 ? methodName(d, pair.b) : "", choose("b")),
    h("span", { class: "muted", text: "side by side below the table; the other methods shown follow. A and B stay in the URL (the question table's outcome filter compares the same two)." })));
  add(main, glance(d, q, gold, pair));
  const pairBox = h("div", { class: "pair", id: "pair" });
  [pair.a, pair.b].forEach(function (i, k) { if (i >= 0) add(pairBox, methodCard(d, d.methods[i], q.methods[i], q, gold, i, k ? "B" : "A")); });
  add(main, pairBox);
  const rest = pair.shown.filter(function (i) { return i !== pair.a && i !== pair.b; });
  if (rest.length) {
    add(main, h("h3", { text: "Other methods shown (" + rest.length + ")" }));
    const cards = h("div", { class: "cards" });
    rest.forEach(function (i) { add(cards, methodCard(d, d.methods[i], q.methods[i], q, gold, i)); });
    add(main, cards);
  }
  add(main, questionLegend(d));
}

function questionLegend(d) {
  return legendBox(labelLegend(d).concat([
    [h("span", { class: "badge fail mini", text: "fail" }), "beside a method: that run failed a health check"],
    [h("span", { class: "chip gold", text: "7" }), "a gold unit (the chapter or session the answer is in); a plain chip is a unit sent that is not gold"],
    [h("span", { class: "block gold-unit sample-block", text: "### Chapter 7" }), "a context block of a gold unit (yellow, with a gold edge)"],
    [h("mark", { class: "gold-item", text: "gold" }), "a gold item's text where it occurs in the context"],
    [h("mark", { class: "unsupported", text: "unsupported" }), "a context sentence holding content the source never writes (health: unsupported_claims)"],
    [[h("span", { class: "credit c1", text: "1" }), h("span", { class: "credit cp", text: "0.5" }), h("span", { class: "credit c0", text: "0" })], "a judge's credit for one gold item: full, partial, none"],
    [[h("span", { class: "badge ok", text: "true" }), " ", h("span", { class: "badge fail", text: "false" })], "a judge's question-level verdict"],
    [h("span", { class: "flag", text: "!" }), "flags on this answer (" + Object.keys(FLAGS).join(", ") + "), named beside it"],
    [h("span", { class: "err", text: "dropped at the cap" }), "units the method retrieved but the context cap left out"],
    [h("span", { class: "tag", text: "A" }), "method A and B, chosen above, side by side"],
  ]));
}

function glance(d, q, gold, pair) {  // every method shown on one line each, before the cards
  return h("table", { class: "glance" }, h("tr", null, ["method", "label", d.label, "context tokens", "units sent", "gold recall", "answer"].map(function (x) { return h("th", { text: x }); })),
    pair.shown.map(function (i) {
      const m = q.methods[i];
      const tag = i === pair.a ? "A" : i === pair.b ? "B" : null;
      return h("tr", { class: tag ? "paired" : null }, h("td", null, tag ? h("span", { class: "tag", text: tag }) : null,
          h("a", { href: "#card-" + i, text: d.methods[i].label }), failedMark(d.methods[i])), h("td", null, badge(m.label)),
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

// The sentences health's unsupported_claims check found in this context (its note quotes each «...»),
// as patterns over the escaped context: their words in order, with room for the labels the check cut.
function unsupportedRegexes(health) {
  const note = (health || []).find(function (x) { return x.indexOf("unsupported_claims:") === 0; });
  if (!note) return [];
  const out = [];
  (note.match(/«[^»]+»/g) || []).forEach(function (q) {
    const words = q.slice(1, -1).match(/[A-Za-z0-9]+/g) || [];
    if (words.length) out.push(new RegExp(words.slice(0, 12).map(function (w) { return esc(w); }).join("[^<]{0,40}?"), "g"));
  });
  return out;
}

function blockEl(b, re, collapse, unsupported) {
  const t = text(b[0]);
  const nl = t.indexOf("\n");
  const headTxt = t.startsWith("### ") ? (nl < 0 ? t : t.slice(0, nl)) : "";
  const bodyTxt = headTxt ? (nl < 0 ? "" : t.slice(nl + 1)) : t;
  let html = esc(bodyTxt);
  (unsupported || []).forEach(function (u) { html = html.replace(u, '<mark class="unsupported">$&</mark>'); });
  if (re) html = html.replace(re, '<mark class="gold-item">$1</mark>');
  const cls = "block" + (b[2] ? " gold-unit" : "");
  const attrs = { class: cls, "data-unit": b[1] === null ? null : b[1] };
  if (collapse && !b[2] && headTxt) {
    return h("div", attrs, h("details", null, h("summary", { text: headTxt }), h("span", { html: html })));
  }
  return h("div", attrs, headTxt ? h("div", { class: "bh", text: headTxt }) : null, h("span", { html: html }));
}

function methodCard(d, run, m, q, gold, i, tag) {
  const card = h("div", { class: "card", id: "card-" + i, "data-method": run.label, "data-side": tag || null });
  add(card, h("h3", null, tag ? h("span", { class: "tag", text: tag }) : null, run.label, failedMark(run), badge(m.label),
    h("span", { class: "muted", text: d.label + " " + num(m.score) })));
  if (m.flags.length) add(card, h("div", { class: "kv flags" }, h("span", { class: "flag", text: "! " }), m.flags.join(" · ") +
    (m.health.length ? " (" + m.health.map(function (x) { return x.split(":")[0]; }).join(", ") + ")" : "")));
  // what each check found here, folded: a content check quotes every sentence it flags
  if (m.health.length) add(card, h("details", { class: "health-found" }, h("summary", { class: "muted", text: "what the health checks found in this answer's context" }),
    h("ul", null, m.health.map(function (x) { return h("li", { text: x }); }))));
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
  const unsupported = unsupportedRegexes(m.health);
  c.blocks.forEach(function (b) { add(ctx, blockEl(b, re, collapse, unsupported)); });
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
