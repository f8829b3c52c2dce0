/* clineval case evidence: a fact row and its marked evidence light up together (hover, focus, click). */
(function () {
  if (window.__clinevalEvidence) { return; }
  window.__clinevalEvidence = true;
  function targets(el) {
    var ids = (el.getAttribute('data-ev-targets') || '').split(/\s+/);
    var out = [];
    for (var i = 0; i < ids.length; i++) {
      if (!ids[i]) { continue; }
      var t = document.getElementById(ids[i]);
      if (t) { out.push(t); }
    }
    return out;
  }
  function source(ev) {
    var el = ev.target;
    while (el && el !== document) {
      if (el.nodeType === 1 && el.hasAttribute('data-ev-targets')) { return el; }
      el = el.parentNode;
    }
    return null;
  }
  function set(el, on) {
    var ts = targets(el);
    for (var i = 0; i < ts.length; i++) {
      if (on) { ts[i].classList.add('ev-active'); } else { ts[i].classList.remove('ev-active'); }
    }
    if (on) { el.classList.add('ev-active'); } else { el.classList.remove('ev-active'); }
  }
  document.addEventListener('mouseover', function (ev) { var el = source(ev); if (el) { set(el, true); } });
  document.addEventListener('mouseout', function (ev) { var el = source(ev); if (el) { set(el, false); } });
  document.addEventListener('focusin', function (ev) { var el = source(ev); if (el) { set(el, true); } });
  document.addEventListener('focusout', function (ev) { var el = source(ev); if (el) { set(el, false); } });
  function jump(el) {
    var ts = targets(el);
    if (!ts.length) { return; }
    var t = ts[0];
    if (t.scrollIntoView) { t.scrollIntoView({block: 'nearest', behavior: 'smooth'}); }
    for (var i = 0; i < ts.length; i++) {
      ts[i].classList.remove('ev-flash');
      void ts[i].offsetWidth;
      ts[i].classList.add('ev-flash');
    }
  }
  document.addEventListener('click', function (ev) {
    var el = source(ev);
    if (el && !(ev.target.closest && ev.target.closest('a,summary,button'))) { jump(el); }
  });
  document.addEventListener('keydown', function (ev) {
    if (ev.key !== 'Enter') { return; }
    var el = source(ev);
    if (el) { jump(el); }
  });
})();
