/* "What to do" (site_src/partials/_what_to_do.md.j2): the select of server cores keeps the chosen core
   count's answer, configuration and table row, and hides the others. Without this script every table row
   shows, with the default core count's answer and configuration. */
(function () {
  "use strict";
  function wire(root) {
    root.querySelectorAll("div.connlab-advice").forEach(function (box) {
      var pick = box.querySelector(".connlab-advice__pick");
      var select = box.querySelector("select.connlab-advice__select");
      if (!pick || !select || select.dataset.wired) return;
      select.dataset.wired = "1";
      function show() {
        box.querySelectorAll("[data-cores]").forEach(function (part) {
          part.hidden = part.getAttribute("data-cores") !== select.value;
        });
      }
      pick.hidden = false;
      select.addEventListener("change", show);
      // A select the browser restored to an earlier choice (back and forward) shows that choice.
      show();
    });
  }
  // Material's instant navigation swaps the page without a load event: document$ fires on every page.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { wire(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { wire(document); });
  } else {
    wire(document);
  }
})();
