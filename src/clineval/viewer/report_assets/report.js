// clineval report: folds, printing and sortable tables (no dependencies; runs inline from a file on disk).
(function () {
  // Expand or collapse every folded block of a section.
  document.addEventListener('click', function (ev) {
    var b = ev.target.closest ? ev.target.closest('button[data-fold]') : null;
    if (!b) { return; }
    var scope = document.getElementById(b.getAttribute('data-scope')) || document;
    var open = b.getAttribute('data-fold') === 'open';
    var all = scope.querySelectorAll('details');
    for (var i = 0; i < all.length; i++) { all[i].open = open; }
  });
  // Fact tables open on the facts short of entailed (the switch above each table shows all):
  // a reader of a report comes for what went wrong, and a long correct text is all rows.
  var only = document.querySelectorAll('input.ev-only-problems');
  for (var k = 0; k < only.length; k++) { only[k].checked = true; }
  // Print everything: open the folds first.
  window.addEventListener('beforeprint', function () {
    var all = document.querySelectorAll('details');
    for (var i = 0; i < all.length; i++) { all[i].open = true; }
  });
  // Sortable tables: click a header (numbers sort as numbers, unscored and n/a last).
  function key(cell) {
    var v = cell.getAttribute('data-sort');
    if (v === null) { v = cell.textContent.trim(); }
    var n = parseFloat(v);
    return isNaN(n) || !/^[-+]?[0-9.]/.test(v) ? {n: null, s: v.toLowerCase()} : {n: n, s: v};
  }
  document.addEventListener('click', function (ev) {
    var th = ev.target.closest ? ev.target.closest('th.sortable') : null;
    if (!th) { return; }
    var table = th.closest('table');
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var asc = !th.classList.contains('sorted-asc');
    var heads = th.parentNode.children;
    for (var i = 0; i < heads.length; i++) { heads[i].classList.remove('sorted-asc', 'sorted-desc'); }
    th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.children[index]), y = key(b.children[index]);
      if (x.n === null && y.n === null) { return asc ? x.s.localeCompare(y.s) : y.s.localeCompare(x.s); }
      if (x.n === null) { return 1; }
      if (y.n === null) { return -1; }
      return asc ? x.n - y.n : y.n - x.n;
    });
    for (var j = 0; j < rows.length; j++) { body.appendChild(rows[j]); }
  });
})();
// A link to a folded case (#case-12 from the case table): open it.
(function () {
  function reveal() {
    var id = decodeURIComponent((window.location.hash || '').slice(1));
    var target = id ? document.getElementById(id) : null;
    var fold = target && target.querySelector ? target.querySelector('details.case-fold') : null;
    if (fold && !fold.open) { fold.open = true; target.scrollIntoView(); }
  }
  window.addEventListener('hashchange', reveal);
  reveal();
})();
