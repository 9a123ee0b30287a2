/* table.js: the question table, its filters and sorting, drawn PAGE rows at a time. */
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

