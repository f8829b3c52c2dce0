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
  // identical evidence blocks (same view, same content) of one case: shown once, "x N"
  function collapse() {
    var blocks = document.querySelectorAll('section.ev-result[data-ev-digest]');
    var first = {};
    for (var i = 0; i < blocks.length; i++) {
      var b = blocks[i];
      var scope = b.closest('[data-case-id]');
      var key = (scope ? scope.getAttribute('data-case-id') : '') + ' ' + b.getAttribute('data-ev-digest');
      var head = first[key];
      if (!head) { first[key] = {block: b, names: [b.getAttribute('data-metric')]}; continue; }
      head.names.push(b.getAttribute('data-metric'));
      var body = b.querySelector('.ev-body');
      if (body) { body.hidden = true; }
      var note = document.createElement('p');
      note.className = 'ev-hint ev-same';
      note.appendChild(document.createTextNode('The same evidence as '));
      var link = document.createElement('a');
      link.href = '#' + head.block.id;
      link.textContent = head.names[0];
      note.appendChild(link);
      note.appendChild(document.createTextNode(' (shown once).'));
      b.insertBefore(note, body);
    }
    for (var k in first) {
      if (!Object.prototype.hasOwnProperty.call(first, k) || first[k].names.length < 2) { continue; }
      var badge = document.createElement('span');
      badge.className = 'ev-chip ev-times';
      badge.textContent = '\u00d7' + first[k].names.length;
      badge.title = 'the same evidence for ' + first[k].names.join(', ');
      var h = first[k].block.querySelector('.ev-head');
      if (h) { h.appendChild(badge); }
    }
  }
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', collapse); } else { collapse(); }
})();
