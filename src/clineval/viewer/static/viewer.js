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
