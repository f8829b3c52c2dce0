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
