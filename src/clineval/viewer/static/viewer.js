// clineval view: small progressive enhancements (the pages work without JavaScript).
(function () {
  "use strict";
  var form = document.getElementById("compare-form");
  if (form) {
    var button = document.getElementById("compare-button");
    var hint = document.getElementById("compare-hint");
    var boxes = form.querySelectorAll('input[type=checkbox][name=run]');
    var update = function () {
      var n = form.querySelectorAll('input[type=checkbox][name=run]:checked').length;
      button.disabled = n !== 2;
      hint.textContent = n === 2 ? "A = the older run (baseline), B = the newer" : "select two runs (" + n + " selected)";
    };
    for (var i = 0; i < boxes.length; i++) boxes[i].addEventListener("change", update);
    update();
  }
})();

// The run page of a large run first shows its aggregates without the bootstrap intervals;
// fetch the table with them when they are ready (the server computes them meanwhile).
(function () {
  "use strict";
  var body = document.querySelector("#aggregates-body[data-fragment]");
  if (!body || !window.fetch) return;
  var url = body.getAttribute("data-fragment");
  var tries = 0;
  var load = function () {
    fetch(url, { headers: { "Accept": "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (html) {
        var box = document.createElement("div");
        box.innerHTML = html;
        var fresh = box.querySelector("#aggregates-body");
        if (fresh) body.replaceWith(fresh);
      })
      .catch(function () { if (++tries < 3) setTimeout(load, 1000); });
  };
  load();
})();

// A link to a reviewed item (#review-fact/tbfact/recall/5, from the Agreement page or the
// agreement command) on a case page without the review panel: go to the metric's evidence.
(function () {
  "use strict";
  var hash = decodeURIComponent(window.location.hash || "").replace(/^#/, "");
  if (hash.indexOf("review-") !== 0 || document.getElementById(hash)) return;
  var parts = hash.slice("review-".length).split("/");
  if (parts.length < 3 || (parts[0] !== "fact" && parts[0] !== "sentence")) return;
  var metric = parts[0] === "fact" ? parts.slice(1, -2).join("/") : parts.slice(1, -1).join("/");
  var target = document.getElementById("metric-" + metric);
  if (target) target.scrollIntoView();
})();

// The case table: choose the columns (kept per browser in localStorage); the case column stays pinned.
(function () {
  "use strict";
  var table = document.getElementById("cases-table");
  var chooser = document.getElementById("columns-chooser");
  if (!table || !chooser) return;
  var key = "clineval-hidden-columns:" + (table.getAttribute("data-run") || "");
  var hidden = {};
  try { hidden = JSON.parse(window.localStorage.getItem(key) || "{}") || {}; } catch (e) { hidden = {}; }
  var boxes = chooser.querySelectorAll("input[data-column]");
  var apply = function () {
    for (var i = 0; i < boxes.length; i++) {
      var col = boxes[i].getAttribute("data-column");
      boxes[i].checked = !hidden[col];
      var cells = table.querySelectorAll('[data-column="' + col + '"]');
      for (var j = 0; j < cells.length; j++) cells[j].classList.toggle("col-hidden", !!hidden[col]);
    }
    try { window.localStorage.setItem(key, JSON.stringify(hidden)); } catch (e) { /* private mode */ }
  };
  for (var i = 0; i < boxes.length; i++) {
    boxes[i].addEventListener("change", function (ev) {
      var col = ev.target.getAttribute("data-column");
      if (ev.target.checked) delete hidden[col]; else hidden[col] = true;
      apply();
    });
  }
  var all = chooser.querySelector("[data-columns=all]");
  if (all) all.addEventListener("click", function () { hidden = {}; apply(); });
  apply();
})();

// The case page: j / k open the next / previous case (of the case table's filter and sort).
(function () {
  "use strict";
  var nav = document.getElementById("case-nav");
  if (!nav) return;
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.defaultPrevented) return;
    var t = ev.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    var link = ev.key === "j" ? nav.querySelector("a.next") : ev.key === "k" ? nav.querySelector("a.prev") : null;
    if (link) { ev.preventDefault(); window.location.href = link.href; }
  });
})();

// A long text shown in a box of limited height (a conversation message, a case text): a
// "show all" under each one that is clipped, to see it whole.
(function () {
  "use strict";
  var mark = function () {
    var boxes = document.querySelectorAll(".ev-text, pre.text, pre.json");
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      if (box.getAttribute("data-clip") || box.scrollHeight <= box.clientHeight + 4) continue;
      if (!box.offsetParent) continue;  // in a closed <details>: measured when opened
      box.setAttribute("data-clip", "1");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "link-button clip-toggle";
      var lines = Math.round(box.scrollHeight / Math.max(1, box.clientHeight) * 10) / 10;
      button.textContent = "show all (" + lines + "× the box)";
      button.setAttribute("aria-expanded", "false");
      button.addEventListener("click", (function (b, btn) {
        return function () {
          var open = b.classList.toggle("unclipped");
          btn.textContent = open ? "show less" : "show all";
          btn.setAttribute("aria-expanded", open ? "true" : "false");
        };
      })(box, button));
      box.insertAdjacentElement("afterend", button);
    }
  };
  mark();
  document.addEventListener("toggle", function () { mark(); }, true);
})();

// The compare-case page: the identical fields, hidden until asked for.
(function () {
  "use strict";
  var box = document.getElementById("diff-show-same");
  if (!box) return;
  box.addEventListener("change", function () {
    var rows = document.querySelectorAll("#diff-table tr.same");
    for (var i = 0; i < rows.length; i++) rows[i].classList.toggle("shown", box.checked);
  });
})();
