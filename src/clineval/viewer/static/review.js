// clineval view --review: the review panel of a case page, by keyboard or mouse.
//
// One question is highlighted; a digit answers it (and moves on), arrows and Tab move between
// questions, j / k go to the next / previous case, u undoes the last answer, c opens the
// comment, ? shows the keys. Every answer is POSTed at once, one after another in the order
// given, with the session's token; a question says "saved" only after the server's 200.
// Text from the server is only ever set with textContent (never innerHTML).
(function () {
  "use strict";
  var panel = document.getElementById("review-panel");
  if (!panel || !window.fetch) return;
  var tokenMeta = document.querySelector('meta[name="clineval-token"]');
  var token = tokenMeta ? tokenMeta.getAttribute("content") : "";
  var run = panel.getAttribute("data-run");
  var caseId = panel.getAttribute("data-case");
  var queue = panel.getAttribute("data-queue") || null;
  var blind = panel.getAttribute("data-blind") === "1";
  var revealed = panel.getAttribute("data-revealed") === "1";
  var revealedUrl = panel.getAttribute("data-revealed-url");
  var questions = Array.prototype.slice.call(panel.querySelectorAll(".rq"));
  var message = document.getElementById("rb-message");
  var help = document.getElementById("key-help");
  var helpButton = document.getElementById("rb-help");
  var current = -1;
  var chain = Promise.resolve(); // the writes, one after another
  var pending = 0;
  var warnedLeaving = false;

  var sayTimer = null;
  function say(text, kind) {
    if (!message) return;
    message.textContent = text || "";
    message.className = "rb-message" + (kind ? " " + kind : "");
    if (sayTimer) clearTimeout(sayTimer);
    sayTimer = kind === "error" || !text ? null : setTimeout(function () { say(""); }, 5000);
  }

  function setText(id, value) {
    var el = document.getElementById(id);
    if (el && value !== undefined && value !== null) el.textContent = String(value);
  }

  function status(q, text, kind) {
    var el = q.querySelector(".rq-status");
    el.textContent = text;
    el.className = "rq-status" + (kind ? " " + kind : "");
  }

  function isTyping(el) {
    if (!el) return false;
    var tag = el.tagName;
    return tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || el.isContentEditable;
  }

  function focusQuestion(i, scroll) {
    if (!questions.length) return;
    i = Math.max(0, Math.min(questions.length - 1, i));
    if (current >= 0 && questions[current]) questions[current].classList.remove("is-focused");
    current = i;
    var q = questions[i];
    q.classList.add("is-focused");
    if (!isTyping(document.activeElement) || !q.contains(document.activeElement)) {
      q.focus({ preventScroll: true });
    }
    if (scroll !== false) q.scrollIntoView({ block: "center", behavior: "auto" });
  }

  function indexOf(q) {
    return questions.indexOf(q);
  }

  function nextRequired(from) {
    for (var i = from + 1; i < questions.length; i++) {
      if (questions[i].hasAttribute("data-required")) return i;
    }
    return -1;
  }

  function firstOpen() {
    for (var i = 0; i < questions.length; i++) {
      var q = questions[i];
      if (q.hasAttribute("data-required") && !q.getAttribute("data-value")) return i;
    }
    return 0;
  }

  function find(item, scale) {
    for (var i = 0; i < questions.length; i++) {
      var q = questions[i];
      if (q.getAttribute("data-item") === item && q.getAttribute("data-scale") === scale) return q;
    }
    return null;
  }

  function select(q, value) {
    var buttons = q.querySelectorAll(".rq-opt");
    for (var i = 0; i < buttons.length; i++) {
      var on = value !== null && buttons[i].getAttribute("data-value") === value;
      buttons[i].classList.toggle("is-selected", on);
      buttons[i].classList.remove("is-pending");
      buttons[i].setAttribute("aria-pressed", on ? "true" : "false");
    }
    if (value === null) q.removeAttribute("data-value");
    else q.setAttribute("data-value", value);
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Clineval-Token": token },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.text().then(function (text) {
        var data = null;
        try { data = JSON.parse(text); } catch (e) { data = null; }
        if (!response.ok) {
          throw new Error((data && data.error) || ("HTTP " + response.status + " " + text.slice(0, 200)));
        }
        return data;
      });
    });
  }

  // run the writes in the order given; a failed one does not stop the next
  function enqueue(task) {
    pending++;
    var done = chain.then(task);
    chain = done.then(
      function () { pending--; },
      function () { pending--; }
    );
    return done;
  }

  function update(data) {
    if (!data) return;
    if (data.case) {
      setText("rb-answered", data.case.answered);
      setText("rb-required", data.case.required);
      if (data.case.complete && blind && !revealed) reveal();
    }
    if (data.queue) {
      setText("rb-done", data.queue.done);
      setText("rb-left", data.queue.left);
    }
  }

  function answer(q, value) {
    var buttons = q.querySelectorAll(".rq-opt");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].classList.toggle("is-pending", buttons[i].getAttribute("data-value") === value);
    }
    status(q, "saving…", "saving");
    q.setAttribute("data-failed", "1");
    var body = {
      run: run, "case": caseId, item: q.getAttribute("data-item"),
      scale: q.getAttribute("data-scale"), verdict: value, queue: queue
    };
    return enqueue(function () { return post("/api/review", body); }).then(
      function (data) {
        select(q, value);
        q.removeAttribute("data-failed");
        status(q, "saved", "ok");
        update(data);
      },
      function (error) {
        var pendingButtons = q.querySelectorAll(".rq-opt.is-pending");
        for (var k = 0; k < pendingButtons.length; k++) pendingButtons[k].classList.remove("is-pending");
        status(q, "not saved: " + error.message, "error");
        say("not saved: " + error.message, "error");
      }
    );
  }

  function saveComment(q) {
    var box = q.querySelector("textarea");
    var text = box.value;
    if (text === (box.getAttribute("data-saved") !== null ? box.getAttribute("data-saved") : box.defaultValue)) return;
    status(q, "saving…", "saving");
    q.setAttribute("data-failed", "1");
    var body = {
      run: run, "case": caseId, item: q.getAttribute("data-item"),
      scale: q.getAttribute("data-scale"), comment: text, queue: queue
    };
    enqueue(function () { return post("/api/review", body); }).then(
      function (data) {
        box.setAttribute("data-saved", text);
        q.removeAttribute("data-failed");
        status(q, text.trim() ? "saved" : "cleared", "ok");
        update(data);
      },
      function (error) {
        status(q, "not saved: " + error.message, "error");
        say("not saved: " + error.message, "error");
      }
    );
  }

  function undo() {
    say("undoing…");
    enqueue(function () {
      return post("/api/review/undo", { run: run, "case": caseId, queue: queue });
    }).then(
      function (data) {
        update(data);
        var changed = data && data.undone;
        if (!changed) { say("nothing to undo on this case"); return; }
        var q = find(changed.item, changed.scale);
        if (!q) { say("undone"); return; }
        if (q.getAttribute("data-kind") === "text") {
          var box = q.querySelector("textarea");
          box.value = changed.comment || "";
          box.setAttribute("data-saved", box.value);
        } else {
          select(q, changed.verdict);
        }
        q.removeAttribute("data-failed");
        status(q, changed.verdict || changed.comment ? "undone: back to the answer before" : "undone: no answer", "ok");
        say("undone");
        focusQuestion(indexOf(q));
      },
      function (error) { say("undo failed: " + error.message, "error"); }
    );
  }

  // the scores, once the case is answered (blind): a fragment the server escaped, parsed
  // without running anything in it; the judge's verdicts go beside their items
  function reveal() {
    revealed = true;
    panel.setAttribute("data-revealed", "1");
    fetch(revealedUrl, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var verdicts = doc.querySelectorAll("[data-judge-for]");
        for (var i = 0; i < verdicts.length; i++) {
          var item = verdicts[i].getAttribute("data-judge-for");
          var slots = panel.querySelectorAll(".rv-judge-slot");
          for (var k = 0; k < slots.length; k++) {
            if (slots[k].getAttribute("data-judge-slot") === item) {
              slots[k].replaceChildren(document.importNode(verdicts[i], true));
            }
          }
        }
        var list = doc.getElementById("judge-verdicts");
        if (list) list.remove();
        var hint = document.getElementById("blind-hint");
        if (hint) hint.remove();
        var body = doc.getElementById("revealed-body");
        var target = document.getElementById("revealed");
        if (body && target) target.replaceChildren(document.importNode(body, true));
        say("all answered: the scores are shown below", "ok");
      })
      .catch(function (error) {
        revealed = false;
        say("the scores could not be shown (" + error.message + "); reload the page", "error");
      });
  }

  function go(link) {
    if (!link) return;
    var href = link.getAttribute("href");
    if (!href) return;
    say(pending ? "saving…" : "");
    chain.then(function () {
      var failed = panel.querySelectorAll(".rq[data-failed]");
      if (failed.length && !warnedLeaving) {
        warnedLeaving = true;
        say(failed.length + " answer(s) not saved (marked); press again to leave anyway", "error");
        focusQuestion(indexOf(failed[0]));
        return;
      }
      window.location.href = href;
    });
  }

  function toggleHelp(show) {
    if (!help) return;
    var open = show === undefined ? help.hidden : show;
    help.hidden = !open;
    if (helpButton) helpButton.setAttribute("aria-expanded", open ? "true" : "false");
  }

  // mouse
  panel.addEventListener("click", function (event) {
    var button = event.target.closest(".rq-opt");
    var q = event.target.closest(".rq");
    if (!q) return;
    focusQuestion(indexOf(q), false);
    if (button) answer(q, button.getAttribute("data-value"));
  });
  panel.addEventListener("focusin", function (event) {
    var q = event.target.closest(".rq");
    if (q && indexOf(q) !== current) focusQuestion(indexOf(q), false);
  });
  panel.addEventListener("focusout", function (event) {
    if (event.target.tagName === "TEXTAREA") saveComment(event.target.closest(".rq"));
  });
  if (helpButton) helpButton.addEventListener("click", function () { toggleHelp(); });
  var initialComments = panel.querySelectorAll("textarea.rq-comment");
  for (var t = 0; t < initialComments.length; t++) initialComments[t].setAttribute("data-saved", initialComments[t].value);

  // keyboard
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented) return;
    var target = event.target;
    if (isTyping(target)) {
      if (event.key === "Escape") {
        event.preventDefault();
        var q = target.closest(".rq");
        target.blur(); // saves it (focusout)
        if (q) focusQuestion(indexOf(q), false);
      } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        var owner = target.closest(".rq");
        target.blur();
        if (owner) focusQuestion(indexOf(owner), false);
      }
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var key = event.key;
    if (key === "Tab") {
      var active = document.activeElement;
      if (active && active !== document.body && !panel.contains(active)) return; // a link in the header
      event.preventDefault();
      focusQuestion(current < 0 ? 0 : current + (event.shiftKey ? -1 : 1));
      return;
    }
    if (/^[1-9]$/.test(key)) {
      if (current < 0) focusQuestion(firstOpen());
      var here = questions[current];
      if (!here || here.getAttribute("data-kind") !== "choice") return;
      var options = here.querySelectorAll(".rq-opt");
      var n = parseInt(key, 10);
      if (n > options.length) {
        status(here, "no option " + n + " here (1-" + options.length + ")", "error");
        return;
      }
      event.preventDefault();
      answer(here, options[n - 1].getAttribute("data-value"));
      var next = nextRequired(current);
      if (next >= 0) focusQuestion(next);
      return;
    }
    switch (key) {
      case "ArrowDown":
        event.preventDefault();
        focusQuestion(current + 1);
        break;
      case "ArrowUp":
        event.preventDefault();
        focusQuestion(current - 1);
        break;
      case "j":
        event.preventDefault();
        go(document.getElementById("rb-next"));
        break;
      case "k":
        event.preventDefault();
        go(document.getElementById("rb-prev"));
        break;
      case "u":
        event.preventDefault();
        undo();
        break;
      case "c":
        var comment = panel.querySelector(".rq-text textarea");
        if (comment) {
          event.preventDefault();
          focusQuestion(indexOf(comment.closest(".rq")));
          comment.focus();
        }
        break;
      case "?":
        event.preventDefault();
        toggleHelp();
        break;
      case "Escape":
        toggleHelp(false);
        break;
      default:
        break;
    }
  });

  focusQuestion(firstOpen(), firstOpen() > 0);
})();
