// Mirrortree web view: the only script. Pages work without it; it adds two things.
// 1. A sign-in link carries the binding token in the URL fragment (never sent to a server);
//    the sign-in form is filled and posted, and the fragment is cleared from the address bar.
// 2. A streaming bud's text follows its acknowledged chunks, polled until the bud is final.
"use strict";

(function () {
  function signInFromFragment() {
    var match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
    var form = document.getElementById("login");
    if (!match) return;
    history.replaceState(null, "", window.location.pathname + window.location.search);
    if (!form) return;
    document.getElementById("token").value = decodeURIComponent(match[1]);
    form.submit();
  }

  function followBud(element) {
    var url = "/api/trees/" + encodeURIComponent(element.dataset.tree) +
      "/nodes/" + encodeURIComponent(element.dataset.bud);
    var card = element.closest("article");
    function poll() {
      fetch(url, { credentials: "same-origin", cache: "no-store" })
        .then(function (response) {
          if (response.status >= 400 && response.status < 500) {
            // Signed out, not this tree's, or gone: polling again cannot help.
            element.dataset.state = "unreadable";
            return null;
          }
          if (!response.ok) throw new Error(String(response.status));
          return response.json();
        })
        .then(function (node) {
          if (node === null) return;
          element.textContent = node.text;
          var chunks = card && card.querySelector(".chunks");
          if (chunks) chunks.textContent = String(node.acknowledged_chunks);
          element.dataset.state = node.state;
          if (node.state === "streaming") {
            window.setTimeout(poll, 400);
            return;
          }
          var badge = card && card.querySelector(".badge.state");
          if (badge) {
            badge.textContent = node.state + (node.stop_reason ? " (" + node.stop_reason + ")" : "");
            badge.className = "badge state state-" + node.state;
          }
          element.classList.remove("bud-text");
        })
        .catch(function () { window.setTimeout(poll, 2000); });
    }
    poll();
  }

  function start() {
    signInFromFragment();
    document.querySelectorAll("[data-bud]").forEach(followBud);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
