/* table.js: the question table, its filters and sorting, drawn PAGE rows at a time. */
const RELATIONS = { rw: "A right, B wrong", wr: "A wrong, B right", rr: "both right", ww: "both wrong", gt: "A scores higher", lt: "B scores higher" };

function filtered(d, params, among) {
  // among: the method columns "any method" / "every method" read (the picked ones; default every run)
  among = among || d.methods.map(function (_, i) { return i; });
  const q = (params.get("q") || "").toLowerCase().trim();
  const label = params.get("label");
  const lmRaw = params.get("lm") || "any", fmRaw = params.get("fm") || "any";
  const lm = lmRaw === "any" || lmRaw === "all" ? lmRaw : methodIndex(d, lmRaw);
  const fm = fmRaw === "any" ? fmRaw : methodIndex(d, fmRaw);
  const rel = params.get("rel"), a = methodIndex(d, params.get("a")), b = methodIndex(d, params.get("b"));
  const flag = params.get("flag");
  const attrWant = d.attrs.map(function (x) { return params.get("attr." + x); });
  const li = label ? LABELS.indexOf(label) : -1;
  const fbit = flag ? FLAGS[flag] : 0;
  const rows = d.rows.filter(function (row) {
    for (let i = 0; i < attrWant.length; i++) if (attrWant[i] !== null && String(row[1][i]) !== attrWant[i]) return false;
    const cells = row[4];
    const seen = among.map(function (i) { return cells[i]; });
    if (li >= 0) {
      const hit = function (c) { return c && c[1] === li; };
      if (lm === "any" ? !seen.some(hit) : lm === "all" ? !seen.every(hit) : !hit(cells[lm])) return false;
    }
    if (fbit) {
      const fl = function (c) { return c && (c[2] & fbit); };
      if (fm === "any" ? !seen.some(fl) : !fl(cells[fm])) return false;
    }
    if (rel && a >= 0 && b >= 0) {
      const ca = cells[a], cb = cells[b];
      if (!ca || !cb) return false;
      const ra = ca[1] === 0, rb = cb[1] === 0;  // LABELS[0] is "correct": full credit
      const ok = { rw: ra && !rb, wr: !ra && rb, rr: ra && rb, ww: !ra && !rb,
                   gt: (ca[0] || 0) > (cb[0] || 0), lt: (ca[0] || 0) < (cb[0] || 0) }[rel];
      if (!ok) return false;
    }
    if (q && !(row[2].toLowerCase().includes(q) || row[3].toLowerCase().includes(q) || row[0].toLowerCase().includes(q) ||
               seen.some(function (c) { return c && c[4].toLowerCase().includes(q); }))) return false;
    return true;
  });
  const sort = params.get("sort"), asc = params.get("dir") === "asc";
  if (sort) {
    let key;
    if (sortMethod(d, sort) >= 0) { const i = sortMethod(d, sort); key = function (r) { const c = r[4][i]; return c && c[0] !== null ? c[0] : -1; }; }
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

function sortMethod(d, sort) {  // sort=m-NAME (a method's score), or m3 from an older URL
  if (!sort || sort[0] !== "m") return -1;
  return sort[1] === "-" ? methodIndex(d, sort.slice(2)) : /^m\d+$/.test(sort) ? methodIndex(d, sort.slice(1)) : -1;
}

function select(name, label, options, value, onchange) {
  const sel = h("select", { name: name, onchange: onchange });
  options.forEach(function (o) { add(sel, h("option", { value: o[0], selected: String(o[0]) === String(value), text: o[1] })); });
  return h("label", null, label, sel);
}

function renderQuestions(d, params) {
  const elig = eligible(d, params);
  const explicit = picked(d, params) !== null;
  const nameOf = function (v) { const i = methodIndex(d, v); return i >= 0 ? methodName(d, i) : v; };
  // A and B, the method a label or flag filter names, the sorted method: kept when columns are cut to fit
  const pinned = [params.get("a"), params.get("b"), params.get("lm"), params.get("fm")].map(function (v) { return methodIndex(d, v); })
    .concat([sortMethod(d, params.get("sort"))]).filter(function (i, k, all) { return i >= 0 && elig.includes(i) && all.indexOf(i) === k; });
  let cols = pinned.concat(elig.filter(function (i) { return !pinned.includes(i); }));
  const methods = elig.map(function (i) { return [methodName(d, i), d.methods[i].label + (d.methods[i].failed ? " (fail)" : "")]; });
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
  add(bar, select("lm", "… of method", [["any", "any method shown"], ["all", "every method shown"]].concat(methods), nameOf(params.get("lm") || "any"), set("lm")));
  add(bar, select("a", "method A", [["", "–"]].concat(methods), nameOf(params.get("a") || ""), set("a")));
  add(bar, select("rel", "outcome", [["", "any"]].concat(Object.keys(RELATIONS).map(function (k) { return [k, RELATIONS[k]]; })), params.get("rel") || "", set("rel")));
  add(bar, select("b", "method B", [["", "–"]].concat(methods), nameOf(params.get("b") || ""), set("b")));
  add(bar, select("flag", "flag", [["", "any"]].concat(Object.keys(FLAGS).map(function (f) { return [f, f]; })), params.get("flag") || "", set("flag")));
  add(bar, select("fm", "… of method", [["any", "any method shown"]].concat(methods), nameOf(params.get("fm") || "any"), set("fm")));
  const search = h("input", { type: "search", name: "q", placeholder: "question, gold or answer text", value: params.get("q") || "" });
  let timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { const p = new URLSearchParams(params); if (search.value) p.set("q", search.value); else p.delete("q"); history.replaceState(null, "", "#/questions?" + p); params = p; draw(); }, 200);
  });
  add(bar, h("label", null, "search", search));
  add(bar, h("a", { href: "#/questions?" + keep(params, {}), text: "reset filters" }));
  add(main, bar);
  const count = h("p", null, h("span", { id: "count" }), " of " + d.rows.length + " questions",
    h("span", { class: "muted", text: " · click a header to sort · the marks are explained below the table" }));
  add(main, count);
  const table = h("table", { class: "q", id: "qtable" });
  const wrap = h("div", { class: "qwrap" }, table);
  add(main, wrap);
  const sort = params.get("sort"), asc = params.get("dir") === "asc";
  function th(key, content, attrs) {
    return h("th", Object.assign({ class: sort === key ? "sorted" + (asc ? " asc" : "") : null, onclick: function () {
      const p = new URLSearchParams(params);
      p.set("sort", key);
      p.set("dir", sort === key && !asc ? "asc" : "desc");
      if (sort !== key && key[0] !== "m") p.set("dir", "asc");
      go("questions", p);
    } }, attrs || {}), content);
  }
  const sortKey = function (i) { const k = "m-" + methodName(d, i); return sortMethod(d, sort) === i ? sort : k; };
  function header(cs) {
    return h("thead", null, h("tr", null, th("id", "question id"), d.attrs.length ? th("a0", d.attrs[0] === d.group_field ? d.group_label : d.attrs[0]) : null,
      th("question", "question"), h("th", { text: "gold" }),
      cs.map(function (i) { const m = d.methods[i]; return th(sortKey(i), [nameNodes(m.label), failedMark(m)], { class: "m" + (m.failed ? " failed" : "") + (sortMethod(d, sort) === i ? " sorted" + (asc ? " asc" : "") : ""), "data-method": m.label }); })));
  }
  function widest(values) { return values.reduce(function (a, v) { return String(v).length > a.length ? String(v) : a; }, ""); }
  function sampleRow(cs) {  // the widest a row gets: the longest id, group and gold, every cell at its widest
    const cell = function () { return h("td", { class: "cell" }, pill("partial_retrieval"), h("span", { class: "s", text: "0.00" }), h("span", { class: "flag", text: "!" })); };
    return h("tr", null, h("td", { text: widest(d.rows.map(function (r) { return r[0]; })) }),
      d.attrs.length ? h("td", { text: widest(d.rows.map(function (r) { return groupNameIf(d, d.attrs[0], String(r[1][0])); })) }) : null,
      h("td", { class: "qtext", text: "x ".repeat(200) }), h("td", { class: "gold", text: widest(d.rows.map(function (r) { return r[3].slice(0, 120); })) }),
      cs.map(cell));
  }
  function overflows() { return wrap.scrollWidth > wrap.clientWidth + 1; }
  if (!explicit) {  // as many method columns as fit the window, A and B (and the filters' methods) first
    add(table, header(cols), h("tbody", null, sampleRow(cols)));
    while (cols.length > 1 && overflows()) {
      cols = cols.slice(0, -1);
      table.innerHTML = "";
      add(table, header(cols), h("tbody", null, sampleRow(cols)));
    }
    table.innerHTML = "";
  }
  cols = cols.slice().sort(function (x, y) { return x - y; });  // the runs' order
  const cut = elig.length - cols.length;
  const status = !elig.length ? "" : explicit ? cols.length + " picked" :
    cut ? "showing " + cols.length + " of " + elig.length + ": the columns that fit this window" + (pinned.length ? " (A, B and filtered methods first)" : "") + "; tick others to add them (the table then scrolls sideways, question ids fixed)"
      : "every method fits";
  main.insertBefore(methodPicker(d, params, "questions", status, cols), main.firstChild);
  if (!elig.length) { wrap.remove(); add(main, noneShown(d, params)); return; }
  add(table, header(cols));
  const body = h("tbody");
  add(table, body);
  const more = h("button", { class: "more", text: "show more" });
  add(main, more);
  add(main, tableLegend(d));
  let rows = [], shown = 0;
  function drawMore() {
    const frag = document.createDocumentFragment();
    const end = Math.min(rows.length, shown + PAGE);
    for (let i = shown; i < end; i++) frag.appendChild(rowEl(d, rows[i], params, cols));
    body.appendChild(frag);
    shown = end;
    more.style.display = shown < rows.length ? "" : "none";
    wrap.classList.toggle("scroll-x", overflows());  // more columns picked than fit: scroll inside the box
  }
  function draw() {
    const t0 = performance.now();
    rows = filtered(d, params, cols);
    window.__explorerList = rows.map(function (r) { return r[0]; });
    window.__explorerColumns = cols.map(function (i) { return methodName(d, i); });
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

function tableLegend(d) {
  const flagged = h("span", { class: "flag", text: "!" });
  return legendBox(labelLegend(d).concat([
    [h("span", { class: "cell t-correct", text: "0.50" }), "the cell's number: the question's " + d.label + " for that method; its background is the label's color"],
    [flagged, "a flag on the answer: " + Object.keys(FLAGS).join(", ") + " (hover it for which; the question page lists them)"],
    [h("span", { class: "badge fail mini", text: "fail" }), "in a column header: that run failed a health check (the picker can hide it)"],
    [h("span", { class: "muted", text: "–" }), "no answer of that run for this question"],
    [h("span", { class: "muted", text: "A / B" }), "method A and method B: the outcome filter compares them, and a question page shows them side by side"],
  ]));
}

function groupNameIf(d, attr, v) { return attr === d.group_field && d.group_names[v] ? d.group_names[v] + " (" + v + ")" : v; }

function rowEl(d, row, params, cols) {
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
    cols.map(function (i) {
      const c = row[4][i];
      if (!c) return h("td", { class: "muted", text: "–" });
      const flags = flagNames.filter(function (f) { return c[2] & FLAGS[f]; });
      return h("td", { class: "cell t-" + LABELS[c[1]], title: LABELS[c[1]] + "\n" + c[4] + (c[3] !== null ? "\n[" + c[3] + " context tokens]" : "") },
        pill(LABELS[c[1]]), h("span", { class: "s", text: num(c[0], 2) }),
        flags.length ? h("span", { class: "flag", title: flags.join(", "), text: "!" }) : null);
    }));
}

